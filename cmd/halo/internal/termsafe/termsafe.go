// Package termsafe makes untrusted text safe to write to a terminal. Package and MCP
// descriptions, tool output, model answers, error messages and plugin logs can hold bytes a
// terminal acts on instead of showing: escape sequences that clear the screen, hide text,
// move the cursor over what was printed, or set the clipboard (OSC 52). Every command writes
// such text through String or Writer, never raw.
//
// String shows each control character as its \uXXXX escape, which is also how JSON writes
// it, so a JSON document passed through it decodes to the same value.
package termsafe

import (
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every character a terminal would act on replaced by its visible
// escape (ESC becomes `\u001b`): the C0 controls except tab and newline, DEL, the C1
// controls (U+0080–U+009F, which some terminals read as ESC sequences too), and the
// bidirectional controls that reorder what is shown (U+061C, U+200E, U+200F,
// U+202A–U+202E, U+2066–U+2069). A carriage return before a newline is dropped (CRLF
// text prints as lines); any other is escaped, since it would let text overwrite its own
// line. Bytes that are not UTF-8 become U+FFFD.
func String(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s // nothing to escape: the common case, unchanged
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// CRLF: the newline that follows is kept.
		case unsafe(r):
			const hex = "0123456789abcdef"
			b.WriteString(`\u`)
			b.WriteByte(hex[r>>12&0xf])
			b.WriteByte(hex[r>>8&0xf])
			b.WriteByte(hex[r>>4&0xf])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns where in s the first character String changes is, or len(s). Text
// beyond ASCII that is safe (the µ of a duration, é, 日本語) is passed over, not rebuilt: a
// halo serve access log line holding a duration in µs took 1.7 µs to clean where a plain
// one takes a scan.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r) {
			return i
		}
		i += size
	}
	return len(s)
}

// unsafe reports whether a terminal would act on r rather than show it.
func unsafe(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Writer returns a writer that writes String of each Write to w. Each Write is cleaned on its
// own, so writers that emit whole lines (fmt.Fprintf, a logger) are what it is for; a rune
// split across two Writes shows as U+FFFD. It reports len(p) written when w took everything.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct{ w io.Writer }

func (t *writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
