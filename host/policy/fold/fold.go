// Package fold owns look-alike folding for host/policy: it rewrites text so that detectors
// see through characters chosen to look like others (fullwidth and other-script digits,
// accents, invisible characters, Cyrillic and Greek letters that look Latin, dash and space
// look-alikes) and through HTML entities and %-escapes, decoded a few rounds so double
// encoding is caught. Every folded byte remembers where in the original text it came
// from, so a match found in the folded text redacts exactly the original span.
//
// The rune table (table.go) is generated from Unicode's own data; see internal/gen.
package fold

//go:generate go run ./internal/gen -o table.go

import (
	"html"
	"sort"
	"strings"
	"unicode/utf8"
)

// Rounds is how many times escapes are decoded at most: "%2541" needs two.
const Rounds = 4

// Options choose the optional decoders.
type Options struct {
	// JSONEscapes also decodes backslash escapes (\n, \u002d, ...) left in a value, as
	// DenyArgs checks arguments.
	JSONEscapes bool
}

// A Text is folded text and the way back to the original.
type Text struct {
	// Folded is the text with look-alikes folded and escapes decoded.
	Folded string
	orig   string
	// src[i] is the offset in orig of the character that produced Folded[i]; it has
	// len(Folded)+1 entries, the last being len(orig). Nil when Folded == orig.
	src []int32
}

// Changed reports whether folding changed anything.
func (t Text) Changed() bool { return t.src != nil }

// Original returns the text that was folded.
func (t Text) Original() string { return t.orig }

// Span returns the span of the original text that the folded span [start, end) came from.
// It covers whole original characters: a match that begins inside the folding of "ﬁ"
// starts at the ligature.
func (t Text) Span(start, end int) (int, int) {
	if t.src == nil {
		return start, end
	}
	if end <= start {
		o := int(t.src[start])
		return o, o
	}
	last := t.src[end-1]
	j := end
	for j < len(t.src)-1 && t.src[j] == last {
		j++
	}
	return int(t.src[start]), int(t.src[j])
}

// trigger marks the bytes where folding may change something.
var trigger = func() (t [256]bool) {
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['%'] = true
	t['&'] = true
	return t
}()

// Needed reports whether s may change under folding: it holds non-ASCII bytes or escape
// introducers. Clean ASCII text is detected as is, without a folding pass.
func Needed(s string, o Options) bool { return Index(s, o) >= 0 }

// Index returns the offset of the first byte of s where folding may change something,
// or -1.
func Index(s string, o Options) int {
	i := 0
	if !o.JSONEscapes {
		// Eight bytes at a time: none has its high bit set, none is '%' or '&'.
		for ; i+8 <= len(s); i += 8 {
			x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			if x&hi8 != 0 || hasZeroByte(x^(lo8*'%')) || hasZeroByte(x^(lo8*'&')) {
				break
			}
		}
	}
	for ; i < len(s); i++ {
		if trigger[s[i]] || o.JSONEscapes && s[i] == '\\' {
			return i
		}
	}
	return -1
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// hasZeroByte reports whether one of the eight bytes of x is zero (for bytes below 0x80).
func hasZeroByte(x uint64) bool { return (x-lo8)&^x&hi8 != 0 }

// String folds s.
func String(s string, o Options) Text {
	t := Text{Folded: s, orig: s}
	if !Needed(s, o) {
		return t
	}
	cur := s
	var src []int32
	for round := 0; round < Rounds; round++ {
		next, m, changed := step(cur, o)
		if !changed {
			break
		}
		if src == nil {
			src = m
		} else {
			for i, v := range m {
				m[i] = src[v]
			}
			src = m
		}
		cur = next
		if !Needed(cur, o) {
			break
		}
	}
	if src == nil {
		return t
	}
	t.Folded, t.src = cur, src
	return t
}

// step folds runes and decodes one level of escapes.
func step(s string, o Options) (string, []int32, bool) {
	var b strings.Builder
	b.Grow(len(s))
	m := make([]int32, 0, len(s)+1)
	changed := false
	emit := func(out string, from int) {
		b.WriteString(out)
		for k := 0; k < len(out); k++ {
			m = append(m, int32(from))
		}
	}
	i := 0
	for i < len(s) {
		// Copy a run of plain bytes in one go.
		j := i
		for j < len(s) && !trigger[s[j]] && !(o.JSONEscapes && s[j] == '\\') {
			j++
		}
		if j > i {
			b.WriteString(s[i:j])
			for k := i; k < j; k++ {
				m = append(m, int32(k))
			}
			i = j
			if i == len(s) {
				break
			}
		}
		c := s[i]
		switch {
		case c == '%':
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				emit(string([]byte{unhex(s[i+1])<<4 | unhex(s[i+2])}), i)
				i += 3
				changed = true
				continue
			}
		case c == '&':
			if n, out := entity(s[i:]); n > 0 {
				emit(out, i)
				i += n
				changed = true
				continue
			}
		case c == '\\':
			if n, out := backslash(s[i:]); n > 0 {
				emit(out, i)
				i += n
				changed = true
				continue
			}
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if out, ok := Rune(r); ok && r != utf8.RuneError {
				emit(out, i)
				i += size
				changed = true
				continue
			}
			emit(s[i:i+size], i)
			i += size
			continue
		}
		emit(s[i:i+1], i)
		i++
	}
	m = append(m, int32(len(s)))
	return b.String(), m, changed
}

