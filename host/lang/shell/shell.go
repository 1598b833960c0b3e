// Package shell places the {{templates}} of a Bash command line written in a .halo file
// (`Sh.run(command: "echo {{s}}")`), so that each value goes into the command as one shell
// word: host/runtime quotes it with Quote where Parse says it stands, and host/check reports
// the templates that stand where no quoting is safe, and those written {{raw name}}, which go
// in as they are.
//
// Parse follows Bash's quoting as far as it can be sure of it: outside quotes, inside
// '...', inside "...", backslash escapes, and comments. From the first construct whose end
// it cannot find without parsing the whole of Bash ($(...), `...`, ${...}, $'...', $"...",
// $[...], ((...)), a here-document), every later template is left unplaced: a value there
// could end the construct and run as shell.
//
// Quoting keeps a value one word; it cannot keep a command that runs its arguments as code
// (eval, bash -c, let, an arithmetic comparison) from running it.
package shell

import (
	"strings"

	"halolang.dev/halo/host/lang"
)

// A Context is where a template stands in a command line.
type Context int

const (
	// Word is outside any quotes: the value goes in as one '...'-quoted word.
	Word Context = iota
	// Single is inside '...': the value's own ' characters are closed over ('\'').
	Single
	// Double is inside "...": the value's \ " $ and ` are escaped with a backslash.
	Double
)

// A Template is one {{...}} of a command line.
type Template struct {
	// Start and End are the byte offsets of its "{{" and just past its "}}".
	Start, End int
	// Name is the name inside the braces (without raw).
	Name string
	// Raw marks {{raw name}}: the value goes in as written.
	Raw bool
	// Context is where it stands.
	Context Context
	// Problem, when not empty, says why no quoting keeps a value there one word ("inside
	// $(...)"); Context is then meaningless.
	Problem string
}

// Parse returns the templates of the command line cmd, in order.
func Parse(cmd string) []Template {
	if !strings.Contains(cmd, "{{") {
		return nil // most command lines hold none: halo validate reads every one
	}
	var (
		out   []Template
		state = Word
		lost  string // the construct after which nothing is placed
		// comment is set inside a comment; wordStart when a # would start one.
		comment, wordStart = false, true
		escaped            bool // the byte before i is a backslash that escapes it
	)
	for i := 0; i < len(cmd); {
		if strings.HasPrefix(cmd[i:], "{{") {
			if j := strings.Index(cmd[i+2:], "}}"); j >= 0 {
				end := i + 2 + j + 2
				name, raw := lang.TemplateName(cmd[i+2 : i+2+j])
				t := Template{Start: i, End: end, Name: name, Raw: raw, Context: state}
				switch {
				case lost != "":
					t.Problem = "after " + lost + " (Halo cannot tell where that ends without parsing all of Bash)"
				case comment:
					t.Problem = "in a comment (a line break in the value would end it)"
				case escaped:
					t.Problem = "right after a backslash (it would escape the value's first character)"
				}
				out = append(out, t)
				i, escaped, wordStart = end, false, false
				continue
			}
		}
		c := cmd[i]
		next := byte(0)
		if i+1 < len(cmd) {
			next = cmd[i+1]
		}
		escaped = false
		i++
		switch {
		case lost != "":
		case comment:
			if c == '\n' {
				comment, wordStart = false, true
			}
		case state == Single:
			if c == '\'' {
				state = Word
			}
		case c == '\\' && (state == Word || state == Double):
			// The next byte is taken as it is; a template there is refused (escaped).
			if strings.HasPrefix(cmd[i:], "{{") {
				escaped = true
			} else if i < len(cmd) {
				i++
			}
			wordStart = false
		case c == '$' && strings.IndexByte("({['\"", next) >= 0:
			if state == Double && (next == '\'' || next == '"') {
				break // "$'" and "$\"" inside "..." are a dollar and a quote
			}
			lost = "$" + string(next)
		case c == '`':
			lost = "`"
		case state == Double:
			if c == '"' {
				state = Word
			}
		case c == '\'':
			state, wordStart = Single, false
		case c == '"':
			state, wordStart = Double, false
		case c == '#' && wordStart:
			comment = true
		case c == '(' && next == '(' && wordStart:
			// (( ... )) expands its expression as "..." does, quotes or not.
			lost = "(("
		case c == '<' && next == '<':
			if i+1 < len(cmd) && cmd[i+1] == '<' {
				i += 2 // <<<, a here-string: its word is an ordinary word
				wordStart = true
				break
			}
			lost = "<< (a here-document)"
		default:
			wordStart = strings.IndexByte(" \t\n;&|()<>", c) >= 0
		}
	}
	return out
}

// Quote returns v written to stand as one word (or one piece of the quoted word around it)
// in context c.
func Quote(v string, c Context) string {
	switch c {
	case Single:
		return strings.ReplaceAll(v, "'", `'\''`)
	case Double:
		var b strings.Builder
		for _, r := range v {
			if r == '\\' || r == '"' || r == '$' || r == '`' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		return b.String()
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// Command returns the string literal a call's arguments write for the method's shell command
// line, the argument called arg: given by name, as the single positional value when that
// fills arg (fillsFirst: arg is the method's first required parameter), or as the arg
// field of a single positional object. Nil when the call writes none (it passes a name or
// the flowing value: a value that is the command as a whole, not a template in it).
func Command(args []*lang.Arg, arg string, fillsFirst bool) *lang.StringLit {
	var positional []*lang.Arg
	for _, a := range args {
		if a.Name == nil {
			positional = append(positional, a)
		} else if a.Name.Name == arg {
			s, _ := a.Value.(*lang.StringLit)
			return s
		}
	}
	if len(positional) != 1 {
		return nil
	}
	switch v := positional[0].Value.(type) {
	case *lang.StringLit:
		if fillsFirst {
			return v
		}
	case *lang.ObjectLit:
		for _, f := range v.Fields {
			if f.Key == arg {
				s, _ := f.Value.(*lang.StringLit)
				return s
			}
		}
	}
	return nil
}
