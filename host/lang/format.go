package lang

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
)

// ErrFormatChanged is returned by Format when the formatted text would parse to another
// program than the source: a bug in the formatter, reported instead of written.
var ErrFormatChanged = errors.New("formatting would change what the file means; the file is left as it is (please report this)")

// Format returns src in the one canonical layout of Halo files, or the syntax diagnostics
// that keep it from being formatted (a file that does not parse is never formatted).
//
// The layout: a declaration starts in column 1; an agent's system, equips and requires
// lines, a policy's `&` lines and a pipeline's start value are indented by two spaces, its
// stages by four (a branch's arms by two more, their stages by four more); a line that
// continues one is indented two more than it, or than the line that opened the bracket it
// is inside. Tokens are spaced one way (`name: value`, `a, b`, `tool T : P(...)`,
// `{ a: 1 }`, `Array<String>`). Line breaks a file has inside a declaration are kept, and
// at most one blank line. Comments are kept where they are: a comment in column 1 above a
// declaration stays there (a pipeline's doc comment), and a comment at the end of a line
// stays at its end. The result is checked to parse to the same program, and formatting it
// again changes nothing.
func Format(name string, src []byte) ([]byte, Diagnostics) {
	f := &formatter{src: src, idx: NewLineIndex(src)}
	before, diags := parse(name, src, func(toks []token) {
		f.chunks = append(f.chunks, append([]token(nil), toks...))
	}, func(pos Pos, start, end int) {
		f.comments = append(f.comments, comment{line: int(pos.Line), col: int(pos.Col), text: strings.TrimRight(string(src[start:end]), " \t\f\v")})
	})
	if diags.HasErrors() {
		return nil, diags.Errors()
	}
	out := f.format()
	after, diags2 := Parse(name, out)
	if diags2.HasErrors() || !sameProgram(before, after) {
		return nil, Diagnostics{{Pos: Pos{File: name}, Severity: Error, Code: CodeSyntax, Message: ErrFormatChanged.Error()}}
	}
	return out, nil
}

// sameProgram reports whether two parses of a file are the same program: the same
// declarations, node for node, with the same values and doc comments, wherever they are.
func sameProgram(a, b *File) bool {
	return sameNode(reflect.ValueOf(a.Decls), reflect.ValueOf(b.Decls))
}

var posType = reflect.TypeOf(Pos{})

