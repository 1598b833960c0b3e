package fold

import (
	"strings"
	"unicode/utf8"
)

// LiteralEnd returns the offset just past the JSON string literal that starts with the '"' at
// s[0], and whether it holds a backslash escape. A literal is what encoding/json accepts:
// no control characters (so never a line break), and only the escapes \" \\ \/ \b \f \n \r
// \t and \uXXXX. When s does not start a valid literal, it returns -(k+1), k being the offset
// of the byte that ended the attempt (a control character, a bad escape, or len(s)): no
// literal can start before k that ends after it, so a caller searching for literals goes on
// from k and stays linear.
func LiteralEnd(s string) (end int, escaped bool) {
	i := 1
	for i < len(s) {
		c := s[i]
		if !literalStop[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, escaped
		case c < 0x20:
			return -(i + 1), escaped
		}
		escaped = true
		if i+1 >= len(s) {
			return -(len(s) + 1), escaped
		}
		switch s[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if _, ok := hex4(s[i+2:]); !ok {
				return -(i + 1), escaped
			}
			i += 6
		default:
			return -(i + 1), escaped
		}
	}
	return -(len(s) + 1), escaped
}

// literalStop marks the bytes that end a run of plain characters in a JSON string literal.
var literalStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// Unquote decodes the JSON escapes of a string literal's content (the text between its
// quotes, as LiteralEnd found it), exactly as encoding/json does: a surrogate pair is one
// character, a lone surrogate U+FFFD. Spans of the decoded text map back to whole escapes.
// No look-alike is folded: the decoded text is a value to detect in like any other.
func Unquote(s string) Text {
	t := Text{Folded: s, orig: s}
	if strings.IndexByte(s, '\\') < 0 {
		return t
	}
	var b strings.Builder
	b.Grow(len(s))
	src := make([]int32, 0, len(s)+1)
	i := 0
	for i < len(s) {
		k := strings.IndexByte(s[i:], '\\')
		if k < 0 {
			k = len(s) - i
		}
		b.WriteString(s[i : i+k])
		for j := i; j < i+k; j++ {
			src = append(src, int32(j))
		}
		i += k
		if i >= len(s) {
			break
		}
		n, out := jsonEscape(s[i:])
		if n == 0 { // not an escape LiteralEnd accepts: keep the backslash as written
			n, out = 1, `\`
		}
		b.WriteString(out)
		for range len(out) {
			src = append(src, int32(i))
		}
		i += n
	}
	src = append(src, int32(len(s)))
	t.Folded, t.src = b.String(), src
	return t
}

// jsonEscape decodes the one JSON escape at the start of s.
func jsonEscape(s string) (int, string) {
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
	case '"', '\\', '/':
		return 2, s[1:2]
	case 'u':
		r, ok := hex4(s[2:])
		if !ok {
			return 0, ""
		}
		n := 6
		if r >= 0xD800 && r < 0xE000 {
			r = utf8.RuneError
			if hi, _ := hex4(s[2:]); hi < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
				if lo, ok := hex4(s[8:]); ok && lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)
					n = 12
				}
			}
		}
		return n, string(r)
	}
	return 0, ""
}

// Tag characters (U+E0020–U+E007E) shadow printable ASCII one for one and are invisible: text
// written in them is read by a model but not by a person. In UTF-8 each is F3 A0 80 A0 to
// F3 A0 81 BE.
const tagPrefix = "\xf3\xa0"

// HasTags reports whether s may hold tag characters.
func HasTags(s string) bool { return strings.Contains(s, tagPrefix) }

// Tags decodes the text hidden in tag characters: each run of them becomes the ASCII it
// shadows, runs separated by a line break. It reports false when s holds no tag run. (String
// removes tag characters, so a word split by one is still seen; Tags reads what they spell.)
func Tags(s string) (Text, bool) {
	var b []byte
	var src []int32
	last := -1 // end of the previous run
	for i := 0; i < len(s); {
		k := strings.Index(s[i:], tagPrefix)
		if k < 0 {
			break
		}
		i += k
		r, size := utf8.DecodeRuneInString(s[i:])
		if r < 0xE0020 || r > 0xE007E {
			i += max(size, 1)
			continue
		}
		if last >= 0 && last != i {
			b = append(b, '\n')
			src = append(src, int32(last)) // a span ending at a run's end stops there
		}
		b = append(b, byte(r-0xE0000))
		src = append(src, int32(i))
		i += size
		last = i
	}
	if b == nil {
		return Text{Folded: s, orig: s}, false
	}
	src = append(src, int32(last))
	return Text{Folded: string(b), orig: s, src: src}, true
}
