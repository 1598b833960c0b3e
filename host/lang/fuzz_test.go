package lang

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzParse: any byte sequence gets a File and diagnostics, never a panic or a hang, and
// every diagnostic points inside the input; parsed in parts at once, it gives the serial
// tree or goes serial.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../../examples/*.halo", "testdata/*/*.halo"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("agent A [ollama/llama3.1:8b, tools: [\n"))
	f.Add([]byte("pipeline P(x: Array<Array<String>>) -> Result:\n  x |* { A.b(), C.d(\"\\u00e9\") } @retry(1)"))
	f.Add([]byte("pipeline P(x: List) -> Result:\n  x |* each u: A.b(u) @limit(2) |? B.c()\n    |> branch { \"u > 1\": |> branch { else: C.d() }, else: |! yield(\"q\") } as z"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, diags := Parse("f.halo", src)
		if file == nil {
			t.Fatal("nil file")
		}
		lines := bytes.Count(src, []byte("\n")) + bytes.Count(src, []byte("\r")) + 1
		for _, d := range diags {
			if d.Line < 1 || int(d.Line) > lines || d.Col < 1 || int(d.Col) > utf8.RuneCount(src)+1 {
				t.Fatalf("diagnostic outside the input (%d lines): %s", lines, d)
			}
			if d.Severity != Error || d.Code == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		var buf bytes.Buffer
		if err := Dump(&buf, file); err != nil {
			t.Fatal(err)
		}
		sameParallel(t, "f.halo", src, 3)
	})
}

// FuzzFormat: formatting never changes what a file parses to (Format checks it, and says so
// instead of returning other text) and formatting twice changes nothing; a file that does
// not parse is refused.
func FuzzFormat(f *testing.F) {
	for _, glob := range []string{"../../examples/*.halo", "testdata/*/*.halo"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("# doc\npipeline P(x: List) -> Result: x |* each u: A.b(u, # c\n  [1, 2,]) @limit(2) |? B.c()\n    |> branch { \"u > 1\": |> branch { else: C.d() }, else: |! yield(\"q\") } as z\n"))
	f.Add([]byte("schema S {\n a: String\n\n\n    b: Array<String> }\npolicy P : A() && B(\"x\")\n# end"))
	f.Fuzz(func(t *testing.T, src []byte) {
		_, pdiags := Parse("f.halo", src)
		out, diags := Format("f.halo", src)
		if pdiags.HasErrors() {
			if out != nil || !diags.HasErrors() {
				t.Fatalf("a file that does not parse was formatted")
			}
			return
		}
		if diags != nil {
			t.Fatalf("%v\n%q", diags, src)
		}
		again, diags := Format("f.halo", out)
		if diags != nil || !bytes.Equal(again, out) {
			t.Fatalf("formatting twice changed it:\n%q\n%q\n%v", out, again, diags)
		}
	})
}
