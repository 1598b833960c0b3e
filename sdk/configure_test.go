package sdk_test

import (
	"context"
	"slices"
	"testing"

	"halolang.dev/halo/sdk"
	"halolang.dev/halo/sdk/sdktest"
)

// notes is the provider of docs/plugins.md's "Configuration per declaration", word for word
// in its Configure (the repository's TestDocsGoSnippets checks that the guide shows this
// code): Notes("./notes", write: true).
type notesConfig struct {
	Root  string `json:"root"`
	Write bool   `json:"write"`
}

type pathParams struct {
	Path string `json:"path"`
}

func notes() sdk.Provider {
	read := func(c *sdk.Call, p pathParams) (string, error) {
		cfg := sdk.StateOf[notesConfig](c)
		return cfg.Root + "/" + p.Path, nil
	}
	write := func(c *sdk.Call, p pathParams) (bool, error) { return sdk.StateOf[notesConfig](c).Write, nil }
	return sdk.Provider{
		Name:        "Notes",
		Description: "Notes in a folder",
		Methods: []sdk.Method{
			sdk.NewMethod("read", "Reads a note.", sdk.Read, read),
			sdk.NewMethod("list", "Lists notes.", sdk.Read, read),
			sdk.NewMethod("search", "Searches notes.", sdk.Read, read),
			sdk.NewMethod("write", "Writes a note.", sdk.Write, write),
		},
		Configure: func(ctx context.Context, d sdk.Declaration) (sdk.Instance, error) {
			var cfg notesConfig
			if err := d.Decode(&cfg, "root"); err != nil { // the first positional argument is root
				return sdk.Instance{}, err
			}
			inst := sdk.Instance{State: cfg}
			if !cfg.Write {
				inst.Methods = []string{"read", "list", "search"} // hide the writing methods
			}
			return inst, nil
		},
	}
}

func TestConfigureGuide(t *testing.T) {
	c := sdktest.Start(t, notes())
	ro := c.Tool("Notes", nil, "./notes")
	var names []string
	for _, m := range ro.Methods() {
		names = append(names, m.Name)
	}
	if slices.Contains(names, "write") || len(names) != 3 {
		t.Errorf("a read-only declaration offers %v", names)
	}
	var got string
	if err := ro.Call("read", map[string]any{"path": "a.md"}).Decode(&got); err != nil || got != "./notes/a.md" {
		t.Errorf("read = %q, %v", got, err)
	}
	rw := c.Tool("Notes", map[string]any{"write": true}, "./notes")
	if len(rw.Methods()) != 4 {
		t.Errorf("write: true offers %d methods", len(rw.Methods()))
	}
	if _, err := c.Configure("Notes", map[string]any{"colour": "red"}); err == nil {
		t.Error("an unknown argument was accepted")
	}
}
