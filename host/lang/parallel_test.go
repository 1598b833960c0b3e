package lang

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"halolang.dev/halo/internal/bigprog"
)

// sameParallel parses src serially and in n parts, by two goroutines and by n, and fails t
// when the parts parse reports it did and its tree or its diagnostics differ from the
// serial ones. It reports whether the parts parse went ahead.
func sameParallel(t *testing.T, name string, src []byte, n int) bool {
	t.Helper()
	want, wantDiags := parseSerial(name, src, nil, nil)
	for _, procs := range []int{2, n} {
		if !sameParts(t, name, src, procs, n, want, wantDiags) {
			return false
		}
	}
	return true
}

// sameParts is sameParallel for one number of goroutines.
func sameParts(t *testing.T, name string, src []byte, procs, n int, want *File, wantDiags Diagnostics) bool {
	t.Helper()
	got, diags, ok := parseParallel(name, src, procs, n, 0)
	if !ok {
		return false
	}
	if !reflect.DeepEqual(diags, wantDiags) {
		t.Fatalf("%s in %d parts: diagnostics\n%v\nwant\n%v", name, n, diags, wantDiags)
	}
	if !reflect.DeepEqual(got, want) {
		var g, w bytes.Buffer
		_ = Dump(&g, got)
		_ = Dump(&w, want)
		t.Fatalf("%s in %d parts: the tree differs from the serial parse's\n got %.2000s\nwant %.2000s", name, n, g.String(), w.String())
	}
	return true
}

// TestParseParallel: a large file parsed in parts on several goroutines gives the tree and
// the diagnostics of the serial parse, doc comments included; a file the parts cannot
// reproduce exactly (maxDiags problems or more, a part ending inside brackets, '\r' line
// ends) is parsed serially.
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
	f, _, _ := parseParallel("doc.halo", doc, 2, 5, 0)
	if pd, ok := f.Decls[1].(*PipelineDecl); !ok || pd.Doc != "Fix does\nthe fix." {
		t.Fatalf("doc comment lost: %#v", f.Decls[1])
	}
	// bad puts a declaration that does not parse before the policies of the blocks numbered.
	bad := func(blocks ...int) []byte {
		src := append([]byte(nil), big...)
		for _, n := range blocks {
			at := fmt.Sprintf("\npolicy Rules%d :", n)
			src = bytes.Replace(src, []byte(at), []byte("\npipeline Bad(x: String) -> :"+at), 1)
		}
		return src
	}
	many := make([]int, maxDiags+10)
	for i := range many {
		many[i] = i * 5
	}
	inParts := map[string][]byte{
		"errors in several parts": bad(5, 300, 301, 600, 845),
		"error at the end":        append(append([]byte(nil), big...), "\npipeline P(x: String) -> :\n"...),
	}
	for name, src := range inParts {
		if !sameParallel(t, name, src, 4) {
			t.Errorf("%s: not parsed in parts", name)
		}
		if _, diags := Parse(name, src); len(diags) == 0 {
			t.Errorf("%s: no diagnostics", name)
		}
	}
	serial := map[string][]byte{
		"too many errors": bad(many...),
		"open bracket":    append([]byte("schema S {\n  a: String\n"), big...),
		"crlf":            bytes.ReplaceAll(big, []byte("\n"), []byte("\r\n")),
	}
	for name, src := range serial {
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
