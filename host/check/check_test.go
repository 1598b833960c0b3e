package check

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp"
)

var update = flag.Bool("update", false, "rewrite golden files")

func lockProviders(name string) bool { return name == "Stripe" }

// testConfig is what halo validate tells the checker (runtime.CheckConfig, which this package
// cannot import): the provider types of a registry with MCP as host/tool/mcp describes it
// (its declaration checks too), Workspace and Bash with their methods, and the package
// providers isProvider accepts; host/model's model providers.
func testConfig(isProvider func(string) bool, providers ...string) Config {
	return testConfigWith(nil, isProvider, providers...)
}

// testConfigWith is testConfig with the types extra in its registry too.
func testConfigWith(extra []tool.Type, isProvider func(string) bool, providers ...string) Config {
	reg := tool.NewRegistry()
	for _, t := range append([]tool.Type{
		mcp.Type(nil),
		{Name: "Bash", Kind: tool.KindBuiltin, Methods: []tool.Method{{Name: "run", Effect: tool.External}}},
		{Name: "Workspace", Kind: tool.KindBuiltin, Methods: []tool.Method{{Name: "read", Effect: tool.Read}, {Name: "write", Effect: tool.Write}, {Name: "list", Effect: tool.Read}}},
	}, extra...) {
		if err := reg.Add(t); err != nil {
			panic(err)
		}
	}
	names := providers
	for _, t := range reg.Types() {
		names = append(names, t.Name)
	}
	return Config{
		IsProvider: func(n string) bool { return reg.Has(n) || isProvider != nil && isProvider(n) },
		Providers:  names,
		CheckDeclaration: func(provider string, args []any, named map[string]any) []DeclProblem {
			var out []DeclProblem
			for _, p := range reg.CheckDeclaration(tool.Declaration{Provider: provider, Args: args, Named: named}) {
				out = append(out, DeclProblem{Option: p.Option, Message: p.Message})
			}
			return out
		},
		ChecksDeclaration: func(p string) bool {
			t, ok := reg.Lookup(p)
			return ok && t.Check != nil
		},
		ModelProvider: model.Canonical, ModelProviders: model.Spellings(), CanCallTools: model.SupportsTools,
		ToolMethods: func(p string) ([]tool.Method, bool) {
			t, ok := reg.Lookup(p)
			return t.Methods, ok && t.Methods != nil
		},
	}
}

