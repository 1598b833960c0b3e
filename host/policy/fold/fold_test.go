package fold

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
		opts           Options
	}{
		{"ascii untouched", "rm -rf / && echo 100%", "rm -rf / && echo 100%", Options{}},
		{"fullwidth digits and nb hyphen", "１２３‑45‑6789", "123-45-6789", Options{}},
		{"arabic-indic digits", "٣٤٥", "345", Options{}},
		{"devanagari digits", "१२३", "123", Options{}},
		{"math bold digits", "𝟏𝟐", "12", Options{}},
		{"accents precomposed", "ígnörê", "ignore", Options{}},
		{"accents combining", "i\u0301gnore", "ignore", Options{}},
		{"zero width", "ig\u200bno\u200dre\ufeff", "ignore", Options{}},
		{"bidi controls", "\u202eignore\u202c", "ignore", Options{}},
		{"tag characters", "ig\U000E0041nore", "ignore", Options{}},
		{"variation selectors", "ig\ufe0fnore", "ignore", Options{}},
		{"cyrillic", "іgnоrе рrеvіоus", "ignore previous", Options{}},
		{"cyrillic capital I stays I", "ІGNORE", "IGNORE", Options{}},
		{"greek", "ΑΙ", "AI", Options{}},
		{"greek nu", "ν", "v", Options{}},
		{"dashes", "a–b—c−d", "a-b-c-d", Options{}},
		{"spaces", "a\u00a0b\u2003c\u3000d", "a b c d", Options{}},
		{"fullwidth letters", "ＤＲＯＰ ＴＡＢＬＥ", "DROP TABLE", Options{}},
		{"html named", "rm &minus;rf &amp; x", "rm -rf & x", Options{}},
		{"html numeric", "&#49;&#x32;&#51", "123", Options{}},
		{"html double", "&amp;#49;", "1", Options{}},
		{"percent", "a%40b.com", "a@b.com", Options{}},
		{"percent double", "a%2540b.com", "a@b.com", Options{}},
		{"percent utf8 then fold", "%EF%BC%91", "1", Options{}},
		{"percent not hex", "100%off", "100%off", Options{}},
		{"json escapes off", `rm \u002drf`, `rm \u002drf`, Options{}},
		{"json escapes on", `rm \u002drf\nls`, "rm -rf\nls", Options{JSONEscapes: true}},
		{"cjk untouched", "日本語 text", "日本語 text", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in, tt.opts)
			if got.Folded != tt.want {
				t.Errorf("String(%q).Folded = %q, want %q", tt.in, got.Folded, tt.want)
			}
			if got.Changed() != (tt.in != tt.want) {
				t.Errorf("Changed() = %v", got.Changed())
			}
		})
	}
}

func TestSpan(t *testing.T) {
	in := "SSN: １２３‑45‑6789 ok"
	f := String(in, Options{})
	i := strings.Index(f.Folded, "123-45-6789")
	if i < 0 {
		t.Fatalf("folded %q", f.Folded)
	}
	s, e := f.Span(i, i+len("123-45-6789"))
	if got := in[s:e]; got != "１２３‑45‑6789" {
		t.Errorf("span = %q", got)
	}
	// A match that starts inside a ligature's folding covers the ligature.
	f = String("xﬁy", Options{})
	s, e = f.Span(2, 3) // "i"
	if got := "xﬁy"[s:e]; got != "ﬁ" {
		t.Errorf("ligature span = %q", got)
	}
	// Escapes decoded in two rounds map to the whole escape.
	in = "mail a%2540b.com now"
	f = String(in, Options{})
	i = strings.Index(f.Folded, "a@b.com")
	s, e = f.Span(i, i+len("a@b.com"))
	if got := in[s:e]; got != "a%2540b.com" {
		t.Errorf("escape span = %q", got)
	}
}

func TestRuneTable(t *testing.T) {
	prev := rune(-1)
	for i, r := range tableRunes {
		if r <= prev {
			t.Fatalf("table not sorted at %d", i)
		}
		prev = r
		s, ok := Rune(r)
		if !ok || !isASCIIString(s) {
			t.Fatalf("Rune(%U) = %q, %v", r, s, ok)
		}
	}
	if _, ok := Rune('日'); ok {
		t.Error("CJK folded")
	}
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"１２３‑45‑6789", "a%2540b.com", "&amp;#49;", "ﬁ", "\xff\xfe", `\ud83d\ude00`, "%E2%80%8B"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, js bool) {
		o := Options{JSONEscapes: js}
		txt := String(s, o)
		if !Needed(s, o) && (txt.Folded != s || txt.Changed()) {
			t.Fatalf("clean text changed: %q -> %q", s, txt.Folded)
		}
		// Every folded span maps inside the original, in order.
		prevStart := 0
		for i := 0; i < len(txt.Folded); i++ {
			a, b := txt.Span(i, i+1)
			if a < prevStart || b > len(s) || a > b {
				t.Fatalf("Span(%d) = %d,%d out of order or range for %q", i, a, b, s)
			}
			prevStart = a
		}
		a, b := txt.Span(0, len(txt.Folded))
		if len(txt.Folded) > 0 && (a < 0 || b > len(s)) {
			t.Fatalf("whole span %d,%d", a, b)
		}
	})
}
