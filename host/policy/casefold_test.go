package policy

import (
	"encoding/json"
	"testing"
	"unicode"

	"halolang.dev/halo/host/tool"
)

// Issue 27 item 10, as a model would try it: Unicode case folding takes ſ (U+017F) to s and
// the Kelvin sign (U+212A) to k, so an ASCII allow-list of commands let through a command
// Bash reads as another program or file. Case-insensitive matching folds ASCII letters
// only, and a value holding such a character is checked again with it folded.
func TestCaseFoldingIsASCII(t *testing.T) {
	allow := []RuleSpec{r("DenyArgs", "Tests.run", "command", `^(?!bun test[\w ./-]*$)`)}
	unicodeAllow := []RuleSpec{r("DenyArgs", "Tests.run", "command", `(?u)^(?!bun test[\w ./-]*$)`)}
	deny := []RuleSpec{r("DenyArgs", "*", `secret`)}
	tests := []struct {
		name    string
		rules   []RuleSpec
		command string
		verdict Verdict
	}{
		{"allowed as written", allow, "bun test a.test.ts", Allowed},
		{"ASCII case still folds", allow, "BUN TEST a.test.ts", Allowed},
		{"long s is not s", allow, "bun te\u017Ft", Refused},
		{"Kelvin sign is not k", allow, "bun test ./\u212A.ts", Refused},
		{"dotted capital I is not i", allow, "bun test ./\u0130.ts", Refused},
		{"dotless i is not I", allow, "bun test ./\u0131.ts", Refused},
		{"(?u) asks for Unicode folding", unicodeAllow, "bun te\u017Ft", Allowed},
		{"a deny list sees the folded form", deny, "\u017Fecret", Refused},
		{"a deny list sees the Kelvin sign folded", deny, "\u212A \u017Fecret", Refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": tt.command})
			d := set(t, tt.rules).Decide("Tests.run", tool.External, args)
			if d.Verdict != tt.verdict {
				t.Fatalf("%q: %v (%s), want %v", tt.command, d.Verdict, d.Reason, tt.verdict)
			}
		})
	}
}

// MatchRegex is case-sensitive unless the pattern says (?i); then it folds ASCII letters
// only, and an answer holding a character Unicode folds to ASCII must match in both forms.
func TestMatchRegexCaseFolding(t *testing.T) {
	tests := []struct {
		pattern, answer string
		ok              bool
	}{
		{`(?i)^[a-z ]+$`, "Plain Words", true},
		{`(?i)^[a-z ]+$`, "te\u017Ft", false},
		{`(?i)^[a-z ]+$`, "\u212Aelvin", false},
		{`(?iu)^[a-z ]+$`, "te\u017Ft", true},
		{`(?i)^(?!.*password)`, "pa\u017F\u017Fword", false},
		{`^[a-z]+$`, "te\u017Ft", false},
	}
	for _, tt := range tests {
		p := MustCompile("Shape", []RuleSpec{r("MatchRegex", tt.pattern)})
		_, v := Set{p}.Output(Answer{Text: tt.answer}, nil)
		if (v == nil) != tt.ok {
			t.Errorf("MatchRegex(%q) on %q: violation %v, want ok=%v", tt.pattern, tt.answer, v, tt.ok)
		}
	}
}

// caseEscapes holds every character outside ASCII that Unicode case folding (as regexp2
// folds: simple folding, lower and upper case) takes to or from an ASCII letter, and each
// stand-in is caseless and of the same category as the character it stands for.
func TestCaseEscapesComplete(t *testing.T) {
	for c := rune(0x80); c <= unicode.MaxRune; c++ {
		escapes := unicode.ToLower(c) < 0x80 || unicode.ToUpper(c) < 0x80
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			escapes = escapes || f < 0x80
		}
		e, listed := caseEscapes[c]
		if escapes != listed {
			t.Errorf("%U: folds to ASCII %v, listed %v", c, escapes, listed)
		}
		if !listed {
			continue
		}
		if e.ascii >= 0x80 || !unicode.IsLetter(e.ascii) {
			t.Errorf("%U folds to %q, not an ASCII letter", c, e.ascii)
		}
		s := e.inert
		if unicode.SimpleFold(s) != s || unicode.ToLower(s) != s || unicode.ToUpper(s) != s {
			t.Errorf("%U's stand-in %U has a case", c, s)
		}
		if unicode.IsUpper(c) != unicode.IsUpper(s) || unicode.IsLower(c) != unicode.IsLower(s) || !unicode.IsLetter(s) {
			t.Errorf("%U's stand-in %U is not a letter of the same case category", c, s)
		}
	}
}
