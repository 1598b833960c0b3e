package lang

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"halolang.dev/halo/internal/bigprog"
)

// sameParallel parses src serially and in n parts at once, and fails t when the parts
// parse reports it did and its tree differs from the serial one, or when it did although
// the serial parse reported problems. It reports whether the parts parse went ahead.
func sameParallel(t *testing.T, name string, src []byte, n int) bool {
	t.Helper()
	want, diags := parseSerial(name, src, nil, nil)
	got, ok := parseParallel(name, src, n, 0)
	if !ok {
		return false
	}
	if len(diags) > 0 {
		t.Fatalf("%s in %d parts: parsed in parts although the serial parse reports %v", name, n, diags)
	}
	if !reflect.DeepEqual(got, want) {
		var g, w bytes.Buffer
		_ = Dump(&g, got)
		_ = Dump(&w, want)
		t.Fatalf("%s in %d parts: the tree differs from the serial parse's\n got %.2000s\nwant %.2000s", name, n, g.String(), w.String())
	}
	return true
}

// TestParseParallel: a large file parsed in parts on several goroutines gives the tree of
// the serial parse, doc comments included; a file the parts cannot reproduce exactly (a
// problem to report, a part ending inside brackets, '\r' line ends) is parsed serially,
// with the serial diagnostics.
func TestParseParallel(t *testing.T) {
	big := bigprog.Generate(1 << 20)
	for _, n := range []int{2, 3, 4, 7, 64} {
		if !sameParallel(t, "big.halo", big, n) {
			t.Fatalf("the 1 MB program was not parsed in %d parts", n)
		}
	}
	doc := []byte(strings.Repeat("tool Code: mcp(\"code\")\n\n# Fix does\n# the fix.\npipeline Fix(x: String) -> Result:\n  Code.run(x)\n    |> Code.run(x)\n// also\nschema S {\n  a: String\n}\n", 200))
	if !sameParallel(t, "doc.halo", doc, 5) {
		t.Fatal("the doc-comment program was not parsed in parts")
	}
	atComment := false
	for n := 2; n < 40; n++ {
		for _, c := range splitDecls(doc, n) {
			atComment = atComment || doc[c.off] == '#' || doc[c.off] == '/'
		}
		sameParallel(t, "doc.halo", doc, n)
	}
	if !atComment {
		t.Fatal("no part of the doc-comment program starts at its comments")
	}
	f, _ := parseParallel("doc.halo", doc, 5, 0)
	if pd, ok := f.Decls[1].(*PipelineDecl); !ok || pd.Doc != "Fix does\nthe fix." {
		t.Fatalf("doc comment lost: %#v", f.Decls[1])
	}
	broken := map[string][]byte{
		"error at the end":   append(append([]byte(nil), big...), "\npipeline P(x: String) -> :\n"...),
		"error in the first": append([]byte("tool T: mcp(\n"), big...),
		"open bracket":       append([]byte("schema S {\n  a: String\n"), big...),
		"crlf":               bytes.ReplaceAll(big, []byte("\n"), []byte("\r\n")),
	}
	for name, src := range broken {
		if sameParallel(t, name, src, 4) {
			t.Errorf("%s: parsed in parts", name)
		}
		// Parse goes serial for it and reports what the serial parse reports.
		f1, d1 := Parse(name, src)
		f2, d2 := parseSerial(name, src, nil, nil)
		if !reflect.DeepEqual(d1, d2) || !reflect.DeepEqual(f1, f2) {
			t.Errorf("%s: Parse differs from the serial parse: %v / %v", name, d1, d2)
		}
	}
	eachFile(t, []string{"../../examples/*.halo", "testdata/*/*.halo"}, func(name string, src []byte) {
		for _, n := range []int{2, 3, 8} {
			sameParallel(t, name, src, n)
		}
	})
}
