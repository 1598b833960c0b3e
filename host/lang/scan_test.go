package lang

import (
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
