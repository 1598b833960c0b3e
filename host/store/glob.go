package store

import (
	"fmt"
	"path"
	"strings"
)

// A glob is one pattern of the files a store reads, relative to the project folder, with
// '/' between names: "docs/**/*.md". A name may hold path.Match's wildcards (* ? [a-z]);
// "**" as a whole name matches any number of names, none included. As in a shell, a
// wildcard does not match a name that starts with '.': ".github/*.md" must write the dot.
type glob struct {
	pattern string
	parts   []string
	// base is the part before the first name with a wildcard: the folder a walk starts in
	// ("docs" for "docs/**/*.md", "" for "*.md").
	base string
}

// parseGlob checks a pattern: relative, clean, no "..", no empty name, every name a valid
// path.Match pattern.
func parseGlob(p string) (glob, error) {
	switch {
	case p == "":
		return glob{}, fmt.Errorf("an empty pattern")
	case strings.HasPrefix(p, "/"):
		return glob{}, fmt.Errorf("%q is absolute: a store reads files under the project folder, so write the path from there", p)
	case strings.Contains(p, "\\"):
		return glob{}, fmt.Errorf("%q holds a backslash: separate names with /", p)
	}
	parts := strings.Split(p, "/")
	g := glob{pattern: p, parts: parts}
	static := true
	var base []string
	for _, part := range parts {
		switch {
		case part == "" || part == ".":
			return glob{}, fmt.Errorf("%q has an empty name or a '.': write it as %q", p, path.Clean(p))
		case part == "..":
			return glob{}, fmt.Errorf("%q leaves the project folder (..)", p)
		case part == "**":
			static = false
			continue
		}
		if _, err := path.Match(part, ""); err != nil {
			return glob{}, fmt.Errorf("%q: %q is not a valid pattern", p, part)
		}
		if static && !hasMeta(part) {
			base = append(base, part)
		} else {
			static = false
		}
	}
	if len(base) == len(parts) {
		// A plain file name: its folder is where to look.
		base = base[:len(base)-1]
	}
	g.base = strings.Join(base, "/")
	return g, nil
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[`) }

// match reports whether name (a clean, relative, '/'-separated path) matches g.
func (g glob) match(name string) bool {
	return matchParts(g.parts, strings.Split(name, "/"))
}

func matchParts(pat, names []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(names); i++ {
				if i > 0 && strings.HasPrefix(names[i-1], ".") {
					return false // ** does not go into a dot folder
				}
				if matchParts(rest, names[i:]) {
					return true
				}
			}
			return false
		}
		if len(names) == 0 || !matchName(pat[0], names[0]) {
			return false
		}
		pat, names = pat[1:], names[1:]
	}
	return len(names) == 0
}

func matchName(pat, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") {
		return false
	}
	ok, _ := path.Match(pat, name)
	return ok
}

// mayHold reports whether a folder (relative path) may hold a match of g, so a walk can
// leave out the folders that cannot.
func (g glob) mayHold(dir string) bool {
	if dir == "" || dir == "." {
		return true
	}
	return prefixMatch(g.parts, strings.Split(dir, "/"))
}

// prefixMatch reports whether names could be the first names of a path pat matches.
func prefixMatch(pat, names []string) bool {
	for len(names) > 0 {
		if len(pat) == 0 {
			return false
		}
		if pat[0] == "**" {
			for i := 0; i <= len(names); i++ {
				if i > 0 && strings.HasPrefix(names[i-1], ".") {
					return false
				}
				if prefixMatch(pat[1:], names[i:]) {
					return true
				}
			}
			return false
		}
		if !matchName(pat[0], names[0]) {
			return false
		}
		pat, names = pat[1:], names[1:]
	}
	return true
}
