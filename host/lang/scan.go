package lang

import (
	"strconv"
	"unicode/utf8"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tModel // the raw provider/model id right after `agent Name [`
	tLParen
	tRParen
	tLBrack
	tRBrack
	tLBrace
	tRBrace
	tComma
	tColon
	tDot
	tAmp
	tAt
	tLess
	tGreater
	tArrow    // ->
	tThen     // |>
	tLoop     // |<>
	tFallback // |?
	tFanOut   // |*
	tYield    // |!
	tListen   // ~>
	tQuoted   // `a quoted name`: a method name an MCP server gives, such as `files.read`
)

var tokNames = [...]string{
	tEOF: "end of declaration", tIdent: "name", tString: "string", tNumber: "number", tModel: "model id",
	tLParen: "'('", tRParen: "')'", tLBrack: "'['", tRBrack: "']'", tLBrace: "'{'", tRBrace: "'}'",
	tComma: "','", tColon: "':'", tDot: "'.'", tAmp: "'&'", tAt: "'@'", tLess: "'<'", tGreater: "'>'",
	tArrow: "'->'", tThen: "'|>'", tLoop: "'|<>'", tFallback: "'|?'", tFanOut: "'|*'", tYield: "'|!'",
	tListen: "'~>'", tQuoted: "quoted name",
}

func (k tokKind) String() string {
	if int(k) < len(tokNames) {
		return tokNames[k]
	}
	return "token"
}

func (k tokKind) isStageOp() bool { return k >= tThen && k <= tListen }

// A token is one lexeme. text is the identifier, the decoded string, the number as
// written, or the model id.
type token struct {
	kind tokKind
	text string
	// line and col are where the token starts; eline and ecol just after its last character.
	// (The file name is the parser's, which keeps tokens small.)
	line, col, eline, ecol int32
	// bol reports whether the token is the first on its line.
	bol bool
	// depth is the bracket nesting the token sits in (an opener counts outside itself).
	depth int32
}

// maxDiags bounds the diagnostics of one file, so garbage input cannot make a huge report.
const maxDiags = 100

// A scanner turns source bytes into tokens.
type scanner struct {
	file  string
	src   []byte
	off   int
	line  int
	col   int // column of src[off], in runes
	depth int
	bol   bool
	// toks holds the tokens of the declaration being read; flush hands them to the parser
	// when the next declaration starts, and the buffer is reused.
	toks []token
	// fast is how long toks may grow by emit's short way: cap(toks) after a token that is
	// not first on its line, 0 at the start of a line (so the next token takes the long way).
	fast  int
	flush func([]token)
	diags *Diagnostics
	// names interns identifiers: a program repeats its names many times.
	names interner
	// strBuf is where a string with escapes is decoded (scanString).
	strBuf []byte
	// comment, when not nil, is told of each comment: where it starts, and its bytes
	// src[start:end] (the formatter keeps them; the parser does not need them).
	comment func(pos Pos, start, end int)
	// docs follows comments in column 1; doc is the doc comment of the declaration being
	// read when it is a pipeline.
	docs docLines
	doc  string
	// agentAt is 1 + the index in toks of the name right after an `agent` keyword at the
	// start of a line (0: none), the name a model id follows.
	agentAt int
}

func (s *scanner) errorf(pos Pos, format string, args ...any) {
	if len(*s.diags) < maxDiags {
		s.diags.errorf(pos, CodeSyntax, format, args...)
	}
}

func (s *scanner) pos() Pos { return Pos{File: s.file, Line: int32(s.line), Col: int32(s.col)} }

// advance moves past n bytes that hold no newline and form whole runes (or single bad bytes).
func (s *scanner) advance(n int) {
	end := s.off + n
	for s.off < end {
		_, size := utf8.DecodeRune(s.src[s.off:])
		s.off += size
		s.col++
	}
}

