package check

import (
	"fmt"

	"halolang.dev/halo/host/lang"
)

// A hint is the help a diagnostic gives on how to fix it: a sentence ("did you mean Docs?")
// and, when the fix is to write another name where the diagnostic points, that name. It is
// passed among a diagnostic's arguments (formatted as "; help" where a message is one line),
// and report takes it out of the message into the diagnostic's Help and Suggestions.
type hint struct {
	help        string
	replacement string
}

// String is the hint as the end of a one-line message.
func (h hint) String() string {
	if h.help == "" {
		return ""
	}
	return "; " + h.help
}

// textOnly is h without its replacement: for a diagnostic whose span is more than the name
// the hint is about (a template inside a string).
func (h hint) textOnly() hint { return hint{help: h.help} }

// report appends a diagnostic. A hint among args becomes its Help (and a Suggestion when it
// has a replacement) instead of part of the message.
func (c *checker) report(pos lang.Pos, sev lang.Severity, code, format string, args ...any) {
	var help hint
	for i, a := range args {
		if h, ok := a.(hint); ok {
			if h.help != "" {
				help = h
			}
			args[i] = ""
		}
	}
	d := lang.Diagnostic{Pos: pos, Severity: sev, Code: code, Message: fmt.Sprintf(format, args...), Help: help.help}
	if help.replacement != "" {
		d.Suggestions = []lang.Suggestion{{Replacement: help.replacement}}
	}
	c.diags = append(c.diags, d)
}
