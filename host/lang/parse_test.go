package lang

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestExamplesParse: every example and every seed snippet parses without a diagnostic.
func TestExamplesParse(t *testing.T) {
	eachFile(t, []string{"../../examples/*.halo", "testdata/seeds/*.halo"}, func(name string, src []byte) {
		f, diags := Parse(name, src)
		for _, d := range diags {
			t.Errorf("%s", d)
		}
		if len(f.Decls) == 0 {
			t.Errorf("%s: no declarations", name)
		}
	})
}

// eachFile calls fn with each file the globs match, and fails t when they match none.
func eachFile(t *testing.T, globs []string, fn func(name string, src []byte)) {
	t.Helper()
	var files []string
	for _, glob := range globs {
		m, _ := filepath.Glob(glob)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %v", globs)
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		fn(name, src)
	}
}

// TestGoldenAST compares the printed tree of each testdata/ast/*.halo with its .golden file.
func TestGoldenAST(t *testing.T) {
	files, _ := filepath.Glob("testdata/ast/*.halo")
	syntax, _ := filepath.Glob("testdata/syntax/*.halo")
	files = append(files, syntax...)
	if len(files) == 0 {
		t.Fatal("no testdata/ast files")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, diags := Parse(filepath.Base(name), src)
			var buf bytes.Buffer
			if err := Dump(&buf, f); err != nil {
				t.Fatal(err)
			}
			for _, d := range diags {
				buf.WriteString(d.String() + "\n")
			}
			golden := strings.TrimSuffix(name, ".halo") + ".golden"
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("tree differs from %s (run go test -update and review the diff):\n%s", golden, got)
			}
		})
	}
}
