package lang

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestTemplates(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"no templates", nil},
		{"{{workdir}}", []string{"workdir"}},
		{"in {{ repo }} and {{repo}} then {{b}}", []string{"repo", "b"}},
		{"{{context.data.x}}", []string{"context.data.x"}},
		{"unclosed {{name", nil},
		{"{{}} empty", nil},
	}
	for _, tt := range tests {
		if got := Templates(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Templates(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPositions: lines and columns count runes, whatever the line ends and indentation.
func TestPositions(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // the first diagnostic's position
	}{
		{"tab", "tool A : Bash(\n\tx: ?)", "f.halo:2:5"},
		{"multibyte", "tool A : Bash(x: \"ééé\" ?)", "f.halo:1:24"},
		{"crlf", "tool A : Bash()\r\n\r\ntool B : Bash(x: ?)", "f.halo:3:18"},
		{"cr only", "tool A : Bash()\rtool B : Bash(x: ?)", "f.halo:2:18"},
		{"bom", "\ufefftool A : Bash(x: ?)", "f.halo:1:18"},
		{"emoji in comment", "# 🙂🙂\ntool A : Bash(x: ?)", "f.halo:2:18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse("f.halo", []byte(tt.src))
			if len(diags) == 0 {
				t.Fatal("no diagnostics")
			}
			if got := diags[0].Pos.String(); got != tt.want {
				t.Errorf("position %s, want %s (%s)", got, tt.want, diags[0])
			}
		})
	}
}

func TestModelIDs(t *testing.T) {
	tests := []struct{ src, provider, name string }{
		{"agent A [openai/gpt-4o]", "openai", "gpt-4o"},
		{"agent A [openrouter/qwen/qwen3-coder, temp: 0.1]", "openrouter", "qwen/qwen3-coder"},
		{"agent A [ollama/llama3.1:8b]", "ollama", "llama3.1:8b"},
		{"agent A [together/meta-llama/Llama-3.3-70B-Instruct-Turbo ]", "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo"},
		{"agent A [\"anthropic/claude-sonnet-4-5\"]", "anthropic", "claude-sonnet-4-5"},
		{"agent A\t[gemini/gemini-2.5-flash]", "gemini", "gemini-2.5-flash"},
	}
	for _, tt := range tests {
		f, diags := Parse("f.halo", []byte(tt.src))
		if len(diags) > 0 || len(f.Decls) != 1 {
			t.Fatalf("%s: %v", tt.src, diags)
		}
		m := f.Decls[0].(*AgentDecl).Model
		if m.Provider != tt.provider || m.Name != tt.name {
			t.Errorf("%s: got %q / %q", tt.src, m.Provider, m.Name)
		}
	}
}

func TestStringEscapes(t *testing.T) {
	tests := []struct{ lit, want string }{
		{`"\\.test\\."`, `\.test\.`},
		{`"a\"b"`, `a"b`},
		{`"line\nnext\ttab"`, "line\nnext\ttab"},
		{`"\u00e9\u2713"`, "é✓"},
		{`"\ud83d\ude00"`, "😀"},
		{`"{{workdir}}/x"`, "{{workdir}}/x"},
	}
	for _, tt := range tests {
		f, diags := Parse("f.halo", []byte("tool A : Bash(cwd: "+tt.lit+")"))
		if len(diags) > 0 {
			t.Fatalf("%s: %v", tt.lit, diags)
		}
		got := f.Decls[0].(*ToolDecl).Named("cwd").Value.(*StringLit).Value
		if got != tt.want {
			t.Errorf("%s = %q, want %q", tt.lit, got, tt.want)
		}
	}
}

// TestShapes parses each construct the issue lists and looks at the tree it makes.
func TestShapes(t *testing.T) {
	src := strings.Join([]string{
		"policy P : Block(PII, APIKey)",
		"  & ApproveEffects(write)",
		"& MaxSpend(0.50) & LogViolation",
		"pipeline Q(order: Order) -> Result:",
		"  order |> A.x() as a |> B.y(a) @retry(2) @timeout(20000) |? System.Fail(\"no\")",
		"pipeline R(task: String) -> Result: task |> Clerk.work(tools: [Files])",
	}, "\n")
	f, diags := Parse("f.halo", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if len(f.Decls) != 3 {
		t.Fatalf("got %d declarations", len(f.Decls))
	}
	p := f.Decls[0].(*PolicyDecl)
	if len(p.Rules) != 4 || p.Rules[3].Name.Name != "LogViolation" || p.Rules[3].Parens {
		t.Errorf("policy rules: %+v", p.Rules)
	}
	q := f.Decls[1].(*PipelineDecl)
	if len(q.Stages) != 3 || q.Stages[0].As.Name != "a" || q.Stages[1].Directive("timeout") == nil || q.Stages[2].Op != OpFallback {
		t.Errorf("stages of Q: %+v", q.Stages)
	}
	r := f.Decls[2].(*PipelineDecl)
	if len(r.Stages) != 1 || r.Stages[0].Call.Target() != "Clerk.work" {
		t.Errorf("one-line body: %+v", r.Stages)
	}
	if l, ok := r.Stages[0].Call.Named("tools").Value.(*ListLit); !ok || l.Elems[0].(*Ident).Name != "Files" {
		t.Errorf("tools: %+v", r.Stages[0].Call.Args)
	}
}

// TestDeepNesting: deep brackets are an error, not a stack overflow.
func TestDeepNesting(t *testing.T) {
	src := "tool A : Bash(x: " + strings.Repeat("[", 100000) + ")"
	_, diags := Parse("f.halo", []byte(src))
	if len(diags) == 0 || !strings.Contains(diags[0].Message, "nested more than") {
		t.Fatalf("got %v", diags)
	}
}

// TestLineEndsAndIndentation: CRLF line ends and tab indentation parse to the same tree
// shape as LF and spaces.
func TestLineEndsAndIndentation(t *testing.T) {
	src, err := os.ReadFile("../../examples/74-software-team.halo")
	if err != nil {
		t.Fatal(err)
	}
	lf, diags := Parse("lf.halo", src)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	lines := strings.Split(string(src), "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		lines[i] = strings.Repeat("\t", (len(l)-len(trimmed)+1)/2) + trimmed
	}
	crlf, diags := Parse("crlf.halo", []byte(strings.Join(lines, "\r\n")))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if len(lf.Decls) != len(crlf.Decls) {
		t.Fatalf("%d declarations with LF, %d with CRLF and tabs", len(lf.Decls), len(crlf.Decls))
	}
	for i := range lf.Decls {
		a, b := lf.Decls[i], crlf.Decls[i]
		if a.Kind() != b.Kind() || a.DeclName().Name != b.DeclName().Name || a.Position().Line != b.Position().Line {
			t.Errorf("declaration %d: %s %s at %d vs %s %s at %d", i, a.Kind(), a.DeclName().Name, a.Position().Line, b.Kind(), b.DeclName().Name, b.Position().Line)
		}
	}
	p := crlf.Decls[len(crlf.Decls)-1].(*PipelineDecl)
	if len(p.Stages) != 4 || p.Stages[0].Pos.Col != 3 {
		t.Errorf("pipeline stages %d, first at column %d (two tabs, then |>)", len(p.Stages), p.Stages[0].Pos.Col)
	}
}

// TestCalls: every call of a pipeline, inside branch arms too, in source order.
func TestCalls(t *testing.T) {
	f, diags := Parse("f.halo", []byte(`pipeline P(x: List) -> Result:
  x |> A.a() |* { B.b(), C.c() } |* each D.d()
    |> branch { "x": E.e() |> branch { else: F.f() }, else: G.g() }
    ~> listen("c") |! yield("q") |<> loop(A, "true")`))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	var got []string
	for _, c := range Calls(f.Decls[0].(*PipelineDecl).Stages) {
		got = append(got, c.Target())
	}
	if strings.Join(got, " ") != "A.a B.b C.c D.d E.e F.f G.g listen yield loop" {
		t.Errorf("calls %v", got)
	}
	n := 0
	WalkStages(f.Decls[0].(*PipelineDecl).Stages, func(st *Stage) bool { n++; return st.Op != OpBranch })
	if n != 7 {
		t.Errorf("walked %d stages, want the 7 outside the arms", n)
	}
	// A pipeline's calls begin with its start, when that is a call.
	f, diags = Parse("f.halo", []byte("pipeline P() -> Result:\n  Shop.list() |> A.a()\n"))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	got = nil
	for _, c := range f.Decls[0].(*PipelineDecl).Calls() {
		got = append(got, c.Target())
	}
	if strings.Join(got, " ") != "Shop.list A.a" {
		t.Errorf("pipeline calls %v", got)
	}
}

func TestPosString(t *testing.T) {
	for _, c := range []struct {
		p    Pos
		want string
	}{
		{Pos{File: "flow.halo", Line: 5, Col: 8}, "flow.halo:5:8"},
		{Pos{File: "a b/c.halo", Line: 123, Col: 4567}, "a b/c.halo:123:4567"},
		{Pos{Line: 1, Col: 1}, ":1:1"},
		{Pos{File: "x.halo"}, "x.halo"},
		{Pos{}, "-"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.p, got, c.want)
		}
	}
}