// advance1 is advance(1): past one ASCII byte without decoding it, or one rune.
func (s *scanner) advance1() {
	if s.src[s.off] < utf8.RuneSelf {
		s.off++
		s.col++
		return
	}
	s.advance(1)
}

func (s *scanner) newline() {
	s.line++
	s.col = 1
	s.bol = true
	s.fast = 0
}

// emit appends a token that starts at line:col and ends at the scanner's place, at the
// bracket depth s.depth (scanPunct moves the depth around brackets). It is small enough to
// be inlined into each token's scan: most tokens are neither first on their line nor first
// of their declaration, and only those take emitSlow's longer way.
func (s *scanner) emit(k tokKind, text string, line, col int) {
	n := len(s.toks)
	if n >= s.fast {
		s.emitSlow(k, text, line, col)
		return
	}
	s.toks = s.toks[:n+1]
	// The token is written in place, field by field: a token built on the stack and copied
	// in costs a store-forwarding stall per token.
	t := &s.toks[n]
	t.kind, t.text, t.bol = k, text, false
	t.line, t.col, t.eline, t.ecol, t.depth = int32(line), int32(col), int32(s.line), int32(s.col), int32(s.depth)
}

// emitSlow is emit of a token first on its line, first of a declaration, or that finds the
// buffer full: it hands the tokens read so far to flush when the token starts a declaration.
func (s *scanner) emitSlow(k tokKind, text string, line, col int) {
	d := s.depth
	if len(s.toks) > 0 && (k == tEOF || s.bol && col == 1 && s.startsDecl(k, text, d)) {
		s.flush(s.toks)
		s.toks = s.toks[:0]
		s.agentAt = 0
	}
	if k != tEOF {
		if len(s.toks) == 0 {
			s.doc = ""
			if k == tIdent && text == "pipeline" {
				s.doc = s.docs.above(s.src, line)
			}
		}
		n := len(s.toks)
		if n == cap(s.toks) {
			s.toks = append(s.toks, token{})
		} else {
			s.toks = s.toks[:n+1]
		}
		t := &s.toks[n]
		t.kind, t.text, t.bol = k, text, s.bol
		t.line, t.col, t.eline, t.ecol, t.depth = int32(line), int32(col), int32(s.line), int32(s.col), int32(d)
	}
	s.bol = false
	s.fast = cap(s.toks)
}

// startsDecl reports whether a token begins a new top-level declaration: it is first on a line in
// column 1 outside any brackets, and not a line that continues the one before ('&', a stage
// operator, '@', a closing bracket). A declaration keyword followed by a name in column 1
// always starts one, so one unclosed bracket does not swallow the rest of the file.
//
// The token, of kind k and text text at depth depth, is first on its line in column 1.
func (s *scanner) startsDecl(k tokKind, text string, depth int) bool {
	if k == tIdent && isDeclKeyword(text) {
		i := s.off
		for i < len(s.src) && (s.src[i] == ' ' || s.src[i] == '\t') {
			i++
		}
		if i < len(s.src) && isIdentStart(s.src[i]) {
			return true
		}
	}
	switch k {
	case tAmp, tAt, tRParen, tRBrack, tRBrace, tThen, tLoop, tFallback, tFanOut, tYield, tListen:
		return false
	}
	return depth == 0
}

func isIdentStart(c byte) bool { return byteClass[c]&classIdentStart != 0 }

func isIdentChar(c byte) bool { return byteClass[c]&classIdent != 0 }

func isSpace(c byte) bool { return byteClass[c]&classSpace != 0 }

// byteClass says of each byte whether it may start a name, whether it may continue one and
// whether it is a space: one load where the comparisons took up to six, for every byte of
// every name and every space before a token.
var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			t[c] |= classIdentStart | classIdent
		}
		if '0' <= c && c <= '9' {
			t[c] |= classIdent
		}
		if c == ' ' || c == '\t' || c == '\f' || c == '\v' {
			t[c] |= classSpace
		}
		if c == '"' || c == '\\' || c == '\n' || c == '\r' || c >= utf8.RuneSelf {
			t[c] |= classStringEnd
		}
	}
	return t
}()

