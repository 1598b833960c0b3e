package check

import (
	"strconv"
	"strings"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
)

// checkRule validates one rule written in a policy beside the tools Git (an MCP server, whose
// tool names hold dots) and Files, and returns its diagnostics.
func checkRule(t testing.TB, rule string) lang.Diagnostics {
	t.Helper()
	src := "tool Git : MCP(\"git-mcp\")\ntool Files : Workspace(\".\")\npolicy P : " + rule + "\n"
	f, diags := lang.Parse("p.halo", []byte(src))
	if diags.HasErrors() {
		t.Skipf("%q does not parse: %v", rule, diags) // only the fuzz target writes such rules
	}
	return Check(&lang.Program{Files: []*lang.File{f}}, testConfig(nil))
}

// compiles reports whether host/policy compiles the rule (what the runtime enforces).
func compiles(t testing.TB, rule string) bool {
	t.Helper()
	f, _ := lang.Parse("p.halo", []byte("policy P : "+rule+"\n"))
	_, err := policy.Compile("P", RuleSpecs(f.Decls[0].(*lang.PolicyDecl)))
	return err == nil
}

// The checker accepts exactly the tool patterns host/policy accepts (policy owns the pattern
// syntax): an MCP tool's method may hold dots ("Git.delete.repo", "Git.delete.*"), and a `*`
// may stand for part of a name. It adds only what the program says: a named tool part must be
// a declared tool.
func TestToolPatternsAsPolicyReadsThem(t *testing.T) {
	for _, tt := range []struct {
		rule string
		want string // the code of the one diagnostic, or "" for none
	}{
		{`DenyTools("Git.delete.repo")`, ""},
		{`ApproveTools("Git.delete.*")`, ""},
		{`AllowTools("Git.*", "Files.read", "*.list", "*")`, ""},
		{`AllowTools("Gi*.read", "*.delete_*", "F*")`, ""},
		{`DenyArgs("Git.push.force", "branch", "^main$")`, ""},
		{`DenyTools(Git.delete)`, ""},
		{`DenyTools("Git.")`, policy.CodeInvalid},
		{`DenyTools(".delete")`, policy.CodeInvalid},
		{`DenyArgs("Git.", "x")`, policy.CodeInvalid},
		{`DenyTools("Gti.delete.repo")`, CodeUndeclared},
		{`ApproveTools("Nope.*")`, CodeUndeclared},
	} {
		diags := checkRule(t, tt.rule)
		got := ""
		if len(diags) > 0 {
			got = diags[0].Code
		}
		if len(diags) > 1 || got != tt.want {
			t.Errorf("%s: diagnostics %v, want code %q", tt.rule, diags, tt.want)
		}
		if policyOK := compiles(t, tt.rule); policyOK != (tt.want != policy.CodeInvalid) {
			t.Errorf("%s: policy compiles it: %v, want %v", tt.rule, policyOK, tt.want != policy.CodeInvalid)
		}
	}
}

// FuzzToolPatterns: for any pattern, the checker reports an error other than an undeclared
// tool exactly when host/policy refuses the rule.
func FuzzToolPatterns(f *testing.F) {
	for _, p := range []string{"Git.delete.repo", "Git.delete.*", "*", "*.x", "Gi*.r*", "Git.", ".x", "", "a.b.c.d", "Files"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsAny(p, "\"\\{}\n\r") || !strconv.CanBackquote(p) {
			return // keep to what a plain Halo string holds as written
		}
		for _, rule := range []string{`DenyTools("` + p + `")`, `DenyArgs("` + p + `", "x")`} {
			refused := false
			for _, d := range checkRule(t, rule) {
				refused = refused || d.Severity == lang.Error && d.Code != CodeUndeclared
			}
			if compiles(t, rule) == refused {
				t.Fatalf("%s: the checker refuses it: %v; policy compiles it: %v", rule, refused, !refused)
			}
		}
	})
}

// RuleSpecs spells each rule's position as lang.Pos.String does, however many rules a policy
// has (their positions are cut from one string) and however long their lines and columns.
func TestRuleSpecsPositions(t *testing.T) {
	var b strings.Builder
	b.WriteString(strings.Repeat("\n", 12345) + "policy P : MaxWords(1)")
	for i := range 40 {
		b.WriteString(" & " + strings.Repeat(" ", i*300) + "MaxChars(" + strconv.Itoa(i+1) + ")")
	}
	f, diags := lang.Parse("a/long/file/name.halo", []byte(b.String()+"\n"))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	pd := f.Decls[0].(*lang.PolicyDecl)
	specs := RuleSpecs(pd)
	if len(specs) != 41 {
		t.Fatalf("%d specs", len(specs))
	}
	for i, r := range pd.Rules {
		if got, want := specs[i].Pos, r.Pos.String(); got != want {
			t.Errorf("rule %d at %q, want %q", i, got, want)
		}
	}
	if _, err := policy.Compile("P", specs); err != nil {
		t.Fatal(err)
	}
}
