// Package docs holds the user documentation the halo binary carries: the error code
// entries of errors.md, which `halo explain CODE` prints.
package docs

import (
	_ "embed"
	"strings"
)

//go:embed errors.md
var errorsMD string

// An Entry is one error code's entry in errors.md.
type Entry struct {
	Code string
	// Text is the entry as written (markdown), without its heading.
	Text string
}

// Explain returns the entry of code (upper case, as the code is written), and false when
// errors.md has none.
func Explain(code string) (Entry, bool) {
	for _, e := range Entries() {
		if e.Code == code {
			return e, true
		}
	}
	return Entry{}, false
}

// Entries lists every code's entry in the order errors.md gives them: each `### `CODE“
// heading and what follows it up to the next heading.
func Entries() []Entry {
	var out []Entry
	var cur *Entry
	var b strings.Builder
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(b.String())
			out = append(out, *cur)
			cur = nil
		}
		b.Reset()
	}
	for _, line := range strings.Split(errorsMD, "\n") {
		if strings.HasPrefix(line, "#") {
			flush()
			if code, ok := strings.CutPrefix(line, "### `"); ok && strings.HasSuffix(code, "`") {
				cur = &Entry{Code: strings.TrimSuffix(code, "`")}
			}
			continue
		}
		if cur != nil {
			b.WriteString(line + "\n")
		}
	}
	flush()
	return out
}
