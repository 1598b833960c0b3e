package lsp

import (
	"testing"

	"halolang.dev/halo/host/lang"
)

// A method name written between backquotes takes its backquotes' columns too: the place
// after the closing one is still on it, the one after that is not.
func TestIndexQuotedMethodWidth(t *testing.T) {
	src := "tool F : Workspace(\".\")\npipeline P(x: String) -> Result:\n  x |> F.`files.read`(path: x) |> F.list()\n"
	f, diags := lang.Parse("p.halo", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	x := newIndex(&lang.Program{Files: []*lang.File{f}})
	// Line 3: "  x |> F.`files.read`(...": the backquoted name starts at column 10 and is
	// 12 columns with its backquotes; F.list's "list" is 4.
	for _, tt := range []struct {
		col  int
		want string
	}{{10, "files.read"}, {22, "files.read"}, {23, ""}} {
		o, ok := x.at("p.halo", 3, tt.col)
		got := ""
		if ok && o.kind == occMethod {
			got = o.name
		}
		if got != tt.want {
			t.Errorf("column %d: method %q, want %q", tt.col, got, tt.want)
		}
	}
	for _, o := range x.occs {
		if o.kind == occMethod && o.name == "list" && o.width != 4 {
			t.Errorf("list is %d columns wide, want 4", o.width)
		}
	}
}
