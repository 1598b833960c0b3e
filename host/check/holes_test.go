package check

import (
	"strings"
	"testing"
)

// Issue 27 item 9: halo validate warns where an agent's tool policies leave a sibling method
// open, name a method the tool does not have, or hold a rule that never applies; each agent's
// policies are judged together, and a warning is given once at its rule.
func TestPolicyHoleWarnings(t *testing.T) {
	const tools = "tool Code : Workspace(\".\", write: true)\ntool Docs : Workspace(\"./docs\", write: true)\ntool Tests : Bash()\n"
	tests := []struct {
		name, src string
		want      []string // "line:col: message part" of each warning, in order
	}{
		{"the seed's hole, shared by two agents", `
policy Fixer : AllowTools("Code.*", "Tests.run") & DenyTools("Code.delete")
  & DenyArgs("Code.write", "path", "\\.test\\.")
agent A [openai/gpt-4o]
  requires Fixer
agent B [openai/gpt-4o]
  requires Fixer
`, []string{`6:5: warning: DenyArgs("Code.write", "path", "\\.test\\.") guards Code.write, but Code.edit also takes "path" and nothing guards it: a DenyArgs on each, a DenyTools or an ApproveTools closes the hole [POLICY_HOLE]`}},
		{"closed by another policy of the agent", `
policy Fixer : DenyArgs("Code.write", "path", "\\.test\\.")
policy NoEdits : DenyTools("Code.edit", "Code.delete")
agent A [openai/gpt-4o]
  requires Fixer, NoEdits
`, nil},
		{"open for the agent that lacks the other policy", `
policy Fixer : DenyArgs("Code.write", "path", "\\.test\\.")
policy NoEdits : DenyTools("Code.edit", "Code.delete")
agent A [openai/gpt-4o]
  requires Fixer, NoEdits
agent B [openai/gpt-4o]
  requires Fixer
`, []string{`5:16: warning: DenyArgs("Code.write", "path", "\\.test\\.") guards Code.write, but Code.edit, Code.delete also take "path"`}},
		{"a method the tool does not have", `
policy Careful : DenyTools("Docs.delet") & ApproveTools("Docs.del*x")
`, []string{`5:28: warning: Docs has no method delet (it has: read, list, search, write, edit, delete), so the rule never applies to it; did you mean delete? [UNDECLARED]`,
			`5:57: warning: "Docs.del*x" matches no method of Docs`}},
		{"a rule that never applies", `
policy Careful : AllowEffects(read) & ApproveTools("Docs.write") & ApproveEffects(write)
`, []string{`5:39: warning: ApproveTools("Docs.write") never applies to "Docs.write": Docs.write is refused first by AllowEffects(read) (policy Careful)`,
			`5:68: warning: ApproveEffects(write) never applies`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, code := range []string{"POLICY_HOLE", CodeUndeclared} {
				for _, d := range diagsWith(t, tools+tt.src, code) {
					got = append(got, d.String())
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("warnings:\n%s\nwant %d", strings.Join(got, "\n"), len(tt.want))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("warning %q, want %q", got[i], tt.want[i])
				}
			}
		})
	}
}