// sameNode compares two values of the syntax tree, leaving out every Pos.
func sameNode(a, b reflect.Value) bool {
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameNode(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !sameNode(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		if a.Type() == posType {
			return true
		}
		for i := 0; i < a.NumField(); i++ {
			// The unexported fields of the tree are places (an Ident's file, line and
			// column), which are left out as a Pos is.
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if !sameNode(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Float64:
		return a.Float() == b.Float() || a.Float() != a.Float() && b.Float() != b.Float()
	case reflect.Int, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	}
	return false // a kind the tree does not hold: never taken for the same
}

type comment struct {
	line, col int
	text      string
}

type formatter struct {
	src      []byte
	idx      *LineIndex
	chunks   [][]token
	comments []comment
	ci       int // the next comment to place
	out      bytes.Buffer
	// lastLine is the source line where what was written last ends.
	lastLine int
	// lineIndent is the indent of the output line being written.
	lineIndent int
}

// An open bracket, and the indent of the line it was opened on.
type open struct {
	kind   tokKind
	indent int
	branch bool // `|> branch {`: its arms and their stages have indents of their own
}

func (f *formatter) text(t token) string {
	if t.kind == tAmp {
		return "&" // `&&` reads as `&`
	}
	from := f.idx.Offset(f.src, int(t.line), int(t.col))
	to := f.idx.Offset(f.src, int(t.eline), int(t.ecol))
	return string(f.src[from:to])
}

func (f *formatter) format() []byte {
	for _, toks := range f.chunks {
		f.topComments(int(toks[0].line))
		if f.out.Len() > 0 {
			f.newline(int(toks[0].line), 0)
		}
		f.decl(toks)
	}
	f.topComments(1 << 30)
	if f.out.Len() > 0 {
		f.out.WriteByte('\n')
	}
	return f.out.Bytes()
}

// newline ends the output line and starts one at indent for what starts on source line
// line, with one blank line between when the source has one or more.
func (f *formatter) newline(line, indent int) {
	f.out.WriteByte('\n')
	if f.lastLine > 0 && line-f.lastLine >= 2 {
		f.out.WriteByte('\n')
	}
	f.out.WriteString(strings.Repeat(" ", indent))
	f.lineIndent = indent
}

// topComments writes the comments that come before source line line between declarations:
// one in column 1 stays there, one indented is indented by two.
func (f *formatter) topComments(line int) {
	for f.ci < len(f.comments) && f.comments[f.ci].line < line {
		c := f.comments[f.ci]
		f.ci++
		if c.line == f.lastLine && f.out.Len() > 0 {
			f.out.WriteString(" " + c.text)
			continue
		}
		indent := 0
		if c.col > 1 {
			indent = 2
		}
		if f.out.Len() > 0 {
			f.newline(c.line, indent)
		} else {
			f.out.WriteString(strings.Repeat(" ", indent))
		}
		f.out.WriteString(c.text)
		f.lastLine = c.line
	}
}

// inComments writes the comments inside a declaration before the token at line:col: at the
// end of the line before, or on lines of their own at indent.
func (f *formatter) inComments(line, col, indent int) {
	for f.ci < len(f.comments) {
		c := f.comments[f.ci]
		if c.line > line || c.line == line && c.col > col {
			return
		}
		f.ci++
		if c.line == f.lastLine {
			f.out.WriteString(" " + c.text)
		} else {
			f.newline(c.line, indent)
			f.out.WriteString(c.text)
		}
		f.lastLine = c.line
	}
}

func isOpener(k tokKind) bool { return k == tLParen || k == tLBrack || k == tLBrace }
func isCloser(k tokKind) bool { return k == tRParen || k == tRBrack || k == tRBrace }

// decl writes one declaration's tokens.
func (f *formatter) decl(toks []token) {
	kind := toks[0].text
	var stack []open
	structIndent := 0 // the indent of the line that lines at depth 0 continue
	headerDone := false
	agentBody := false
	startSeen := false // the pipeline's start value has been written
	for i, t := range toks {
		if i == 0 {
			f.out.WriteString(t.text)
			f.lineIndent = 0
			f.lastLine = int(t.eline)
			continue
		}
		prev := toks[i-1]
		// Where the token would start a line, and whether it must.
		indent, structural, forced := structIndent+2, false, false
		if len(stack) == 0 {
			switch {
			case kind == "agent" && agentBody && t.kind == tIdent && (t.text == "system" || t.text == "equips" || t.text == "requires"):
				indent, structural, forced = 2, true, true
			case kind == "policy" && t.kind == tAmp:
				indent, structural = 2, true
			case kind == "pipeline" && headerDone && prev.kind == tColon && prev.depth == 0 && !startSeen:
				indent, structural, forced = 2, true, true
			case kind == "pipeline" && headerDone && t.kind.isStageOp():
				indent, structural, forced = 4, true, true
			}
		} else {
			top := stack[len(stack)-1]
			switch {
			case isCloser(t.kind):
				indent = top.indent
			case top.branch && t.kind.isStageOp():
				indent, structural, forced = top.indent+4, true, true
			case top.branch && (t.kind == tString || t.kind == tIdent && t.text == "else") && i+1 < len(toks) && toks[i+1].kind == tColon && isArmStart(prev):
				indent, structural = top.indent+2, true
			case top.branch:
				indent = structIndent + 2
			default:
				indent = top.indent + 2
			}
		}
		f.inComments(int(t.line), int(t.col), indent)
		if forced || int(t.line) > f.lastLine {
			f.newline(int(t.line), indent)
			if structural {
				structIndent = indent
			}
		} else if space(prev, t, kind, len(stack)) {
			f.out.WriteByte(' ')
		}
		f.out.WriteString(f.text(t))
		f.lastLine = int(t.eline)
		if headerDone && i > 0 && toks[i-1].kind == tColon && toks[i-1].depth == 0 {
			startSeen = true
		}

		switch {
		case isOpener(t.kind):
			branch := t.kind == tLBrace && prev.kind == tIdent && prev.text == "branch" && i >= 2 && toks[i-2].kind == tThen
			stack = append(stack, open{kind: t.kind, indent: f.lineIndent, branch: branch})
		case isCloser(t.kind) && len(stack) > 0:
			stack = stack[:len(stack)-1]
			if len(stack) == 0 && kind == "agent" && t.kind == tRBrack {
				agentBody = true
			}
		case t.kind == tColon && len(stack) == 0 && kind == "pipeline" && !headerDone:
			headerDone = true
		}
	}
}

// isArmStart reports whether a token after prev can begin a branch arm: after the brace
// that opens the branch, a comma, or the end of the arm before it.
func isArmStart(prev token) bool {
	return prev.kind != tColon && prev.kind != tDot && prev.kind != tThen
}

// space reports whether a space goes between prev and t on one line of a declaration of
// kind, at bracket depth.
func space(prev, t token, kind string, depth int) bool {
	switch t.kind {
	case tRParen, tRBrack, tComma, tDot, tGreater, tLess:
		return false
	case tRBrace:
		return prev.kind != tLBrace
	case tColon:
		// `tool T : P(...)` and `policy P : Rule`; everywhere else `name: value`.
		return depth == 0 && (kind == "tool" || kind == "policy")
	case tLParen:
		return prev.kind != tIdent && prev.kind != tQuoted && prev.kind != tLParen && prev.kind != tLBrack
	}
	switch prev.kind {
	case tLParen, tLBrack, tDot, tAt, tLess:
		return false
	case tLBrace:
		return t.kind != tRBrace
	}
	return true
}
