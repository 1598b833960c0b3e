package store

import (
	"strings"
	"unicode/utf8"
)

// A chunk is one piece of a file as a store indexes it: its text, the lines it came from
// and the headings it sits under.
type chunk struct {
	// Title is the path of headings above the chunk ("Install › From source"), "" when
	// none.
	Title string
	// Text is the chunk's lines as the file has them (a line longer than the size limit is
	// cut into pieces, each a chunk of that one line).
	Text string
	// Start and End are the first and last line, from 1, both included.
	Start, End int
}

// A chunker cuts text into chunks of at most max bytes: at headings first (Markdown's `#`
// lines, outside fenced code), then between paragraphs, then between lines, and a line longer
// than max into pieces. When a section has to be cut for size, the next chunk starts again
// with the last lines of the one before, up to overlap bytes of them, so a sentence cut at a
// chunk's end is whole in one of the two.
type chunker struct {
	max, overlap int
}

// A line of the text being cut.
type line struct {
	text  string
	start int // byte offset in the text
	// heading is the heading's level (1 to 6) for a `#` line outside code, else 0.
	heading int
	// blank lines end paragraphs; a fenced block's blank lines are not blank here.
	blank bool
}

// split cuts text into chunks.
func (c chunker) split(text string) []chunk {
	lines := splitLines(text)
	var out []chunk
	titles := make([]string, 7)
	title := ""
	// The chunk being filled is lines [from, to): n bytes, hasBody when one of them is
	// neither blank nor a heading.
	from, to, n, hasBody := 0, 0, 0, false
	emit := func(a, b int) {
		if b > a {
			if txt := joinLines(text, lines[a:b]); strings.TrimSpace(txt) != "" {
				out = append(out, chunk{Title: title, Text: txt, Start: a + 1, End: b})
			}
		}
	}
	measure := func(a, b int) (size int, body bool) {
		for _, ln := range lines[a:b] {
			size += len(ln.text) + 1
			body = body || (!ln.blank && ln.heading == 0)
		}
		return size, body
	}
	for i, ln := range lines {
		size := len(ln.text) + 1
		switch {
		case ln.heading > 0:
			if hasBody {
				emit(from, to)
				from, to, n, hasBody = i, i, 0, false
			}
			titles[ln.heading] = headingText(ln.text)
			for j := ln.heading + 1; j < len(titles); j++ {
				titles[j] = ""
			}
			if !hasBody {
				title = joinTitles(titles)
			}
		case size > c.max:
			// A line too long for any chunk: what came before is a chunk, then the line in
			// pieces.
			emit(from, to)
			for _, piece := range cut(ln.text, c.max) {
				if strings.TrimSpace(piece) != "" {
					out = append(out, chunk{Title: title, Text: piece, Start: i + 1, End: i + 1})
				}
			}
			from, to, n, hasBody = i+1, i+1, 0, false
			continue
		}
		overlap := true
		for n+size > c.max && hasBody {
			// Full: end the chunk at its last paragraph break past its middle, else here;
			// the next starts with up to overlap bytes of the lines before the cut (the
			// first time), then the lines after it.
			end, head := to, 0
			for j := from; j < to; j++ {
				head += len(lines[j].text) + 1
				if lines[j].blank && head >= c.max/2 {
					end = j + 1
				}
			}
			emit(from, end)
			next := end
			if overlap && c.overlap > 0 {
				for w := 0; next > from+1 && w+len(lines[next-1].text)+1 <= c.overlap; next-- {
					w += len(lines[next-1].text) + 1
				}
			}
			overlap = false
			from = next
			n, hasBody = measure(from, to)
		}
		to = i + 1
		n += size
		hasBody = hasBody || (!ln.blank && ln.heading == 0)
	}
	emit(from, to)
	return out
}

// splitLines cuts text at '\n' (a '\r' before it is part of no line), marking headings and
// blank lines; a fenced code block (``` or ~~~) has neither.
func splitLines(text string) []line {
	var out []line
	fence := ""
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		next := len(text)
		if end < 0 {
			end = len(text)
		} else {
			end += start
			next = end + 1
		}
		s := strings.TrimSuffix(text[start:end], "\r")
		ln := line{text: s, start: start}
		trimmed := strings.TrimLeft(s, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```"):
			fence = "```"
		case strings.HasPrefix(trimmed, "~~~"):
			fence = "~~~"
		case strings.TrimSpace(s) == "":
			ln.blank = true
		case len(s)-len(trimmed) < 4:
			ln.heading = headingLevel(trimmed)
		}
		out = append(out, ln)
		start = next
	}
	return out
}

// headingLevel is the level of an ATX heading line ("## Install"), 0 for any other line.
func headingLevel(s string) int {
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(s) && s[n] != ' ' && s[n] != '\t') {
		return 0
	}
	return n
}

func headingText(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "#")
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), "#"))
}

func joinTitles(titles []string) string {
	var parts []string
	for _, t := range titles {
		if t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " › ")
}

// joinLines returns the text of lines (consecutive lines of text) as the file has them,
// without the last line's end.
func joinLines(text string, lines []line) string {
	if len(lines) == 0 {
		return ""
	}
	last := lines[len(lines)-1]
	return text[lines[0].start : last.start+len(last.text)]
}

// cut cuts s into pieces of at most max bytes, each ending on a character boundary.
func cut(s string, max int) []string {
	var out []string
	for len(s) > max {
		i := max
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		if i == 0 {
			i = max
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return append(out, s)
}
