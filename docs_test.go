package halo_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// excerptMark is the line before a ```go block of docs/: the block is an excerpt of FILE, a
// Go file of this repository that is compiled and tested (a test, an example, the code it
// documents).
const excerptMark = "<!-- excerpt of "

// TestDocsGoSnippets keeps the Go code in docs/ from rotting: every ```go block must say which
// file it is an excerpt of (`<!-- excerpt of plugins/worldtime/worldtime.go -->` on the line
// before it), and each of its lines must be in that file, in order. A line `...` (or
// `// ...`) stands for lines left out; "..." inside a line for a part of it left out. The
// files are built and tested by go test like any other, so a snippet can only show code that
// compiles and passes.
func TestDocsGoSnippets(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	snippets := 0
	for _, doc := range docs {
		for _, s := range goBlocks(t, doc) {
			snippets++
			if s.file == "" {
				t.Errorf("%s:%d: a ```go block without %sFILE --> on the line before it: point it at the compiled, tested file it comes from", doc, s.line, excerptMark)
				continue
			}
			src, err := os.ReadFile(s.file)
			if err != nil {
				t.Errorf("%s:%d: %v", doc, s.line, err)
				continue
			}
			if missing, ok := excerptOf(s.lines, strings.Split(string(src), "\n")); !ok {
				t.Errorf("%s:%d: the snippet is not an excerpt of %s: from %q on, its lines are not in the file in order; update the snippet or the file", doc, s.line, s.file, missing)
			}
		}
	}
	if snippets == 0 {
		t.Fatal("found no ```go block in docs/: the extraction is broken")
	}
}

type goBlock struct {
	line  int
	file  string
	lines []string
}

func goBlocks(t *testing.T, doc string) []goBlock {
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []goBlock
	var cur *goBlock
	prev := ""
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = &goBlock{line: n}
			if rest, ok := strings.CutPrefix(strings.TrimSpace(prev), excerptMark); ok {
				cur.file = strings.TrimSpace(strings.TrimSuffix(rest, "-->"))
			}
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Errorf("%s:%d: a ```go block is never closed", doc, cur.line)
	}
	return blocks
}

// excerptOf reports whether every line of snippet is in file, in order (whitespace at either
// end ignored), with the elisions of TestDocsGoSnippets; it returns the first line not found.
func excerptOf(snippet, file []string) (string, bool) {
	i := 0
	for _, s := range snippet {
		s = strings.TrimSpace(s)
		if s == "" || s == "..." || s == "// ..." {
			continue
		}
		found := false
		for ; i < len(file); i++ {
			if lineMatches(s, strings.TrimSpace(file[i])) {
				found = true
				i++
				break
			}
		}
		if !found {
			return s, false
		}
	}
	return "", true
}

// lineMatches matches a snippet line against a file line; "..." in the snippet stands for
// any text.
func lineMatches(s, f string) bool {
	parts := strings.Split(s, "...")
	if len(parts) == 1 {
		return s == f
	}
	if !strings.HasPrefix(f, parts[0]) || !strings.HasSuffix(f, parts[len(parts)-1]) {
		return false
	}
	rest := f[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return len(rest) >= len(parts[len(parts)-1])
}

// The checker itself: what counts as an excerpt, and what does not.
func TestExcerptOf(t *testing.T) {
	file := strings.Split("package x\n\nfunc f() {\n\ta := 1\n\tb := g(a, 2)\n\treturn b\n}\n", "\n")
	for _, tt := range []struct {
		snippet string
		ok      bool
	}{
		{"func f() {\n    a := 1\n}", true},
		{"func f() {\n...\n\treturn b\n}", true},
		{"b := g(...)\nreturn b", true},
		{"b := g(a, ...)", true},
		{"return b\na := 1", false},          // out of order
		{"a := 2", false},                    // not in the file
		{"b := g(..., 3)", false},            // the kept part differs
		{"func f() {\n// ...\na := 1", true}, // an elided comment line
	} {
		if _, ok := excerptOf(strings.Split(tt.snippet, "\n"), file); ok != tt.ok {
			t.Errorf("excerptOf(%q) = %v, want %v", tt.snippet, ok, tt.ok)
		}
	}
}

// mdLink is a markdown link: its target, with an optional #anchor; codeSpans are the
// `code` spans of a line, where a "](" is code, not a link.
var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeSpans = regexp.MustCompile("`[^`]*`")
)

// Every link between README.md and the pages of docs/ leads somewhere: to a file of the
// repository, and to a heading of that page when it names one (#anchor, as GitHub makes
// them). README.md links every page of docs/, so no page is out of a reader's reach.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	anchors := map[string]map[string]bool{}
	drop := regexp.MustCompile(`[^\p{L}\p{N} _-]`)
	for _, page := range append([]string{"README.md"}, pages...) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		inFence := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
			}
			if inFence || !strings.HasPrefix(line, "#") {
				continue
			}
			h := strings.TrimSpace(strings.TrimLeft(line, "#"))
			a := strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
			for n := 1; set[a]; n++ {
				a = strings.TrimSuffix(a, fmt.Sprintf("-%d", n-1)) + fmt.Sprintf("-%d", n)
			}
			set[a] = true
		}
		anchors[filepath.ToSlash(page)] = set
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		if !strings.Contains(string(readme), "]("+filepath.ToSlash(page)+")") {
			t.Errorf("README.md does not link %s: add it to the list of pages", page)
		}
	}
	links := 0
	for page := range anchors {
		b, _ := os.ReadFile(page)
		inFence := false
		for n, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(codeSpans.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				dest := page
				if file != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(page), file)))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: no file %s", page, n+1, target, dest)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				set, ok := anchors[dest]
				if !ok {
					t.Errorf("%s:%d: link %s: an anchor into %s, which is not a page of the docs", page, n+1, target, dest)
				} else if !set[anchor] {
					t.Errorf("%s:%d: link %s: %s has no heading #%s", page, n+1, target, dest, anchor)
				}
			}
		}
	}
	if links < 50 {
		t.Fatalf("found only %d links: the extraction is broken", links)
	}
}