const (
	classIdentStart = 1 << iota
	classIdent
	classSpace
	classStringEnd // ends a string's plain run: '"', '\\', a line break, a non-ASCII byte
)

// leads says what a token starting with each byte is, so step takes one jump where a chain
// of comparisons took up to eight (most tokens are punctuation, the last of the chain).
var leads = func() (t [256]lead) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '\n':
			t[c] = leadNewline
		case c == '\r':
			t[c] = leadReturn
		case c == '#' || c == '/':
			t[c] = leadComment
		case c == '"':
			t[c] = leadString
		case c == '`':
			t[c] = leadQuoted
		case byteClass[c]&classIdentStart != 0:
			t[c] = leadIdent
		case '0' <= c && c <= '9':
			t[c] = leadDigit
		case c == '-' || c == '.':
			t[c] = leadSign
		default:
			t[c] = leadPunct
		}
	}
	return t
}()

type lead uint8

const (
	leadPunct lead = iota
	leadNewline
	leadReturn
	leadComment // '#', or '/' when '/' follows
	leadString
	leadQuoted
	leadIdent
	leadDigit
	leadSign // '-' or '.', a number when a digit follows
)

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scan tokenizes the whole source, handing each top-level declaration's tokens to flush as
// soon as the next one starts (so a large file never holds all its tokens at once). The
// slice passed to flush is reused afterwards.
func scan(file string, src []byte, diags *Diagnostics, flush func([]token)) {
	s := &scanner{file: file, src: src, line: 1, col: 1, bol: true, diags: diags, flush: flush}
	s.run()
}

// run reads the whole source.
func (s *scanner) run() {
	s.toks = make([]token, 0, 256)
	s.names.sizeFor(len(s.src))
	if len(s.src) >= 3 && s.src[0] == 0xEF && s.src[1] == 0xBB && s.src[2] == 0xBF {
		s.off = 3 // a UTF-8 byte order mark is not a column
	}
	// step, with its two commonest tokens' calls made here: the loop takes the spaces before
	// a token and a name or punctuation without the call of step for each.
	src := s.src
	for off := s.off; off < len(src); off = s.off {
		c := src[off]
		if byteClass[c]&classSpace != 0 {
			for off++; off < len(src) && byteClass[src[off]]&classSpace != 0; off++ {
			}
			s.col += off - s.off
			s.off = off
			if off == len(src) {
				break
			}
			c = src[off]
		}
		switch leads[c] {
		case leadIdent:
			s.scanIdent()
		case leadPunct:
			s.scanPunct(c)
		default:
			s.step()
		}
	}
	s.bol, s.fast = true, 0
	s.emit(tEOF, "", s.line, s.col)
}

// step reads the spaces at s.off, then what follows them: a line break, a comment or one
// token. (Taking the spaces with what follows them makes one call of most tokens and the
// space before them: there is a space before about half of a program's tokens.)
func (s *scanner) step() {
	src, off := s.src, s.off
	for byteClass[src[off]]&classSpace != 0 {
		off++
		if off == len(src) {
			s.col += off - s.off
			s.off = off
			return
		}
	}
	s.col += off - s.off
	s.off = off
	c := src[off]
	switch leads[c] {
	case leadNewline:
		s.off++
		s.newline()
	case leadReturn:
		s.off++
		if s.off < len(src) && src[s.off] == '\n' {
			s.off++
		}
		s.newline()
	case leadComment:
		if c == '/' && s.peek(1) != '/' {
			s.scanPunct(c)
			return
		}
		s.scanComment()
	case leadString:
		s.scanString()
	case leadQuoted:
		s.scanQuoted()
	case leadIdent:
		s.scanIdent()
	case leadDigit:
		s.scanNumber()
	case leadSign:
		if isDigit(s.peek(1)) && (c == '-' || !s.afterIdent()) {
			s.scanNumber()
		} else {
			s.scanPunct(c)
		}
	default:
		s.scanPunct(c)
	}
}

