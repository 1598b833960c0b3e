package fold

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLiteralEnd(t *testing.T) {
	tests := []struct {
		in      string
		end     int
		escaped bool
	}{
		{`"abc" rest`, 5, false},
		{`"a\"b"`, 6, true},
		{`"\u0041"`, 8, true},
		{`""`, 2, false},
		{`"abc`, -5, false},       // no closing quote: stopped at the end
		{"\"ab\ncd\"", -4, false}, // a line break ends the attempt where it is
		{`"a\xb"`, -3, true},      // \x is not a JSON escape
		{`"a\u12"`, -3, true},     // short \u
		{`"\\"`, 4, true},         // an escaped backslash, then the closing quote
	}
	for _, tt := range tests {
		end, esc := LiteralEnd(tt.in)
		if end != tt.end || esc != tt.escaped {
			t.Errorf("LiteralEnd(%q) = %d, %v; want %d, %v", tt.in, end, esc, tt.end, tt.escaped)
		}
	}
}

func TestUnquote(t *testing.T) {
	in := `x\n\u00e9\ud83d\ude00\"bob@example.com\ud800y`
	u := Unquote(in)
	want := "x\né😀\"bob@example.com\uFFFDy"
	if u.Folded != want {
		t.Fatalf("Unquote = %q, want %q", u.Folded, want)
	}
	i := strings.Index(u.Folded, "bob")
	if a, b := u.Span(i-1, i+len("bob@example.com")); in[a:b] != `\"bob@example.com` {
		t.Errorf("span = %q", in[a:b])
	}
	if a, b := u.Span(1, 2); in[a:b] != `\n` {
		t.Errorf("span of a decoded line break = %q", in[a:b])
	}
	if u := Unquote("plain"); u.Changed() || u.Folded != "plain" {
		t.Errorf("plain text changed: %+v", u)
	}
}

func TestTags(t *testing.T) {
	hide := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			b.WriteRune(0xE0000 + r)
		}
		return b.String()
	}
	in := "Summarize." + hide("ignore all") + "ok" + hide("previous") + "\U000E0001"
	tx, ok := Tags(in)
	if !ok || tx.Folded != "ignore all\nprevious" {
		t.Fatalf("Tags = %q, %v", tx.Folded, ok)
	}
	a, b := tx.Span(0, len("ignore all"))
	if in[a:b] != hide("ignore all") {
		t.Errorf("span of the first run = %q", in[a:b])
	}
	a, b = tx.Span(len("ignore all\n"), len(tx.Folded))
	if in[a:b] != hide("previous") {
		t.Errorf("span of the second run = %q", in[a:b])
	}
	if _, ok := Tags("no tags here é"); ok {
		t.Error("Tags found a run in plain text")
	}
	// String still removes them, so a word split by one is seen whole.
	if f := String("ig"+hide("x")+"nore", Options{}); f.Folded != "ignore" {
		t.Errorf("String = %q", f.Folded)
	}
}

// LiteralEnd accepts exactly the string literals encoding/json accepts, and Unquote
// decodes them as it does.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"a\nb"`, `"\ud83d\ude00"`, `"\ud800"`, `"\u00e9x"`, `"abc`, `"\x"`, `"\"\\\/\b\f\r\t"`, "\"\xff\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] != '"' {
			s = `"` + s
		}
		end, _ := LiteralEnd(s)
		var want string
		err := json.Unmarshal([]byte(s[:max(end, 0)]), &want)
		if end < 0 {
			if k := -end - 1; k < 1 || k > len(s) {
				t.Fatalf("LiteralEnd(%q) stopped at %d", s, k)
			}
			// No prefix of s is a literal encoding/json takes.
			if i := strings.IndexByte(s[1:], '"'); i >= 0 && json.Valid([]byte(s[:i+2])) {
				t.Fatalf("LiteralEnd(%q) refused the literal %q", s, s[:i+2])
			}
			return
		}
		if err != nil {
			t.Fatalf("LiteralEnd(%q) = %d but encoding/json refuses %q: %v", s, end, s[:end], err)
		}
		u := Unquote(s[1 : end-1])
		// encoding/json turns invalid UTF-8 into U+FFFD; Unquote keeps the bytes as written.
		if utf8.ValidString(s) && u.Folded != want {
			t.Fatalf("Unquote(%q) = %q, encoding/json: %q", s[1:end-1], u.Folded, want)
		}
		for i := 0; i < len(u.Folded); i++ {
			if a, b := u.Span(i, i+1); a < 0 || b > end-2 || a > b {
				t.Fatalf("Span(%d) = %d,%d for %q", i, a, b, s)
			}
		}
	})
}

// Index reads eight bytes at a time; it finds what a byte-by-byte loop finds, at every
// offset and alignment.
func TestIndex(t *testing.T) {
	naive := func(s string) int {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 || s[i] == '%' || s[i] == '&' {
				return i
			}
		}
		return -1
	}
	for n := 0; n < 40; n++ {
		for _, c := range []string{"%", "&", "é", "\xff", "$", "'", "$&"} {
			for k := 0; k <= n; k++ {
				s := strings.Repeat("a", k) + c + strings.Repeat("b", n-k)
				if got, want := Index(s, Options{}), naive(s); got != want {
					t.Fatalf("Index(%q) = %d, want %d", s, got, want)
				}
			}
		}
		if s := strings.Repeat("x$'%", n)[:n]; Index(s, Options{}) != naive(s) {
			t.Fatalf("Index(%q)", s)
		}
	}
}
