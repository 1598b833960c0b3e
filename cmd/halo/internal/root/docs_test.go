package root

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoFile reads a file of the repository from this package's folder.
func repoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cliSections splits docs/cli.md into its "## halo ..." sections: the heading's words after
// "halo" (the command path, then its arguments) and the section's text, heading included.
func cliSections(doc string) map[string]string {
	sections := map[string]string{}
	var head string
	var body strings.Builder
	flush := func() {
		if head != "" {
			sections[head] = body.String()
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			flush()
			head, body = "", strings.Builder{}
			if rest, ok := strings.CutPrefix(line, "## halo "); ok {
				head = rest
				body.WriteString(line + "\n")
			}
			continue
		}
		body.WriteString(line + "\n")
	}
	flush()
	return sections
}

// sectionOf finds the section of docs/cli.md that documents the command at path ("plugin
// init"): the heading that names the longest part of the path, whole words only.
func sectionOf(sections map[string]string, path string) (string, bool) {
	words := strings.Fields(path)
	for n := len(words); n > 0; n-- {
		prefix := strings.Join(words[:n], " ")
		for head, text := range sections {
			if head == prefix || strings.HasPrefix(head, prefix+" ") {
				return text, true
			}
		}
	}
	return "", false
}

// visibleCommands lists every command a user can run, by its path without "halo": hidden
// ones (the internal __plugin and __sandbox) and help are left out.
func visibleCommands(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			out = append(out, sub)
			walk(sub)
		}
	}
	walk(root)
	return out
}

// docs/cli.md is the reference of every command: each one a user can run has a section
// ("## halo CMD ..."), and each of its flags is named there (`--flag`), as is every global
// flag at the top. A command or a flag added without its documentation fails here.
func TestCLIReferenceIsComplete(t *testing.T) {
	f, _, _ := testFactory(t)
	root := NewCmdRoot(f)
	doc := repoFile(t, "docs/cli.md")
	sections := cliSections(doc)
	top, _, _ := strings.Cut(doc, "\n## ")
	root.PersistentFlags().VisitAll(func(fl *pflag.Flag) {
		if !strings.Contains(top, "`--"+fl.Name) {
			t.Errorf("docs/cli.md does not name the global flag --%s before its first section", fl.Name)
		}
	})
	cmds := visibleCommands(root)
	if len(cmds) < 20 {
		t.Fatalf("found only %d commands: the walk is broken", len(cmds))
	}
	for _, c := range cmds {
		path := strings.TrimPrefix(c.CommandPath(), "halo ")
		text, ok := sectionOf(sections, path)
		if !ok {
			t.Errorf("docs/cli.md has no section for halo %s: add one (## halo %s ...)", path, path)
			continue
		}
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			if fl.Name == "help" || fl.Hidden {
				return
			}
			if !strings.Contains(text, "--"+fl.Name) {
				t.Errorf("docs/cli.md's section for halo %s does not name its flag --%s", path, fl.Name)
			}
		})
	}
}

// haloCommand is a command line written in the docs: a code span `halo CMD ...`, or a line of
// a shell block that starts with halo.
var (
	codeSpan   = regexp.MustCompile("`(halo [^`]*)`")
	shellFence = regexp.MustCompile("^```(sh|bash|shell|console)?$")
)

// Every `halo CMD` README.md and docs/ show is a command this halo has: a page cannot
// promise a command that does not exist (or no longer does).
func TestDocumentedCommandsExist(t *testing.T) {
	f, _, _ := testFactory(t)
	root := NewCmdRoot(f)
	known := map[string]bool{}
	for _, c := range root.Commands() {
		known[c.Name()] = true
		for _, a := range c.Aliases {
			known[a] = true
		}
	}
	pages, err := filepath.Glob(filepath.Join("..", "..", "..", "..", "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	pages = append(pages, filepath.Join("..", "..", "..", "..", "README.md"))
	seen := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(page)
		var lines []string
		inFence, shell := false, false
		for _, line := range strings.Split(string(b), "\n") {
			trimmed := strings.TrimSpace(line)
			if strings.HasPrefix(trimmed, "```") {
				if inFence {
					inFence = false
				} else {
					inFence, shell = true, shellFence.MatchString(trimmed)
				}
				continue
			}
			switch {
			case inFence && shell:
				if strings.HasPrefix(trimmed, "halo ") {
					lines = append(lines, trimmed)
				}
			case !inFence:
				for _, m := range codeSpan.FindAllStringSubmatch(line, -1) {
					lines = append(lines, m[1])
				}
			}
		}
		for _, l := range lines {
			words := strings.Fields(l)
			if len(words) < 2 || strings.HasPrefix(words[1], "-") || words[1] == strings.ToUpper(words[1]) {
				continue // a flag, or a placeholder (halo CMD --help)
			}
			seen++
			if !known[words[1]] {
				t.Errorf("%s shows %q, but halo has no command %q", name, l, words[1])
			}
		}
	}
	if seen < 50 {
		t.Fatalf("found only %d halo commands in the docs: the extraction is broken", seen)
	}
	var names []string
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("commands: %s", strings.Join(names, " "))
}
