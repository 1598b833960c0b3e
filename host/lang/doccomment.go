package lang

import "strings"

// docComment returns the comment lines written right above line (1-based): the `#` or `//`
// lines that start in column 1, with no other line between them and line, each without its
// marker and one following space. It is "" when there are none. starts holds where each
// line of src begins (lineStarts).
func docComment(src []byte, starts []int, line int) string {
	var lines []string
	for l := line - 1; l >= 1 && l <= len(starts); l-- {
		end := len(src)
		if l < len(starts) {
			end = starts[l]
		}
		text := strings.TrimRight(string(src[starts[l-1]:end]), "\r\n")
		if l == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		var rest string
		if r, ok := strings.CutPrefix(text, "#"); ok {
			rest = r
		} else if r, ok := strings.CutPrefix(text, "//"); ok {
			rest = r
		} else {
			break
		}
		lines = append(lines, strings.TrimRight(strings.TrimPrefix(rest, " "), " \t"))
	}
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
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
