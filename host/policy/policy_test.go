package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
)

func r(name string, args ...any) RuleSpec {
	return RuleSpec{Name: name, Args: args, Pos: "test.halo:1:1"}
}

func set(t testing.TB, policies ...[]RuleSpec) Set {
	t.Helper()
	var s Set
	for i, specs := range policies {
		p, err := Compile("P"+string(rune('1'+i)), specs)
		if err != nil {
			t.Fatalf("Compile: %v", err)
		}
		s = append(s, p)
	}
	return s
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		spec RuleSpec
		want string
	}{
		{r("MaxWords"), "MaxWords takes one argument, got 0"},
		{r("MaxWords", -3.0), "whole number, 1 or more"},
		{r("MaxChars", 2.5), "whole number, 1 or more"},
		{r("MaxSpend", "lots"), "argument 1 of MaxSpend must be a number above 0"},
		{r("MatchRegex", "(unclosed"), "not a valid regular expression"},
		{r("DenyArgs", "Bash.run", "(?<"), "not a valid regular expression"},
		{r("DenyArgs", "Bash.", "x"), "not a tool pattern"},
		{r("DenyTools", ".run"), "not a tool pattern"},
		{r("AllowEffects", Ident("delete")), `unknown effect "delete"`},
		{r("AllowTools"), "at least one argument"},
		{r("Validate", "amount", "=~", 3.0), `operator "=~" must be one of`},
		{r("LogViolation", 1.0), "takes no arguments"},
		{r("Validate", "amount", "<", []any{1.0}), "argument 3 of Validate must be a string, number or boolean"},
	}
	for _, tt := range tests {
		_, err := Compile("Bad", []RuleSpec{tt.spec})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", ruleText(tt.spec.Name, tt.spec.Args), err, tt.want)
			continue
		}
		var errs Errors
		if !errors.As(err, &errs) || errs[0].Pos != "test.halo:1:1" || errcode.Code(err) != CodeInvalid {
			t.Errorf("%s: want Errors with position and code, got %#v", ruleText(tt.spec.Name, tt.spec.Args), err)
		}
	}
	// Every error is reported, not just the first.
	_, err := Compile("Bad", []RuleSpec{r("MaxWords"), r("MatchRegex", "(")})
	var errs Errors
	if !errors.As(err, &errs) || len(errs) != 2 {
		t.Errorf("want 2 errors, got %v", err)
	}
}

func TestCompileWarnings(t *testing.T) {
	for _, spec := range []RuleSpec{
		r("Tone", Ident("friendly")),
		r("Anonymize"),
		r("MaxDensity", 0.5),
		r("Require", Ident("Approver")),
		r("Enforce", Ident("XML")),
		r("Block", Ident("Competitors")),
		r("Block", Ident("IPAddress")),
		r("Redact", Ident("PromptInjection")),
		r("Frobnicate"),
	} {
		p, err := Compile("W", []RuleSpec{spec})
		if err != nil {
			t.Errorf("%s: %v", ruleText(spec.Name, spec.Args), err)
			continue
		}
		if len(p.Warnings()) != 1 || p.Warnings()[0].Code != CodeNotEnforced || len(p.rules) != 0 {
			t.Errorf("%s: warnings %v, rules %d", ruleText(spec.Name, spec.Args), p.Warnings(), len(p.rules))
		}
	}
	// A known category beside an unknown one still runs.
	p := MustCompile("W", []RuleSpec{r("Block", Ident("Competitors"), Ident("Profanity"))})
	if len(p.Warnings()) != 1 || len(p.rules) != 1 {
		t.Fatalf("warnings %v rules %d", p.Warnings(), len(p.rules))
	}
	if _, err := (Set{p}).Input("well shit"); err == nil {
		t.Error("Profanity not blocked")
	}
}

