package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"halolang.dev/halo/host/tool"
)

func refs(rs []RuleRef) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Policy+":"+r.Text)
	}
	return strings.Join(out, " ")
}

func TestExplain(t *testing.T) {
	s := set(t,
		[]RuleSpec{r("AllowTools", "Code.*", "Tests.run"), r("DenyTools", "Code.delete"),
			r("DenyArgs", "Code.write", "path", `\.test\.`), r("ApproveEffects", Ident("external"))},
		[]RuleSpec{r("ApproveTools", "Code.write"), r("DenyArgs", "*", "rm -rf")},
	)
	tests := []struct {
		target   string
		effect   tool.Effect
		hidden   string // the hiding rule's text, or ""
		argRules string
		approval string
	}{
		{"Code.read", tool.Read, "", "P2:DenyArgs(\"*\", \"rm -rf\")", ""},
		{"Code.write", tool.Write, "", `P1:DenyArgs("Code.write", "path", "\\.test\\.") P2:DenyArgs("*", "rm -rf")`, `ApproveTools("Code.write")`},
		{"Code.delete", tool.Write, `DenyTools("Code.delete")`, "", ""},
		{"Code.run", tool.External, "", `P2:DenyArgs("*", "rm -rf")`, `ApproveEffects(external)`},
		{"Tests.run", "", "", `P2:DenyArgs("*", "rm -rf")`, `ApproveEffects(external)`}, // no effect: external
		{"Web.fetch", tool.Read, `AllowTools("Code.*", "Tests.run")`, "", ""},
	}
	for _, tt := range tests {
		e := s.Explain(tt.target, tt.effect)
		if e.Hidden != nil {
			if e.Hidden.Ref().Text != tt.hidden || !strings.Contains(e.Hidden.Reason, tt.hidden) {
				t.Errorf("%s: hidden %q, want %q", tt.target, e.Hidden.Reason, tt.hidden)
			}
		} else if tt.hidden != "" {
			t.Errorf("%s: not hidden, want hidden by %s", tt.target, tt.hidden)
		}
		if got := refs(e.ArgRules); got != tt.argRules {
			t.Errorf("%s: arg rules %s, want %s", tt.target, got, tt.argRules)
		}
		approval := ""
		if e.Approval != nil {
			approval = e.Approval.Reason
		}
		if e.Approval != nil && e.Approval.Ref().Text != tt.approval || !strings.Contains(approval, tt.approval) || (approval == "") != (tt.approval == "") {
			t.Errorf("%s: approval %q, want %q", tt.target, approval, tt.approval)
		}

		// Decide agrees: a hidden method is refused by the same rule; arguments no DenyArgs
		// refuses get the approval verdict; arguments one refuses are refused by it.
		d := s.Decide(tt.target, tt.effect, json.RawMessage(`{"path": "a.go"}`))
		switch {
		case e.Hidden != nil:
			if d.Verdict != Refused || d.Reason != e.Hidden.Reason || d.Policy != e.Hidden.Policy {
				t.Errorf("%s: Decide %+v, Explain hidden %+v", tt.target, d, e.Hidden)
			}
		case e.Approval != nil:
			if d.Verdict != NeedsApproval || d.Rule != e.Approval.Rule || d.Policy != e.Approval.Policy {
				t.Errorf("%s: Decide %+v, Explain approval %+v", tt.target, d, e.Approval)
			}
		default:
			if d.Verdict != Allowed {
				t.Errorf("%s: Decide %+v, Explain allows", tt.target, d)
			}
		}
		if e.Hidden == nil && len(e.ArgRules) > 0 {
			d := s.Decide(tt.target, tt.effect, json.RawMessage(`{"command": "rm -rf /"}`))
			if d.Verdict != Refused || d.Rule != "DenyArgs" {
				t.Errorf("%s: Decide on refused arguments %+v", tt.target, d)
			}
		}
	}
}

func TestExplainTool(t *testing.T) {
	tests := []struct {
		name     string
		policies [][]RuleSpec
		hidden   string
		rules    string
	}{
		{"no rules", nil, "", ""},
		{"allowed whole", [][]RuleSpec{{r("AllowTools", "Git", "Code.*")}}, "", ""},
		{"allowed by stars", [][]RuleSpec{{r("AllowTools", "Git.*")}}, "", ""},
		{"some methods allowed", [][]RuleSpec{{r("AllowTools", "Git.list_prs", "Code.*")}}, "", `P1:AllowTools("Git.list_prs", "Code.*")`},
		{"not allowed", [][]RuleSpec{{r("AllowTools", "Code.*")}}, `no method of Git is allowed by AllowTools("Code.*")`, ""},
		{"denied whole", [][]RuleSpec{{r("DenyTools", "G*")}}, `every method of Git is denied by DenyTools("G*")`, ""},
		{"some denied", [][]RuleSpec{{r("DenyTools", "*.delete")}}, "", `P1:DenyTools("*.delete")`},
		{"effects and args", [][]RuleSpec{{r("AllowEffects", Ident("read")), r("DenyArgs", "Code", "x"), r("DenyArgs", "Git.push", "force"), r("ApproveTools", "*")}},
			"", `P1:AllowEffects(read) P1:DenyArgs("Git.push", "force") P1:ApproveTools("*")`},
	}
	for _, tt := range tests {
		e := set(t, tt.policies...).ExplainTool("Git")
		hidden := ""
		if e.Hidden != nil {
			hidden = e.Hidden.Reason
		}
		if hidden != tt.hidden {
			t.Errorf("%s: hidden %q, want %q", tt.name, hidden, tt.hidden)
		}
		if got := refs(e.Rules); got != tt.rules {
			t.Errorf("%s: rules %s, want %s", tt.name, got, tt.rules)
		}
	}
}