// TestChecksDeclaration: only the declarations of a provider ChecksDeclaration names are
// handed to CheckDeclaration; with it nil, every one is.
func TestChecksDeclaration(t *testing.T) {
	src := "tool A : Bash(cwd: \"x\")\ntool B : Workspace(\"x\")\ntool C : Bash()\n"
	f, diags := lang.Parse("t.halo", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	var asked []string
	cfg := Config{CheckDeclaration: func(provider string, args []any, named map[string]any) []DeclProblem {
		asked = append(asked, provider)
		return []DeclProblem{{Message: "bad"}}
	}}
	prog := &lang.Program{Files: []*lang.File{f}}
	if got := Check(prog, cfg); len(got) != 3 || fmt.Sprint(asked) != "[Bash Workspace Bash]" {
		t.Fatalf("without ChecksDeclaration: asked %v, diagnostics %v", asked, got)
	}
	asked = nil
	cfg.ChecksDeclaration = func(p string) bool { return p == "Workspace" }
	got := Check(prog, cfg)
	if fmt.Sprint(asked) != "[Workspace]" || len(got) != 1 || got[0].Code != CodeToolConfig || got[0].Pos.Line != 2 {
		t.Fatalf("asked %v, diagnostics %v; want Workspace's alone", asked, got)
	}
}

// TestExamplesValidate: the examples folder, as one program, has no diagnostic at all.
func TestExamplesValidate(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.halo")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	prog, diags := lang.Load("", files)
	diags = append(diags, Check(prog, examplesConfig())...)
	for _, d := range diags {
		t.Errorf("%s", d)
	}
}

// examplesConfig is builtinConfig with the stores (File, VectorStore) too, as halo validate
// has them: checked by their own options, without a project folder to match patterns in.
func examplesConfig() Config { return builtinConfigWith(store.Types(nil)...) }

// TestGoldenDiagnostics checks each broken file in testdata/bad against the diagnostics its
// .golden file lists (go test -update rewrites them; review the diff).
func TestGoldenDiagnostics(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad/*.halo")
	if len(files) == 0 {
		t.Fatal("no testdata/bad files")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			f, diags := lang.Parse(filepath.Base(name), src)
			diags = append(diags, Check(&lang.Program{Files: []*lang.File{f}}, testConfig(lockProviders, "Stripe"))...)
			var b strings.Builder
			for _, d := range diags {
				b.WriteString(d.String() + "\n")
			}
			golden := strings.TrimSuffix(name, ".halo") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("diagnostics differ from %s:\n%s", golden, b.String())
			}
		})
	}
}

// TestSeedSnippets: each seed snippet, completed, validates clean on its own, but for the
// holes halo validate is there to show in the seed's own tool policies (issue 27 item 9):
// FixerTools denies Code.write of test files and leaves Code.edit of them open, and the
// seed's second tool policy allows a method Workspace does not have and hides what it then
// asks to approve.
func TestSeedSnippets(t *testing.T) {
	files, _ := filepath.Glob("../lang/testdata/seeds/*.halo")
	if len(files) == 0 {
		t.Fatal("no seed snippets")
	}
	seedHole := `warning: DenyArgs("Code.write", "path", "\\.test\\.") guards Code.write, but Code.edit also takes "path" and nothing guards it`
	expected := map[string][]string{
		"agents-tools-fixer.halo": {"6:5: " + seedHole},
		"policies-tools.halo": {
			"4:5: " + seedHole,
			`8:43: warning: ApproveTools("Code.write", "*.delete", "*", "Code") never applies to "Code.write"`,
			`8:43: warning: ApproveTools("Code.write", "*.delete", "*", "Code") never applies to "Code"`,
			`10:5: warning: AllowTools("Tests.run", "Code.list_pull_requests") never applies to "Tests.run"`,
			`10:29: warning: Code has no method list_pull_requests`,
		},
	}
	cfg := builtinConfig()
	cfg.IsProvider = func(name string) bool {
		return name == "Stripe" || name == "Jira" || name == "Workspace" || name == "Bash" || name == "MCP"
	}
	for _, name := range files {
		prog, diags := lang.Load("", []string{name})
		diags = append(diags, Check(prog, cfg)...)
		want := expected[filepath.Base(name)]
		for i, d := range diags {
			if i >= len(want) || !strings.Contains(d.String(), want[i]) {
				t.Errorf("%s", d)
			}
		}
		if len(diags) < len(want) {
			t.Errorf("%s: %d diagnostics, want %d: %v", name, len(diags), len(want), diags)
		}
	}
}

// A name that did not resolve is reported once: `equips Doc` is the error, and `tools:
// [Docs]` on a call, which would say the agent does not equip Docs and suggest the typo, is
// not reported. The suggestion is the replacement an editor offers, apart from the message.
func TestUnresolvedNameReportedOnce(t *testing.T) {
	src := `tool Docs : Workspace(root: ".")
agent Librarian [openai/gpt-4o]
  equips Doc
pipeline P(q: String) -> String:
  q
    |> Librarian.answer(q, tools: [Docs])
`
	f, diags := lang.Parse("a.halo", []byte(src))
	diags = append(diags, Check(&lang.Program{Files: []*lang.File{f}}, testConfig(nil))...)
	if len(diags) != 1 {
		t.Fatalf("want one diagnostic, got %d:\n%v", len(diags), diags)
	}
	d := diags[0]
	if d.Message != "undeclared tool Doc" || d.Help != "did you mean Docs?" || len(d.Suggestions) != 1 || d.Suggestions[0].Replacement != "Docs" {
		t.Fatalf("got %+v", d)
	}
	if d.String() != "a.halo:3:10: error: undeclared tool Doc; did you mean Docs? [UNDECLARED]" {
		t.Errorf("one-line form: %s", d)
	}
	diags.Locate(func(string) ([]byte, bool) { return []byte(src), true })
	off := strings.Index(src, "Doc\n")
	if d := diags[0]; d.Start == nil || d.Start.Offset != off || d.End.Offset != off+3 || d.End.Column != 13 ||
		d.Suggestions[0].Start.Offset != off || d.Suggestions[0].End.Offset != off+3 {
		t.Errorf("span: %+v %+v; suggestion %+v", d.Start, d.End, d.Suggestions[0])
	}
}

// A suggestion replaces the diagnostic's span only when the span is the name: a template
// inside a string says the near name without offering a replacement of the whole string,
// and a model provider's replacement is the whole id.
func TestSuggestionsFitTheirSpan(t *testing.T) {
	src := `agent W [opnai/gpt-4o]
pipeline P(topic: String) -> String:
  topic
    |> W.write("about {{topc}}")
`
	f, diags := lang.Parse("a.halo", []byte(src))
	diags = append(diags, Check(&lang.Program{Files: []*lang.File{f}}, testConfig(nil))...)
	diags.Locate(func(string) ([]byte, bool) { return []byte(src), true })
	var model, tmpl *lang.Diagnostic
	for i, d := range diags {
		switch d.Code {
		case CodeUnknownProvider:
			model = &diags[i]
		case CodeUndeclared:
			tmpl = &diags[i]
		}
	}
	if model == nil || len(model.Suggestions) != 1 || model.Suggestions[0].Replacement != "openai/gpt-4o" || src[model.Start.Offset:model.End.Offset] != "opnai/gpt-4o" {
		t.Errorf("model: %+v", model)
	}
	if tmpl == nil || tmpl.Help != "did you mean topic?" || len(tmpl.Suggestions) != 0 {
		t.Errorf("template: %+v", tmpl)
	}
}
