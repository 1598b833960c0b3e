package lang

import "strings"

// docLines follows the comments that start in column 1 as the scanner meets them: the run of
// them on consecutive lines that ended last, so that a pipeline's doc comment is there when
// its keyword is read, without indexing the file's lines.
type docLines struct {
	spans [][2]int // each comment's bytes in src, markers included
	last  int      // the line of the run's last comment
}

// add records the comment src[start:end] that starts line line in column 1.
func (d *docLines) add(line, start, end int) {
	if line != d.last+1 {
		d.spans = d.spans[:0]
	}
	d.spans = append(d.spans, [2]int{start, end})
	d.last = line
}

// above returns the doc comment of a declaration whose keyword is on line: the comment lines
// right above it, each without its marker and one following space, or "" when there are
// none.
func (d *docLines) above(src []byte, line int) string {
	if len(d.spans) == 0 || d.last != line-1 {
		return ""
	}
	lines := make([]string, 0, len(d.spans))
	for _, sp := range d.spans {
		text := string(src[sp[0]:sp[1]])
		rest, ok := strings.CutPrefix(text, "#")
		if !ok {
			rest = strings.TrimPrefix(text, "//")
		}
		lines = append(lines, strings.TrimRight(strings.TrimPrefix(rest, " "), " \t"))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// lineStarts returns the byte offset where each line of src starts, counting lines as the
// scanner does ("\n", "\r\n" or a lone "\r" ends one).
func lineStarts(src []byte) []int {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(src) && src[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}
