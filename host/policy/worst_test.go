//go:build unix

package policy

import (
	"halolang.dev/halo/internal/cputime"
	"strings"
	"testing"
	"time"
)

// Inputs made of one unit repeated must take linear time: a quadratic corner of a
// detector would let a tool result stall a run.
func TestWorstCaseTiming(t *testing.T) {
	s := Set{MustCompile("Safe", []RuleSpec{
		{Name: "Redact", Args: []any{Ident("PII"), Ident("APIKey"), Ident("IPAddress")}},
		{Name: "Block", Args: []any{Ident("PromptInjection"), Ident("DestructiveOps"), Ident("Profanity"), Ident("Markdown")}},
	})}
	units := []string{"a", "a@", "1 ", "1-", "1.", "+1 ", "%", "%25", "&amp;", "é", "\u200b", "**a",
		"ignore ", "rm -", "sk-", "@a.", "a.", "#", "1", "(1", "&#", "٣", "aé\n", "-1", "1 1 ", "+1 1 ",
		"a.b@c.", "a@b.c.", "x**", "__a", "```", "ignore all the ", "you are now ", "git push ", "dd ",
		"delete from ", "{", "sk-a", "ghp_a", "AIza", "&#x", "%e2%80%8b", "\\u00", "rm -r ",
		`"a",`, `"\u0041",`, `"\"`, `{"k":"`, `"\\\"`, `"aws_secret_access_key":"`, "\U000E0041", "xoxb-1-", "sk-sk-"}
	// Time each input at two sizes, 4x apart, in CPU time, best of two runs: linear work
	// grows about 4x, quadratic work 16x.
	best := func(in string) time.Duration {
		var min time.Duration
		for i := 0; i < 2; i++ {
			start := cputime.Self()
			_, _ = s.Input(in)
			if d := cputime.Self() - start; i == 0 || d < min {
				min = d
			}
		}
		return min
	}
	small := 32 << 10
	if raceOn {
		small = 8 << 10 // the same shapes, at a size the race detector gets through quickly
	}
	for _, unit := range units {
		a := best(strings.Repeat(unit, small/len(unit)))
		b := best(strings.Repeat(unit, 4*small/len(unit)))
		if b > 10*a+20*time.Millisecond {
			t.Errorf("%q repeated: %v for %d KB, %v for %d KB: not linear", unit, a, small>>10, b, 4*small>>10)
		}
	}
}