// scanComment reads a comment, '#' or '//' to the end of the line.
func (s *scanner) scanComment() {
	pos, start := s.pos(), s.off
	for s.off < len(s.src) && s.src[s.off] != '\n' && s.src[s.off] != '\r' {
		s.advance1()
	}
	if pos.Col == 1 {
		s.docs.add(int(pos.Line), start, s.off)
	}
	if s.comment != nil {
		s.comment(pos, start, s.off)
	}
}

func (s *scanner) peek(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

// afterIdent reports whether the previous token ends right here, as in `a.1`.
func (s *scanner) afterIdent() bool {
	if len(s.toks) == 0 {
		return false
	}
	t := s.toks[len(s.toks)-1]
	return t.kind == tIdent && int(t.eline) == s.line && int(t.ecol) == s.col
}

func (s *scanner) scanIdent() {
	src, start := s.src, s.off
	i := start
	h := fnvOffset
	for i < len(src) {
		c := src[i]
		// A '-' joins two name parts (`get-sum`, MCP method names); `a->b` and `a - b` do not.
		if byteClass[c]&classIdent == 0 && (c != '-' || i+1 == len(src) || byteClass[src[i+1]]&classIdent == 0) {
			break
		}
		h = (h ^ uint32(c)) * fnvPrime
		i++
	}
	text := s.names.intern(src[start:i], h)
	line, col := s.line, s.col
	s.off = i
	s.col += i - start
	agent := s.bol && col == 1 && text == "agent"
	s.emit(tIdent, text, line, col)
	if agent {
		s.agentAt = len(s.toks)
		return
	}
	// `agent Name [` is followed by a provider/model id whose characters ('/', '.', ':', '-')
	// are not tokens of their own; it is read raw up to ',', ']' or a space.
	if s.agentAt != 0 && s.agentAt == len(s.toks)-1 {
		s.agentAt = 0
		s.skipSpaces()
		if s.off < len(s.src) && s.src[s.off] == '[' {
			s.scanPunct('[')
			s.skipSpaces()
			s.scanModel()
		}
	}
}

func (s *scanner) skipSpaces() {
	for s.off < len(s.src) && (s.src[s.off] == ' ' || s.src[s.off] == '\t') {
		s.off++
		s.col++
	}
}

func (s *scanner) scanModel() {
	if s.off >= len(s.src) || s.src[s.off] == '"' {
		return // a quoted id is an ordinary string
	}
	pos := s.pos()
	start := s.off
	for s.off < len(s.src) {
		c := s.src[s.off]
		if c == ',' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#' {
			break
		}
		s.advance1()
	}
	if s.off > start {
		s.emit(tModel, s.names.intern(s.src[start:s.off], fnv(s.src[start:s.off])), int(pos.Line), int(pos.Col))
	}
}

func (s *scanner) scanNumber() {
	pos := s.pos()
	start := s.off
	i := s.off
	if s.src[i] == '-' {
		i++
	}
	for i < len(s.src) && isDigit(s.src[i]) {
		i++
	}
	if i < len(s.src) && s.src[i] == '.' && i+1 < len(s.src) && isDigit(s.src[i+1]) {
		i++
		for i < len(s.src) && isDigit(s.src[i]) {
			i++
		}
	}
	if i < len(s.src) && (s.src[i] == 'e' || s.src[i] == 'E') {
		j := i + 1
		if j < len(s.src) && (s.src[j] == '+' || s.src[j] == '-') {
			j++
		}
		if j < len(s.src) && isDigit(s.src[j]) {
			for j < len(s.src) && isDigit(s.src[j]) {
				j++
			}
			i = j
		}
	}
	text := s.names.intern(s.src[start:i], fnv(s.src[start:i]))
	s.off = i
	s.col += i - start
	if i < len(s.src) && isIdentStart(s.src[i]) {
		s.errorf(s.pos(), "unexpected %q after number %s", s.src[i], text)
	}
	s.emit(tNumber, text, int(pos.Line), int(pos.Col))
}

