package lang

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic stops a program from running.
type Severity string

const (
	// Error diagnostics make `halo validate` exit 1; a program with one is not run.
	Error Severity = "error"
	// Warning diagnostics are reported but do not stop anything.
	Warning Severity = "warning"
)

// Stable diagnostic codes of reading and parsing. Users match on them; never change or reuse
// one. The codes of validation are host/check's.
const (
	CodeSyntax = "SYNTAX" // the text does not follow the grammar
	CodeIO     = "IO"     // a file that could not be read
)

// A Diagnostic is one problem found in a program, with where it is and how bad.
type Diagnostic struct {
	// Pos is embedded so the JSON shape is flat: file, line, column, severity, code, message.
	Pos
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	// Help says how to fix it, when something fits ("did you mean Docs?"); "" when nothing
	// does.
	Help string `json:"help,omitempty"`
	// Suggestions are the fixes a tool can apply: each replaces the diagnostic's span.
	Suggestions []Suggestion `json:"suggestions,omitempty"`
	// Start and End are the span in the file's text (End just after its last character),
	// filled in by Locate from the source; nil when the file's text is not known.
	Start *Location `json:"start,omitempty"`
	End   *Location `json:"end,omitempty"`
}

// A Suggestion is one machine-applicable fix: put Replacement where Start to End is.
// Locate fills the range with the diagnostic's span.
type Suggestion struct {
	Replacement string    `json:"replacement"`
	Start       *Location `json:"start,omitempty"`
	End         *Location `json:"end,omitempty"`
}

// String formats d as `file:line:col: error|warning: message[; help] [CODE]`.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s [%s]", d.Pos, d.Severity, d.Text(), d.Code)
}

// Text is the message with its help, as one sentence: "undeclared tool Doc; did you mean
// Docs?".
func (d Diagnostic) Text() string {
	if d.Help == "" {
		return d.Message
	}
	return d.Message + "; " + d.Help
}

// Diagnostics is a list of problems, reported all at once.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns only the error diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if d.Severity == Error {
			out = append(out, d)
		}
	}
	return out
}

// Sort orders the diagnostics by file, line and column, keeping the order of equal ones.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].Pos.Before(ds[j].Pos) })
}

// Err returns the diagnostics as an error when any is an error, else nil. The error has
// the code of the first error and lists every diagnostic, one a line.
func (ds Diagnostics) Err() error {
	if !ds.HasErrors() {
		return nil
	}
	return &DiagnosticsError{Diags: ds}
}

// A DiagnosticsError is a program that did not validate.
type DiagnosticsError struct {
	Diags Diagnostics
}

func (e *DiagnosticsError) Error() string {
	lines := make([]string, len(e.Diags))
	for i, d := range e.Diags {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// ErrorCode returns the code of the first error diagnostic.
func (e *DiagnosticsError) ErrorCode() string {
	for _, d := range e.Diags {
		if d.Severity == Error {
			return d.Code
		}
	}
	return ""
}

// errorf appends an error diagnostic.
func (ds *Diagnostics) errorf(pos Pos, code, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Pos: pos, Severity: Error, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Add appends a diagnostic; host/check reports through it.
func (ds *Diagnostics) Add(pos Pos, sev Severity, code, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Pos: pos, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Locate fills in every diagnostic's Start and End (and its suggestions' ranges) from the
// text of its file, which src returns (false when it is not known: the diagnostic then keeps
// only its line and column). The span is the token that starts at the diagnostic's
// position: the name, string, number or model id it is about.
func (ds Diagnostics) Locate(src func(file string) ([]byte, bool)) {
	var file string
	var text []byte
	var idx *LineIndex
	for i := range ds {
		d := &ds[i]
		if !d.IsValid() {
			continue
		}
		if idx == nil || d.File != file {
			b, ok := src(d.File)
			if !ok {
				continue
			}
			file, text, idx = d.File, b, NewLineIndex(b)
		}
		start, end, ok := idx.TokenSpan(text, int(d.Line), int(d.Col))
		if !ok {
			continue
		}
		d.Start, d.End = &start, &end
		for j := range d.Suggestions {
			s := &d.Suggestions[j]
			if s.Start == nil {
				s.Start, s.End = &start, &end
			}
		}
	}
}
