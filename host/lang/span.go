package lang

import "unicode/utf8"

// A Location is a place in a file's text as tools address it: a 1-based line, a 1-based
// column in runes (as Pos counts them), and the 0-based byte offset from the file's start.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Offset int `json:"offset"`
}

// A LineIndex knows where each line of a text starts, so that a line and column become a
// byte offset and back without reading the text from its start. Lines end as the scanner
// ends them: "\n", "\r\n" or a lone "\r".
type LineIndex struct {
	starts []int
	size   int
}

// NewLineIndex indexes text's lines.
func NewLineIndex(text []byte) *LineIndex {
	starts := lineStarts(text)
	if len(text) >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF {
		starts[0] = 3 // a byte order mark is not a column
	}
	return &LineIndex{starts: starts, size: len(text)}
}

// Lines is the number of lines (a text that ends with a line break has an empty last one).
func (x *LineIndex) Lines() int { return len(x.starts) }

// LineStart is the byte offset where line (1-based) starts; line 0 or past the end gives
// the start of the first or the end of the text.
func (x *LineIndex) LineStart(line int) int {
	switch {
	case line < 1:
		return x.starts[0]
	case line > len(x.starts):
		return x.size
	}
	return x.starts[line-1]
}

// LineEnd is the byte offset where line's text ends, before its line break.
func (x *LineIndex) LineEnd(text []byte, line int) int {
	end := x.size
	if line >= 1 && line < len(x.starts) {
		end = x.starts[line]
	}
	for end > x.LineStart(line) && (text[end-1] == '\n' || text[end-1] == '\r') {
		end--
	}
	return end
}

// Offset is the byte offset of line and column (1-based, runes) in text; a column past the
// line's end stops at the end.
func (x *LineIndex) Offset(text []byte, line, col int) int {
	off := x.LineStart(line)
	end := x.LineEnd(text, line)
	for c := 1; c < col && off < end; c++ {
		_, size := utf8.DecodeRune(text[off:end])
		off += size
	}
	return off
}

// Location returns the line, column and offset of a byte offset in text.
func (x *LineIndex) Location(text []byte, off int) Location {
	off = max(0, min(off, x.size))
	// The last line starting at or before off.
	lo, hi := 0, len(x.starts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if x.starts[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	start := x.starts[lo]
	if off < start {
		off = start // inside a byte order mark
	}
	return Location{Line: lo + 1, Column: utf8.RuneCount(text[start:off]) + 1, Offset: off}
}

// TokenSpan returns the span of the token that starts at line and column of text: a name,
// a string, a number, a quoted name, an operator, or a whole provider/model id. A place
// where no token starts (a space, the end of a line) gives an empty span there. ok is false
// when line is not a line of text.
func (x *LineIndex) TokenSpan(text []byte, line, col int) (start, end Location, ok bool) {
	if line < 1 || line > len(x.starts) || col < 1 {
		return Location{}, Location{}, false
	}
	off := x.Offset(text, line, col)
	start = Location{Line: line, Column: col, Offset: off}
	if got := x.Location(text, off); got.Column != col {
		start.Column = got.Column // past the line's end
	}
	end = start
	lineEnd := x.LineEnd(text, line)
	if off >= lineEnd {
		return start, end, true
	}
	switch c := text[off]; {
	case c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '#' || c == '/' && off+1 < len(text) && text[off+1] == '/':
		return start, end, true
	}
	var none Diagnostics
	s := &scanner{src: text[:lineEnd], off: off, line: line, col: start.Column, diags: &none, flush: func([]token) {}}
	s.step()
	if len(s.toks) == 1 && s.toks[0].kind == tIdent && s.off < lineEnd && text[s.off] == '/' {
		s.scanModel() // provider/model: the model part is not a token of its own
	}
	end = Location{Line: line, Column: s.col, Offset: s.off}
	return start, end, true
}
