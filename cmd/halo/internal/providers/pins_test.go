package providers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp"
)

type nopProvider struct{}

func (nopProvider) Methods(context.Context) ([]tool.Method, error) { return nil, nil }
func (nopProvider) Call(context.Context, tool.Request) (json.RawMessage, error) {
	return nil, nil
}
func (nopProvider) Close() error { return nil }

// Every MCP provider type is held to the project's pins, MCP(...) and mcp packages alike,
// unless halo.json says "pinMcp": false; other kinds are left alone.
func TestPinMCPWrapsEveryMCPType(t *testing.T) {
	dir := t.TempDir()
	open := func(context.Context, tool.Declaration) (tool.Provider, error) { return nopProvider{}, nil }
	reg := tool.NewRegistry()
	for _, typ := range []tool.Type{
		{Name: "MCP", Kind: tool.KindMCP, Open: open},
		{Name: "GitHubMCP", Kind: tool.KindMCP, Package: "github-mcp", Open: open},
		{Name: "Stripe", Kind: tool.KindHTTP, Package: "stripe", Open: open},
	} {
		if err := reg.Add(typ); err != nil {
			t.Fatal(err)
		}
	}
	kinds := func(reg *tool.Registry) map[string]bool {
		out := map[string]bool{}
		for _, name := range []string{"MCP", "GitHubMCP", "Stripe"} {
			p, err := reg.Open(context.Background(), tool.Declaration{Name: "X", Provider: name})
			if err != nil {
				t.Fatal(err)
			}
			_, pinned := p.(*mcp.PinnedProvider)
			out[name] = pinned
		}
		return out
	}
	got, err := pinMCP(reg, dir, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := kinds(got); !k["MCP"] || !k["GitHubMCP"] || k["Stripe"] {
		t.Errorf("pinned: %v", k)
	}
	os.WriteFile(filepath.Join(dir, "halo.json"), []byte(`{"name":"x","pinMcp":false}`), 0o644)
	got, err = pinMCP(reg, dir, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := kinds(got); k["MCP"] || k["GitHubMCP"] {
		t.Errorf("pinned although pinMcp is false: %v", k)
	}
	os.WriteFile(filepath.Join(dir, "halo.json"), []byte(`{"pinMcp": "no"}`), 0o644)
	if _, err := pinMCP(reg, dir, "", "", nil); err == nil {
		t.Errorf("a bad halo.json was accepted")
	}
}

// Sandboxed MCP servers get their own folders in the user's state folder, found from the
// environment handed in; none when it names no place.
func TestMCPFolders(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the folders of other systems are found from other variables")
	}
	for _, tt := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/halo/mcp"},
		{map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/state"}, "/state/halo/mcp"},
		{map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "relative"}, "/home/u/.local/state/halo/mcp"},
		{map[string]string{"HOME": "relative"}, ""},
		{nil, ""},
	} {
		if got := MCPFolders(cmdutil.Env(tt.env)); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.env, got, tt.want)
		}
	}
}
