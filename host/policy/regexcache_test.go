package policy

import (
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
)

// A pattern that many rules write is compiled once: every rule holds the same compiled
// value, while another pattern, or the same one with other options, gets its own. A bad
// pattern is refused each time it is written, with the same message.
func TestRegexCompiledOncePerProcess(t *testing.T) {
	pattern := `(?#` + t.Name() + `)^(?!bun test[\w ./-]*$)` // distinct from every other test's
	compiled := func(name string) *regexp2.Regexp {
		p, err := Compile(name, []RuleSpec{{Name: "DenyArgs", Args: []any{"Sh.run", "command", pattern}}})
		if err != nil {
			t.Fatal(err)
		}
		return p.rules[0].re
	}
	first, second := compiled("A"), compiled("B")
	if first == nil || first != second {
		t.Fatalf("the same pattern compiled twice: %p, %p", first, second)
	}
	if ok, err := matchString(first, "rm -rf /"); err != nil || !ok {
		t.Errorf("the shared pattern does not match as it did: %v, %v", ok, err)
	}
	p, err := Compile("C", []RuleSpec{{Name: "MatchRegex", Args: []any{pattern}}})
	if err != nil || p.rules[0].re == nil || p.rules[0].re == first {
		t.Errorf("MatchRegex (case-sensitive) shares DenyArgs' case-insensitive compilation of the pattern: %v", err)
	}
	if again, _ := Compile("D", []RuleSpec{{Name: "MatchRegex", Args: []any{pattern}}}); again.rules[0].re != p.rules[0].re {
		t.Errorf("MatchRegex compiled its pattern twice")
	}
	for i := 0; i < 2; i++ {
		_, err := Compile("Bad", []RuleSpec{{Name: "DenyArgs", Args: []any{"Sh.run", "command", "(unclosed" + t.Name()}}})
		if err == nil || !strings.Contains(err.Error(), "not a valid regular expression") {
			t.Errorf("compile %d of a bad pattern: %v", i+1, err)
		}
	}
	long := strings.Repeat("a", maxCachedPatternLen+1)
	a, _ := cachedRegex(long, 0)
	b, _ := cachedRegex(long, 0)
	if a == nil || a == b {
		t.Errorf("a pattern over %d bytes was kept", maxCachedPatternLen)
	}
}
