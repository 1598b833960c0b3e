package store

import (
	"fmt"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern string
		yes     []string
		no      []string
		base    string
	}{
		{"docs/**/*.md", []string{"docs/a.md", "docs/x/y/z.md"}, []string{"a.md", "docs/a.txt", "docs/.hidden/a.md", "docs/.a.md", "other/docs/a.md"}, "docs"},
		{"*.md", []string{"README.md"}, []string{"docs/a.md", ".x.md"}, ""},
		{"**", []string{"a", "a/b/c.go"}, []string{".git/config", "a/.env"}, ""},
		{"notes/2024-*.txt", []string{"notes/2024-01.txt"}, []string{"notes/2023-01.txt"}, "notes"},
		{".github/*.md", []string{".github/README.md"}, []string{"github/README.md"}, ".github"},
		{"README.md", []string{"README.md"}, []string{"docs/README.md"}, ""},
		{"a/b/c.md", []string{"a/b/c.md"}, []string{"a/b/d.md"}, "a/b"},
	} {
		g, err := parseGlob(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if g.base != c.base {
			t.Errorf("%s: base %q, want %q", c.pattern, g.base, c.base)
		}
		for _, y := range c.yes {
			if !g.match(y) {
				t.Errorf("%s does not match %s", c.pattern, y)
			}
		}
		for _, n := range c.no {
			if g.match(n) {
				t.Errorf("%s matches %s", c.pattern, n)
			}
		}
	}
	for _, bad := range []string{"", "/etc/*", "../x/*.md", "docs/../../x", "a//b", "./a", "a\\b", "docs/[x"} {
		if _, err := parseGlob(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
	g, _ := parseGlob("docs/**/*.md")
	for dir, want := range map[string]bool{"docs": true, "docs/x": true, "src": false, "docs/.git": false} {
		if got := g.mayHold(dir); got != want {
			t.Errorf("mayHold(%s) = %v", dir, got)
		}
	}
}

func TestChunkAtHeadingsWithLines(t *testing.T) {
	text := "# Guide\n\nIntro line.\n\n## Install\n\nRun make.\nThen run make install.\n\n## Use\n\n```\n# not a heading\n\nstill code\n```\nDone.\n"
	got := chunker{max: 1000, overlap: 0}.split(text)
	want := []chunk{
		{Title: "Guide", Text: "# Guide\n\nIntro line.\n", Start: 1, End: 4},
		{Title: "Guide › Install", Text: "## Install\n\nRun make.\nThen run make install.\n", Start: 5, End: 9},
		{Title: "Guide › Use", Text: "## Use\n\n```\n# not a heading\n\nstill code\n```\nDone.", Start: 10, End: 17},
	}
	if len(got) != len(want) {
		t.Fatalf("%d chunks: %+v", len(got), got)
	}
	lines := strings.Split(text, "\n")
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("chunk %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
		// A chunk's text is its lines, exactly.
		if joined := strings.Join(lines[got[i].Start-1:got[i].End], "\n"); joined != got[i].Text {
			t.Errorf("chunk %d's text is not lines %d-%d", i, got[i].Start, got[i].End)
		}
	}
}

func TestChunkSizeLimitAndOverlap(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&b, "Line %03d of a long section without headings.\n", i)
		if i%7 == 0 {
			b.WriteString("\n")
		}
	}
	text := b.String()
	ck := chunker{max: 500, overlap: 100}
	got := ck.split(text)
	if len(got) < 15 {
		t.Fatalf("only %d chunks", len(got))
	}
	lines := strings.Split(text, "\n")
	covered := map[int]bool{}
	for i, c := range got {
		if len(c.Text) > ck.max {
			t.Errorf("chunk %d is %d bytes, over %d", i, len(c.Text), ck.max)
		}
		if strings.Join(lines[c.Start-1:c.End], "\n") != c.Text {
			t.Errorf("chunk %d is not its lines", i)
		}
		for l := c.Start; l <= c.End; l++ {
			covered[l] = true
		}
		if i > 0 && c.Start > got[i-1].End {
			t.Errorf("chunk %d starts at %d, after the one before ended (%d): no overlap", i, c.Start, got[i-1].End)
		}
	}
	for l := 1; l < len(lines); l++ {
		if strings.TrimSpace(lines[l-1]) != "" && !covered[l] {
			t.Errorf("line %d is in no chunk", l)
		}
	}
}

func TestChunkLongLineAndEmpty(t *testing.T) {
	long := strings.Repeat("é", 700) // 1400 bytes, two-byte characters
	got := chunker{max: 500, overlap: 50}.split("short\n" + long + "\nafter\n")
	if len(got) < 4 {
		t.Fatalf("%+v", got)
	}
	for _, c := range got[1 : len(got)-1] {
		if c.Start != 2 || c.End != 2 || len(c.Text) > 500 || !strings.HasPrefix(long, "") {
			t.Errorf("piece %+v", c)
		}
		if strings.ToValidUTF8(c.Text, "?") != c.Text {
			t.Error("a piece cuts a character")
		}
	}
	if n := len(chunker{max: 500}.split("\n\n   \n")); n != 0 {
		t.Errorf("blank text made %d chunks", n)
	}
}

func FuzzChunk(f *testing.F) {
	f.Add("# a\n\ntext\n## b\n```\ncode\n```\n", 200, 20)
	f.Add(strings.Repeat("word ", 500), 300, 60)
	f.Fuzz(func(t *testing.T, text string, max, overlap int) {
		max = 50 + int(uint(max)%2000)
		overlap = int(uint(overlap) % uint(max/4+1))
		lines := strings.Split(text, "\n")
		for _, c := range (chunker{max: max, overlap: overlap}).split(text) {
			if c.Start < 1 || c.End < c.Start || c.End > len(lines) {
				t.Fatalf("lines %d-%d of %d", c.Start, c.End, len(lines))
			}
			if len(c.Text) > max && c.Start != c.End {
				t.Fatalf("a chunk of several lines is %d bytes, over %d", len(c.Text), max)
			}
			if c.Start != c.End || len(lines[c.Start-1]) <= max {
				want := strings.Join(lines[c.Start-1:c.End], "\n")
				if strings.ReplaceAll(want, "\r", "") != strings.ReplaceAll(c.Text, "\r", "") {
					t.Fatalf("chunk text is not lines %d-%d", c.Start, c.End)
				}
			}
		}
	})
}
