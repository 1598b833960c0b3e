package lang

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFormatExamples formats every example and test file of the language: the result
// parses to the same program, and formatting it again changes nothing.
func TestFormatIdempotentOnTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.halo")
	ex, _ := filepath.Glob("../../examples/*.halo")
	files = append(files, ex...)
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, diags := Parse(name, src); diags.HasErrors() {
			continue
		}
		out, diags := Format(name, src)
		if diags != nil {
			t.Errorf("%s: %v", name, diags)
			continue
		}
		again, diags := Format(name, out)
		if diags != nil || string(again) != string(out) {
			t.Errorf("%s: not idempotent:\n%s\n---\n%s", name, out, again)
		}
	}
}

// The examples are formatted: halo fmt examples/ changes nothing.
func TestExamplesAreFormatted(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.halo")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if out, diags := Format(name, src); diags != nil || string(out) != string(src) {
			t.Errorf("%s is not formatted (run halo fmt examples): %v\n%s", name, diags, out)
		}
	}
}

// Format's layout, comments included, on small inputs.
func TestFormatLayout(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"tool   A:Workspace( root :\".\" )\n", "tool A : Workspace(root: \".\")\n"},
		{"policy P:A()&&B(x)\n   &   C()\n", "policy P : A() & B(x)\n  & C()\n"},
		{"agent A [openai/gpt-4o,temp:0.2] equips T,U requires P", "agent A [openai/gpt-4o, temp: 0.2]\n  equips T, U\n  requires P\n"},
		{"schema S {a:String,b:Array < String >}", "schema S { a: String, b: Array<String> }\n"},
		{"pipeline P(x:String)->String: x|>A.b(x)as y @retry(1)|?System.Value(\"\")", "pipeline P(x: String) -> String:\n  x\n    |> A.b(x) as y @retry(1)\n    |? System.Value(\"\")\n"},
		{"\n\n# top\n\n\n\n// doc\npipeline P(x: String) -> String:\n  x # start\n      # before a stage\n    |> A.b(\n   x, # first\n  y)\n\n\n# end\n", "# top\n\n// doc\npipeline P(x: String) -> String:\n  x # start\n    # before a stage\n    |> A.b(\n      x, # first\n      y)\n\n# end\n"},
		{"pipeline P(x: String) -> String:\r\n  x |> branch { \"x\": A.b()\r\n |> C.d()\r\n else: E.f() }\r\n", "pipeline P(x: String) -> String:\n  x\n    |> branch { \"x\": A.b()\n        |> C.d()\n      else: E.f() }\n"},
	} {
		out, diags := Format("f.halo", []byte(tt.in))
		if diags != nil || string(out) != tt.want {
			t.Errorf("Format(%q) =\n%s\nwant\n%s%v", tt.in, out, tt.want, diags)
		}
	}
	if out, diags := Format("f.halo", []byte("tool A : (")); out != nil || !diags.HasErrors() || diags[0].Code != CodeSyntax {
		t.Errorf("a file that does not parse: %q %v", out, diags)
	}
}

// BenchmarkFormatExamples is lang.Format of every example, beside their parse alone.
func BenchmarkFormatExamples(b *testing.B) {
	files, _ := filepath.Glob("../../examples/*.halo")
	var srcs [][]byte
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	b.Run("floor-parse", func(b *testing.B) {
		for b.Loop() {
			for _, src := range srcs {
				Parse("f.halo", src)
			}
		}
	})
	b.Run("format", func(b *testing.B) {
		for b.Loop() {
			for _, src := range srcs {
				if _, diags := Format("f.halo", src); diags != nil {
					b.Fatal(diags)
				}
			}
		}
	})
}

// sameProgram, the check Format makes before it returns, sees a change of any value, name,
// kind of node or doc comment, and no change of place.
func TestSameProgram(t *testing.T) {
	parse := func(s string) *File { f, _ := Parse("f.halo", []byte(s)); return f }
	base := "# doc\npipeline P(x: String) -> String:\n  x\n    |> A.b(x, n: 1) as y\n"
	if !sameProgram(parse(base), parse("\n\n"+base)) {
		t.Error("moving the file down two lines changed its program")
	}
	for _, other := range []string{
		"# doc\npipeline P(x: String) -> String:\n  x\n    |> A.b(x, n: 2) as y\n",
		"# doc\npipeline P(x: String) -> String:\n  x\n    |> A.b(x, m: 1) as y\n",
		"# doc\npipeline P(x: String) -> String:\n  x\n    |? A.b(x, n: 1) as y\n",
		"# other\npipeline P(x: String) -> String:\n  x\n    |> A.b(x, n: 1) as y\n",
		"# doc\npipeline P(x: String) -> String:\n  x\n    |> A.b(x, n: \"1\") as y\n",
	} {
		if sameProgram(parse(base), parse(other)) {
			t.Errorf("%q is taken for the same program as %q", other, base)
		}
	}
}
