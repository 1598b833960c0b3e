package runtime

import (
	"encoding/json"
	"testing"
)

// TestQuoteJSON: arguments quoted for people are compact JSON with <, > and & as they are,
// however the JSON escaped them; other escapes, and text that merely looks like an escape
// after an escaped backslash, stay as they were; a long quote is cut between characters.
func TestQuoteJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{`{"a": "\u003cb\u003e \u0026 \u003E"}`, 100, `{"a":"<b> & >"}`},
		{`{"a":"\\u003c"}`, 100, `{"a":"\\u003c"}`},
		{`{"a":"\\\u003c"}`, 100, `{"a":"\\<"}`},
		{`{"a":"\"\u00e9\n\u2028"}`, 100, `{"a":"\"\u00e9\n\u2028"}`},
		{`{"\u0026": [1, 2.50]}`, 100, `{"&":[1,2.50]}`},
		{`not JSON \u003c`, 100, `not JSON \u003c`},
		{`"ééé"`, 4, `"é…`},
	} {
		if got := quoteJSON(json.RawMessage(c.in), c.max); got != c.want {
			t.Errorf("quoteJSON(%s, %d) = %s, want %s", c.in, c.max, got, c.want)
		}
	}
}
