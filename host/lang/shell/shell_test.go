package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fill fills cmd's templates with v as the runtime does: quoted where Parse placed them.
func fill(t *testing.T, cmd, v string) string {
	t.Helper()
	var b strings.Builder
	last := 0
	for _, tp := range Parse(cmd) {
		if tp.Problem != "" {
			t.Fatalf("%q: {{%s}} is unplaced: %s", cmd, tp.Name, tp.Problem)
		}
		b.WriteString(cmd[last:tp.Start])
		b.WriteString(Quote(v, tp.Context))
		last = tp.End
	}
	return b.String() + cmd[last:]
}

// hostile are values an attacker (a run's input, an agent's answer flowing through `as`)
// would put into a command to run shell of their own.
var hostile = []string{
	"hi; touch INJECTED",
	"$(touch INJECTED)",
	"`touch INJECTED`",
	"'; touch INJECTED; '",
	"\"; touch INJECTED; \"",
	"'\"$(touch INJECTED)\"'",
	"\\",
	"a\\",
	"x\ntouch INJECTED",
	"x # \ntouch INJECTED",
	"*",
	"~",
	"$HOME",
	"${HOME}",
	"a b  c",
	"-n",
	"",
	"it's",
	"\\'; touch INJECTED #",
	"\\\"; touch INJECTED #",
	"é ✓ \t tab",
}

// Every hostile value, filled into each place a template may stand, is one word that Bash
// prints back unchanged, and nothing it holds runs: the attack of issue 27 item 11 as a
// pipeline's input would make it.
func TestQuotedValuesStayOneWord(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the test runs the commands with bash: %v", err)
	}
	commands := []struct{ cmd, want string }{
		{`printf '[%s]' {{s}}`, "[%s]"},
		{`printf '[%s]' '{{s}}'`, "[%s]"},
		{`printf '[%s]' "{{s}}"`, "[%s]"},
		{`printf '[%s]' pre{{s}}post`, "[pre%spost]"},
		{`printf '[%s]' "pre {{s}} post"`, "[pre %s post]"},
		{`printf '[%s]' 'pre {{s}} post'`, "[pre %s post]"},
		{`x={{s}}; printf '[%s]' "$x"`, "[%s]"},
		{`printf '[%s]' {{s}} # a comment`, "[%s]"},
		{`printf '[%s]' {{s}} | cat`, "[%s]"},
		{`cat <<< {{s}}`, "%s\n"},
	}
	for _, c := range commands {
		for _, v := range hostile {
			dir := t.TempDir()
			line := fill(t, c.cmd, v)
			cmd := exec.Command(bash, "-c", line)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if _, serr := os.Stat(filepath.Join(dir, "INJECTED")); serr == nil {
				t.Errorf("%q with %q ran: %s", c.cmd, v, line)
			}
			want := strings.Replace(c.want, "%s", v, 1)
			if err != nil || string(out) != want {
				t.Errorf("%q with %q: bash -c %q printed %q (%v), want %q", c.cmd, v, line, out, err, want)
			}
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		cmd     string
		ctx     []Context
		problem []string // "" where placed
		raw     []bool
	}{
		{"echo {{s}}", []Context{Word}, []string{""}, []bool{false}},
		{"echo '{{s}}' \"{{t}}\" {{ u }}", []Context{Single, Double, Word}, []string{"", "", ""}, nil},
		{"echo \"it's {{s}}\"", []Context{Double}, []string{""}, nil},
		{"echo 'say \"{{s}}'", []Context{Single}, []string{""}, nil},
		{"echo \\'{{s}}", []Context{Word}, []string{""}, nil},
		{"echo \\{{s}}", nil, []string{"backslash"}, nil},
		{"echo \"\\{{s}}\"", nil, []string{"backslash"}, nil},
		{"echo {{raw s}} {{raw  t }}", []Context{Word, Word}, []string{"", ""}, []bool{true, true}},
		{"echo hi # {{s}}\necho {{t}}", nil, []string{"comment", ""}, nil},
		{"echo a#{{s}}", []Context{Word}, []string{""}, nil},
		{"echo $(date) {{s}}", nil, []string{"after $("}, nil},
		{"echo \"$(date)\" {{s}}", nil, []string{"after $("}, nil},
		{"echo `date` {{s}}", nil, []string{"after `"}, nil},
		{"echo ${X:-{{s}}}", nil, []string{"after ${"}, nil},
		{"echo $'a' {{s}}", nil, []string{"after $'"}, nil},
		{"echo \"$'\" {{s}}", []Context{Word}, []string{""}, nil},
		{"echo $[1] {{s}}", nil, []string{"after $["}, nil},
		{"(( {{s}} ))", nil, []string{"after (("}, nil},
		{"cat <<EOF\n{{s}}\nEOF", nil, []string{"here-document"}, nil},
		{"cat <<< {{s}}", []Context{Word}, []string{""}, nil},
		{"echo '$(' {{s}}", []Context{Word}, []string{""}, nil},
		{"echo {{s}} $(date)", []Context{Word}, []string{""}, nil},
		{"echo {{s", nil, nil, nil},
	}
	for _, tt := range tests {
		got := Parse(tt.cmd)
		if len(got) != len(tt.problem) {
			t.Errorf("%q: %d templates, want %d: %+v", tt.cmd, len(got), len(tt.problem), got)
			continue
		}
		for i, tp := range got {
			if tt.problem[i] == "" && tp.Problem != "" || !strings.Contains(tp.Problem, tt.problem[i]) {
				t.Errorf("%q template %d: problem %q, want %q", tt.cmd, i, tp.Problem, tt.problem[i])
			}
			if tt.ctx != nil && tp.Context != tt.ctx[i] {
				t.Errorf("%q template %d: context %v, want %v", tt.cmd, i, tp.Context, tt.ctx[i])
			}
			if tt.raw != nil && tp.Raw != tt.raw[i] {
				t.Errorf("%q template %d: raw %v", tt.cmd, i, tp.Raw)
			}
			if tp.Name == "" || tt.cmd[tp.Start:tp.Start+2] != "{{" || tt.cmd[tp.End-2:tp.End] != "}}" {
				t.Errorf("%q template %d: %+v", tt.cmd, i, tp)
			}
		}
	}
}

