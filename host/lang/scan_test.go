package lang

import (
	"strconv"
	"strings"
	"testing"
)

// TestScanModelAfterAgent pins where the scanner reads a raw provider/model id: only right
// after `agent Name [` with agent first in its line in column 1, not after an `agent` whose
// declaration ended before its name, nor when the '[' is on the next line.
func TestScanModelAfterAgent(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"agent A [a/b]\n", ""},
		{"agent\ntool X [a/b]\n", "x.halo:1:6: error: unexpected end of declaration; expected the agent's name [SYNTAX]\n" +
			"x.halo:2:8: error: unexpected '[' after the tool name; expected ':' [SYNTAX]\n" +
			"x.halo:2:10: error: unexpected character '/' [SYNTAX]\n"},
		{"agent\nagent A [a/b, temp: 1]\n", "x.halo:1:6: error: unexpected end of declaration; expected the agent's name [SYNTAX]\n"},
		{"agent A\n  [a/b]\n", "x.halo:2:4: error: unexpected \"a\"; expected a provider/model id, such as openai/gpt-4o [SYNTAX]\n" +
			"x.halo:2:5: error: unexpected character '/' [SYNTAX]\n"},
	} {
		_, diags := Parse("x.halo", []byte(tc.src))
		var b strings.Builder
		for _, d := range diags {
			b.WriteString(d.String() + "\n")
		}
		if b.String() != tc.want {
			t.Errorf("%q:\n%s\nwant:\n%s", tc.src, b.String(), tc.want)
		}
	}
}

// TestSmallInt checks the parser's fast reading of whole numbers against strconv.ParseFloat.
func TestSmallInt(t *testing.T) {
	for _, s := range []string{"0", "7", "40", "120000", "007", "999999999999999", "9007199254740993", "1.5", "-3", "1e3", "", "12a"} {
		v, ok := smallInt(s)
		want, err := strconv.ParseFloat(s, 64)
		digits := len(s) > 0 && len(s) <= 15 && strings.Trim(s, "0123456789") == ""
		if ok != digits || ok && (err != nil || v != want) {
			t.Errorf("smallInt(%q) = %v, %v; ParseFloat %v, %v", s, v, ok, want, err)
		}
	}
}