func TestLogViolation(t *testing.T) {
	s := set(t, []RuleSpec{r("Block", Ident("Profanity")), r("LogViolation")})
	_, err := s.Input("oh shit")
	var v *Violation
	if !errors.As(err, &v) || !v.Log || v.Policy != "P1" || v.Rule != "Block" || v.Phase != Input || v.ErrorCode() != "POLICY_VIOLATION" {
		t.Fatalf("got %#v", err)
	}
}

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }

// checkRule reports every problem of one rule, as Compile and CompileRules do.
func checkRule(s RuleSpec) []Diagnostic {
	c := compiler{spec: s}
	c.rule()
	return c.diags
}

// checkRule says which argument is at fault, with the code of the problem and, for a name it
// does not know, the names it does (host/check turns them into positions and "did you mean").
func TestCheckRule(t *testing.T) {
	for _, tt := range []struct {
		spec    RuleSpec
		code    string
		arg     int
		warning bool
		word    string
		known   string
	}{
		{r("MaxSpend", 0.5, 1.0), CodeInvalid, 0, false, "", ""},
		{r("Validate", "amount", "=~", 3.0), CodeInvalid, 2, false, "", ""},
		{r("DenyArgs", "Bash.run", "cmd", "(?<"), CodeBadRegex, 3, false, "", ""},
		{r("AllowEffects", Ident("read"), Ident("writes")), CodeBadEffect, 2, false, "writes", "write"},
		{r("Block", Ident("PII"), Ident("Profanty")), CodeNotEnforced, 2, true, "Profanty", "Profanity"},
		{r("MaxWord", 10.0), CodeNotEnforced, 0, true, "MaxWord", "MaxWords"},
		{r("DenyTools", "Git."), CodeInvalid, 1, false, "", ""},
	} {
		ds := checkRule(tt.spec)
		if len(ds) != 1 {
			t.Errorf("%s: %v, want one diagnostic", ruleText(tt.spec.Name, tt.spec.Args), ds)
			continue
		}
		d := ds[0]
		if d.Code != tt.code || d.Arg != tt.arg || d.Warning != tt.warning || d.Word != tt.word || tt.known != "" && !slices.Contains(d.Known, tt.known) || d.Pos != "test.halo:1:1" {
			t.Errorf("%s: %+v", ruleText(tt.spec.Name, tt.spec.Args), d)
		}
	}
	// Dotted MCP names and globs within a part are patterns.
	for _, p := range []string{"Git.delete.repo", "Git.delete.*", "Gi*.read", "*.delete_*", "*"} {
		if ds := checkRule(r("DenyTools", p)); len(ds) != 0 {
			t.Errorf("DenyTools(%q): %v", p, ds)
		}
	}
}

// The hint about doubling backslashes is given only for a pattern whose escape does not
// parse; an unclosed '(' gets the regex's own message alone.
func TestBadRegexHintOnlyForEscapes(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		hint    bool
	}{
		{`ab\`, true},
		{`\p{L`, true},
		{`(abc`, false},
		{`[a-`, false},
	} {
		diags := checkRule(RuleSpec{Name: "DenyArgs", Args: []any{"Bash.run", tt.pattern}})
		if len(diags) != 1 || diags[0].Code != CodeBadRegex {
			t.Fatalf("%q: %+v", tt.pattern, diags)
		}
		if got := strings.Contains(diags[0].Message, "backslash"); got != tt.hint {
			t.Errorf("%q: hint %v, want %v: %s", tt.pattern, got, tt.hint, diags[0].Message)
		}
	}
}

// Every rule has a sentence saying what it checks, and no sentence is left for a rule that
// is gone.
func TestEveryRuleHasADoc(t *testing.T) {
	for _, name := range RuleNames() {
		if RuleDoc(name) == "" {
			t.Errorf("rule %s has no RuleDoc", name)
		}
	}
	if len(ruleDocs) != len(RuleNames()) {
		t.Errorf("%d rule docs for %d rules", len(ruleDocs), len(RuleNames()))
	}
}