// Parse never panics, finds templates in order within the command, and a placed template in
// a command that holds no construct it gives up on quotes any value so that Bash reads the
// command with the value as one word: checked without Bash by the invariant that the quoted
// value has no unescaped quote of the context it goes in.
func FuzzTemplates(f *testing.F) {
	for _, s := range []string{"echo {{s}}", "echo '{{s}}' \"{{t}}\"", "echo $(x) {{s}}", "a\\{{b}}", "# {{c}}\n{{d}}", "cat <<E\n{{x}}"} {
		f.Add(s, "v'\"$`\\")
	}
	f.Fuzz(func(t *testing.T, cmd, v string) {
		prev := 0
		for _, tp := range Parse(cmd) {
			if tp.Start < prev || tp.End > len(cmd) || tp.Start+4 > tp.End {
				t.Fatalf("%q: template at %d..%d after %d", cmd, tp.Start, tp.End, prev)
			}
			prev = tp.End
			q := Quote(v, tp.Context)
			switch tp.Context {
			case Word:
				if !strings.HasPrefix(q, "'") || !strings.HasSuffix(q, "'") || strings.Count(strings.ReplaceAll(q, `'\''`, ""), "'") != 2 {
					t.Fatalf("Quote(%q, Word) = %q", v, q)
				}
			case Single:
				if strings.Count(strings.ReplaceAll(q, `'\''`, ""), "'") != 0 {
					t.Fatalf("Quote(%q, Single) = %q", v, q)
				}
			case Double:
				for i := 0; i < len(q); i++ {
					if q[i] == '\\' {
						i++
						continue
					}
					if strings.IndexByte("\"$`", q[i]) >= 0 {
						t.Fatalf("Quote(%q, Double) = %q: unescaped %c", v, q, q[i])
					}
				}
			}
		}
	})
}
