// Package diagtext prints diagnostics for a person: at a terminal each one as rustc and
// Terraform print theirs (the code and message, where it is, the source line with the span
// underlined, a help line), in colour unless NO_COLOR is set; elsewhere one line each, the
// `file:line:col: error|warning: message [CODE]` form scripts match on. Every command that
// reports diagnostics (halo validate, halo fmt, and each command that loads a program)
// prints them here.
package diagtext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/lang"
)

// Style says how diagnostics are printed.
type Style struct {
	// Rich prints the source line and help under each diagnostic; otherwise one line each.
	Rich bool
	// Color adds ANSI colours to a rich diagnostic.
	Color bool
}

// StyleFor is the style of diagnostics written to f's stderr: rich at a terminal, coloured
// there unless NO_COLOR is set.
func StyleFor(f *cmdutil.Factory) Style {
	_, noColor := f.Env.Lookup("NO_COLOR")
	return Style{Rich: f.IO.ErrTTY, Color: f.IO.ErrTTY && !noColor}
}

// Print writes diags to f's stderr in the style for it. src returns a file's text (nil: no
// source line is quoted).
func Print(f *cmdutil.Factory, diags lang.Diagnostics, src func(string) ([]byte, bool)) {
	Write(f.IO.ErrOut, diags, src, StyleFor(f))
}

const (
	bold   = "\x1b[1m"
	red    = "\x1b[1;31m"
	yellow = "\x1b[1;33m"
	blue   = "\x1b[1;34m"
	cyan   = "\x1b[1;36m"
	reset  = "\x1b[0m"
)

// Write writes diags to w in style st. Text from the files (messages quote it, the source
// line is it) is written through termsafe, so a file cannot send a terminal control codes.
func Write(w io.Writer, diags lang.Diagnostics, src func(string) ([]byte, bool), st Style) {
	if !st.Rich {
		for _, d := range diags {
			fmt.Fprintln(w, termsafe.String(d.String()))
		}
		return
	}
	p := &printer{w: w, st: st, src: src}
	var codes []string
	seen := map[string]bool{}
	for _, d := range diags {
		p.diagnostic(d)
		if d.Code != "" && !seen[d.Code] {
			seen[d.Code] = true
			codes = append(codes, d.Code)
		}
	}
	if len(codes) > 0 {
		fmt.Fprintf(w, "%s\n", p.paint(bold, "For more about a code, run halo explain CODE ("+strings.Join(codes, ", ")+")."))
	}
}

type printer struct {
	w   io.Writer
	st  Style
	src func(string) ([]byte, bool)
	// The file last read, and its index.
	file string
	text []byte
	idx  *lang.LineIndex
}

func (p *printer) paint(color, s string) string {
	if !p.st.Color {
		return s
	}
	return color + s + reset
}

func (p *printer) diagnostic(d lang.Diagnostic) {
	color := red
	if d.Severity == lang.Warning {
		color = yellow
	}
	head := string(d.Severity)
	if d.Code != "" {
		head += "[" + d.Code + "]"
	}
	fmt.Fprintf(p.w, "%s%s\n", p.paint(color, head), p.paint(bold, ": "+termsafe.String(d.Message)))
	line := d.Pos.String()
	if !d.IsValid() && d.File == "" {
		line = ""
	}
	gutter := 1
	var text []byte
	var lineStart, lineEnd int
	if dl := int(d.Line); d.IsValid() && p.load(d.File) && dl <= p.idx.Lines() {
		text = p.text
		lineStart, lineEnd = p.idx.LineStart(dl), p.idx.LineEnd(text, dl)
		gutter = len(strconv.Itoa(dl))
	}
	pad := strings.Repeat(" ", gutter)
	if line != "" {
		fmt.Fprintf(p.w, "%s%s %s\n", pad, p.paint(blue, "-->"), termsafe.String(line))
	}
	if text != nil {
		start, end, _ := p.idx.TokenSpan(text, int(d.Line), int(d.Col))
		shown, caretAt, caretLen := render(text[lineStart:lineEnd], start.Offset-lineStart, end.Offset-lineStart)
		fmt.Fprintf(p.w, "%s %s\n", pad, p.paint(blue, "|"))
		fmt.Fprintf(p.w, "%s %s %s\n", p.paint(blue, strconv.Itoa(int(d.Line))), p.paint(blue, "|"), shown)
		fmt.Fprintf(p.w, "%s %s %s%s\n", pad, p.paint(blue, "|"), strings.Repeat(" ", caretAt), p.paint(color, strings.Repeat("^", max(1, caretLen))))
	}
	if d.Help != "" {
		fmt.Fprintf(p.w, "%s %s %s\n", pad, p.paint(blue, "="), p.paint(cyan, "help:")+" "+termsafe.String(d.Help))
	}
	fmt.Fprintln(p.w)
}

// load reads file's text once for the diagnostics that follow in it.
func (p *printer) load(file string) bool {
	if p.idx != nil && file == p.file {
		return true
	}
	if p.src == nil {
		return false
	}
	b, ok := p.src(file)
	if !ok {
		return false
	}
	p.file, p.text, p.idx = file, b, lang.NewLineIndex(b)
	return true
}

// render returns a source line as a terminal shows it (a tab as four spaces, a control
// character as its escape), and where the span [from, to) of its bytes starts and how wide
// it is there, in columns.
func render(line []byte, from, to int) (shown string, at, width int) {
	var b strings.Builder
	col := 0
	for i := 0; i <= len(line); {
		if i == from {
			at = col
		}
		if i == to {
			width = col - at
		}
		if i == len(line) {
			break
		}
		r, size := utf8.DecodeRune(line[i:])
		var s string
		switch {
		case r == '\t':
			s = "    "
		case r == utf8.RuneError && size == 1:
			s = fmt.Sprintf(`\x%02x`, line[i])
		default:
			s = termsafe.String(string(r))
		}
		b.WriteString(s)
		col += utf8.RuneCountInString(s)
		i += size
	}
	return b.String(), at, width
}