func (s *scanner) scanString() {
	pos := s.pos()
	s.off++ // the opening quote
	s.col++
	// Fast path: most strings are plain ASCII without escapes; take them in one piece,
	// interned, since a program repeats many of its strings (paths, templates, patterns).
	h := fnvOffset
	src := s.src
	for i := s.off; i < len(src); i++ {
		c := src[i]
		if byteClass[c]&classStringEnd != 0 {
			if c != '"' {
				break
			}
			text := s.names.intern(src[s.off:i], h)
			s.col += i - s.off + 1
			s.off = i + 1
			s.emit(tString, text, int(pos.Line), int(pos.Col))
			return
		}
		h = (h ^ uint32(c)) * fnvPrime
	}
	// The slow way (escapes, other characters, no closing quote) decodes into the scanner's
	// buffer, reused from string to string, and interns what it decoded: a program repeats
	// its escaped strings (regexes) as it does the others, and a builder grown byte by byte
	// for each made about two allocations a string.
	b := s.strBuf[:0]
	for {
		if s.off >= len(s.src) || s.src[s.off] == '\n' || s.src[s.off] == '\r' {
			s.errorf(pos, "string not terminated: a string ends with '\"' on the line it starts")
			s.endString(b, pos)
			return
		}
		c := s.src[s.off]
		switch {
		case c == '"':
			s.advance(1)
			s.endString(b, pos)
			return
		case c == '\\':
			b = s.scanEscape(b)
		case c < utf8.RuneSelf:
			b = append(b, c)
			s.off++
			s.col++
		default:
			r, size := utf8.DecodeRune(s.src[s.off:])
			if r == utf8.RuneError && size == 1 {
				s.errorf(s.pos(), "invalid UTF-8 byte %#x in string", c)
			}
			b = utf8.AppendRune(b, r)
			s.off += size
			s.col++
		}
	}
}

// endString emits the string decoded into b, which starts at pos, and keeps b for the next.
func (s *scanner) endString(b []byte, pos Pos) {
	s.strBuf = b[:0]
	s.emit(tString, s.names.intern(b, fnv(b)), int(pos.Line), int(pos.Col))
}

// maxQuoted bounds a quoted name (MCP tool names are at most 128 characters).
const maxQuoted = 128

// scanQuoted reads a `quoted name`: any characters but a backquote and control
// characters, on one line, 1 to maxQuoted of them, taken as they are (no escapes).
func (s *scanner) scanQuoted() {
	pos := s.pos()
	s.advance(1)
	start := s.off
	n := 0
	for s.off < len(s.src) {
		c := s.src[s.off]
		if c == '`' {
			text := string(s.src[start:s.off])
			s.advance(1)
			switch {
			case n == 0:
				s.errorf(pos, "empty quoted name: write the method's name between the backquotes, as in F.`files.read`()")
			case n > maxQuoted:
				s.errorf(pos, "quoted name of %d characters; a name is at most %d", n, maxQuoted)
			}
			s.emit(tQuoted, text, int(pos.Line), int(pos.Col))
			return
		}
		if c == '\n' || c == '\r' {
			break
		}
		r, size := utf8.DecodeRune(s.src[s.off:])
		if r == utf8.RuneError && size == 1 || r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			s.errorf(s.pos(), "character %q in a quoted name: a name has no control characters", r)
		}
		s.off += size
		s.col++
		n++
	}
	s.errorf(pos, "quoted name not terminated: a name ends with '`' on the line it starts")
	s.emit(tQuoted, string(s.src[start:s.off]), int(pos.Line), int(pos.Col))
}

