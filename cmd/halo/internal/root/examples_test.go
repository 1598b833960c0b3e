package root

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"halolang.dev/halo/pkgmgr"
)

// Every command a user can run shows examples in its help (an Examples: section), and every
// example line runs a command halo has, with flags it takes and as many arguments as it
// takes: each line is parsed as the command line it shows.
func TestEveryCommandHasExamples(t *testing.T) {
	f, _, _ := testFactory(t)
	root := NewCmdRoot(f)
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(cmds) < 30 {
		t.Fatalf("found only %d commands: the walk is broken", len(cmds))
	}
	for _, c := range cmds {
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no examples: give it an Example", c.CommandPath())
			continue
		}
		var help strings.Builder
		c.SetOut(&help)
		c.SetErr(&help)
		if err := c.Help(); err != nil || !strings.Contains(help.String(), "\nExamples:\n") {
			t.Errorf("%s's help has no Examples: section (%v)", c.CommandPath(), err)
		}
		for _, line := range strings.Split(c.Example, "\n") {
			if l := strings.TrimSpace(line); l == "" || strings.HasPrefix(l, "#") {
				continue // a comment on the example below it, or a line between two
			}
			if err := parsesAsHalo(t, line); err != "" {
				t.Errorf("%s: example %q: %s", c.CommandPath(), strings.TrimSpace(line), err)
			}
		}
	}
}

// parsesAsHalo finds the halo command line in an example line (after any VAR=value, inside
// <(...), before a pipe or a redirection) and parses it with a fresh command tree: its
// command, flags and number of arguments. It returns what is wrong, or "".
func parsesAsHalo(t *testing.T, line string) string {
	words := pkgmgr.SplitCommand(line) // quotes as a shell reads them, for these lines
	start := -1
	for i, w := range words {
		// The first halo that starts a command line: not a name given to another program
		// ("claude mcp add halo -- halo mcp ...").
		if (w == "halo" || w == "<(halo") && (i+1 == len(words) || words[i+1] != "--") {
			start = i
			break
		}
	}
	if start < 0 {
		return "no halo command in it"
	}
	var args []string
	for _, w := range words[start+1:] {
		if w == "|" || w == ">" || strings.HasPrefix(w, ">") {
			break
		}
		if cut, closed := strings.CutSuffix(w, ")"); closed && strings.HasPrefix(words[start], "<(") {
			args = append(args, cut)
			break
		}
		args = append(args, w)
	}
	f, _, _ := testFactory(t)
	root := NewCmdRoot(f)
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err.Error()
	}
	if cmd == root && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return "names no command"
	}
	// The flags cobra adds as a command runs: --version (root's) and --help.
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	if err := cmd.ParseFlags(rest); err != nil {
		return err.Error()
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			return err.Error()
		}
	}
	return ""
}
