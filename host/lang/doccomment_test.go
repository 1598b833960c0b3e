package lang

import "testing"

// TestPipelineDoc: the comment lines right above a pipeline are its Doc; a blank line, an
// indented comment or code in between ends them.
func TestPipelineDoc(t *testing.T) {
	src := "\uFEFF# Fix a failing test.\n" +
		"#\n" +
		"#   Runs the suite first.\n" +
		"pipeline Fix(x: String) -> Result:\n" +
		"  x |> System.Value()\n" +
		"  # not about Two\n" +
		"pipeline Two() -> Result: \"a\" |> System.Value()\n" +
		"// about Three\r\n" +
		"//no space\r\n" +
		"pipeline Three() -> Result: \"a\" |> System.Value()\n" +
		"# far away\n" +
		"\n" +
		"pipeline Four() -> Result: \"a\" |> System.Value()\n" +
		"tool T : Bash() # trailing\n" +
		"pipeline Five() -> Result: \"a\" |> System.Value()\n" +
		"#\r" +
		"# old Mac line ends\r" +
		"pipeline Six() -> Result: \"a\" |> System.Value()\n"
	f, diags := Parse("doc.halo", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	want := map[string]string{
		"Fix":   "Fix a failing test.\n\n  Runs the suite first.",
		"Two":   "",
		"Three": "about Three\nno space",
		"Four":  "",
		"Five":  "",
		"Six":   "old Mac line ends",
	}
	seen := 0
	for _, d := range f.Decls {
		pd, ok := d.(*PipelineDecl)
		if !ok {
			continue
		}
		seen++
		if got := pd.Doc; got != want[pd.Name.Name] {
			t.Errorf("%s: Doc = %q, want %q", pd.Name.Name, got, want[pd.Name.Name])
		}
	}
	if seen != len(want) {
		t.Fatalf("parsed %d pipelines, want %d", seen, len(want))
	}
}