// Rune returns the ASCII (possibly empty) folding of a non-ASCII rune, if it has one.
func Rune(r rune) (string, bool) {
	n := len(tableRunes)
	k := sort.Search(n, func(i int) bool { return tableRunes[i] >= r })
	if k == n || tableRunes[k] != r {
		return "", false
	}
	start := 0
	if k > 0 {
		start = int(tableEnds[k-1])
	}
	return tableData[start:tableEnds[k]], true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// entity decodes an HTML character reference at the start of s: &name; &#NN; &#xHH (the
// numeric ones also without the semicolon, as browsers accept them).
func entity(s string) (int, string) {
	if len(s) < 3 {
		return 0, ""
	}
	n := 1
	if s[1] == '#' {
		n = 2
		hex := false
		if n < len(s) && (s[n] == 'x' || s[n] == 'X') {
			hex = true
			n++
		}
		start := n
		for n < len(s) && n-start < 8 && (hex && isHex(s[n]) || !hex && s[n] >= '0' && s[n] <= '9') {
			n++
		}
		if n == start {
			return 0, ""
		}
	} else {
		for n < len(s) && n < 33 && (isAlnumByte(s[n])) {
			n++
		}
		if n == 1 || n >= len(s) || s[n] != ';' {
			return 0, ""
		}
	}
	if n < len(s) && s[n] == ';' {
		n++
	}
	out := html.UnescapeString(s[:n])
	if out == s[:n] {
		return 0, ""
	}
	return n, out
}

func isAlnumByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// backslash decodes one JSON-style escape at the start of s.
func backslash(s string) (int, string) {
	if len(s) < 2 {
		return 0, ""
	}
	switch s[1] {
	case 'n':
		return 2, "\n"
	case 't':
		return 2, "\t"
	case 'r':
		return 2, "\r"
	case 'b':
		return 2, "\b"
	case 'f':
		return 2, "\f"
	case '"', '\\', '/', '\'':
		return 2, s[1:2]
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, ""
		}
		n := 6
		if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := hex4(s[8:]); ok && lo >= 0xDC00 && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				n = 12
			}
		}
		return n, string(r)
	case 'x':
		if len(s) >= 4 && isHex(s[2]) && isHex(s[3]) {
			return 4, string(rune(unhex(s[2])<<4 | unhex(s[3])))
		}
	}
	return 0, ""
}

func hex4(s string) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		if !isHex(s[i]) {
			return 0, false
		}
		r = r<<4 | rune(unhex(s[i]))
	}
	return r, true
}