// scanEscape appends the character the escape at s.off stands for to b.
func (s *scanner) scanEscape(b []byte) []byte {
	pos := s.pos()
	e := s.peek(1)
	switch e {
	case '\\', '"', '/', '\'':
		b = append(b, e)
	case 'n':
		b = append(b, '\n')
	case 't':
		b = append(b, '\t')
	case 'r':
		b = append(b, '\r')
	case 'b':
		b = append(b, '\b')
	case 'f':
		b = append(b, '\f')
	case '0':
		b = append(b, 0)
	case 'u':
		hex := ""
		if s.off+6 <= len(s.src) {
			hex = string(s.src[s.off+2 : s.off+6])
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if len(hex) != 4 || err != nil {
			s.errorf(pos, `bad \u escape: want four hex digits, as in \u00e9`)
			s.advance(2)
			return b
		}
		r := rune(v)
		s.advance(6)
		// A surrogate pair written as two escapes is one character.
		if r >= 0xD800 && r < 0xDC00 && s.peek(0) == '\\' && s.peek(1) == 'u' && s.off+6 <= len(s.src) {
			if lo, err := strconv.ParseUint(string(s.src[s.off+2:s.off+6]), 16, 32); err == nil && lo >= 0xDC00 && lo < 0xE000 {
				r = (r-0xD800)<<10 + (rune(lo) - 0xDC00) + 0x10000
				s.advance(6)
			}
		}
		b = utf8.AppendRune(b, r)
		return b
	case 0, '\n', '\r':
		s.errorf(pos, "string not terminated: a backslash ends the line")
		s.advance(1)
		return b
	default:
		// Keep the backslash and the character, so `"\d"` is still readable as a regex, but
		// say how to write it: regexes double their backslashes.
		s.errorf(pos, `unknown escape \%c: write a backslash as \\ (the regex \d is "\\d")`, rune(e))
		b = append(b, '\\')
		s.advance(1)
		return b
	}
	s.advance(2)
	return b
}

// puncts is the token of each byte that is one on its own ('(', ',', '@' ...), tEOF for
// the others.
var puncts = [256]tokKind{
	'(': tLParen, ')': tRParen, '[': tLBrack, ']': tRBrack, '{': tLBrace, '}': tRBrace,
	',': tComma, ':': tColon, '.': tDot, '&': tAmp, '@': tAt, '<': tLess, '>': tGreater,
}

func (s *scanner) scanPunct(c byte) {
	line, col := s.line, s.col
	k := puncts[c]
	n := 1
	switch c {
	case '&':
		if s.peek(1) == '&' {
			n = 2 // `&&` reads as `&`
		}
	case '-':
		if s.peek(1) == '>' {
			k, n = tArrow, 2
		}
	case '~':
		if s.peek(1) == '>' {
			k, n = tListen, 2
		}
	case '|':
		switch s.peek(1) {
		case '>':
			k, n = tThen, 2
		case '?':
			k, n = tFallback, 2
		case '*':
			k, n = tFanOut, 2
		case '!':
			k, n = tYield, 2
		case '<':
			if s.peek(2) == '>' {
				k, n = tLoop, 3
			}
		}
	}
	if k == tEOF {
		pos := s.pos()
		r, size := utf8.DecodeRune(s.src[s.off:])
		switch {
		case r == utf8.RuneError && size == 1:
			s.errorf(pos, "invalid UTF-8 byte %#x", c)
		case c == '|':
			s.errorf(pos, "unknown operator '|': stages start with |>, |<>, |?, |*, |! or ~>")
		default:
			s.errorf(pos, "unexpected character %q", r)
		}
		s.advance(size)
		return
	}
	s.off += n // every operator is ASCII
	s.col += n
	// An opener counts outside itself, a closer outside what it closes.
	switch k {
	case tRParen, tRBrack, tRBrace:
		if s.depth > 0 {
			s.depth--
		}
	case tLParen, tLBrack, tLBrace:
		s.emit(k, "", line, col)
		s.depth++
		return
	}
	s.emit(k, "", line, col)
}

func isDeclKeyword(s string) bool {
	switch s {
	case "policy", "tool", "agent", "schema", "pipeline":
		return true
	}
	return false
}
