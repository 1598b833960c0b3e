package tools

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/halo-lang/halo/cmd/halo/internal/providers"
	"github.com/halo-lang/halo/host/tool"
	"github.com/halo-lang/halo/host/tool/sandbox"
)

func fakeSet(t *testing.T, status sandbox.Status) func() (*providers.Set, error) {
	reg := tool.NewRegistry()
	err := reg.Add(tool.Type{Name: "Notes", Kind: tool.KindHTTP, Package: "notes-pkg", Description: "Notes", Methods: []tool.Method{
		{Name: "get", Effect: tool.Read, Params: json.RawMessage(`{"type":"object","properties":{"zeta":{},"alpha":{}},"required":["zeta"]}`), Description: "Get a note. More text."},
		{Name: "put", Effect: tool.Write, Params: json.RawMessage(`{"type":"object"}`)},
		{Name: "post", Description: "No effect declared"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return func() (*providers.Set, error) { return &providers.Set{Registry: reg, Sandbox: status}, nil }
}

func TestListingText(t *testing.T) {
	cases := []struct {
		name   string
		color  bool
		status sandbox.Status
		want   []string
		not    []string
	}{
		{
			name:   "plain",
			status: sandbox.Status{ABI: 6, Files: true, TCP: true, Scoped: true},
			want: []string{
				"Notes (package notes-pkg)\n",
				// Parameters in the schema's order (not sorted), optional ones marked.
				"  get(zeta, alpha?)  read      Get a note.\n",
				"  put()              write     \n",
				// No declared effect is external.
				"  post()             external  No effect declared\n",
				"\nsandbox: Landlock ABI 6 confines files",
			},
			not: []string{"\x1b["},
		},
		{
			name:   "coloured by effect",
			color:  true,
			status: sandbox.Status{Reason: "no Landlock"},
			want: []string{
				"\x1b[32mread    \x1b[0m",
				"\x1b[33mwrite   \x1b[0m",
				"\x1b[31mexternal\x1b[0m",
				"\x1b[31msandbox: NOT ENFORCED: no Landlock",
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := toolsRun(&Options{Out: &out, Color: c.color, Build: fakeSet(t, c.status)})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range c.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("output has %q:\n%s", n, out.String())
				}
			}
		})
	}
}

func TestListingJSON(t *testing.T) {
	var out bytes.Buffer
	if err := toolsRun(&Options{Out: &out, JSON: true, Build: fakeSet(t, sandbox.Status{OS: "darwin", Reason: "Linux only"})}); err != nil {
		t.Fatal(err)
	}
	var l Listing
	if err := json.Unmarshal(out.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Providers) != 1 || l.Providers[0].Methods[2].Effect != tool.External || l.Sandbox.OS != "darwin" || l.Sandbox.Files {
		t.Fatalf("listing = %+v", l)
	}
}
