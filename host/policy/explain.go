package policy

import (
	"strings"

	"halolang.dev/halo/host/tool"
)

// A RuleRef names one rule of a set: its policy, the rule's name and the rule as written.
type RuleRef struct {
	Policy string `json:"policy"`
	Rule   string `json:"rule"`
	Text   string `json:"text"`
}

func (r ruleRef) ref() RuleRef { return RuleRef{Policy: r.p.Name, Rule: r.r.name, Text: r.r.text()} }

// An Explanation is what a set's tool rules say about one method before any call is made
// (halo plan shows it). Decide reaches its verdicts through the same rules in the same order:
// Hidden first, then ArgRules, then Approval.
type Explanation struct {
	// Hidden is the refusal of the rule that keeps the method from being offered (AllowTools,
	// DenyTools, AllowEffects): a call to it is refused. Nil when the method is offered.
	Hidden *Decision
	// ArgRules are the DenyArgs rules that check a call's arguments; each may refuse a call.
	ArgRules []RuleRef
	// Approval is the rule that puts a call up for a person's approval (ApproveTools,
	// ApproveEffects); nil when calls that pass run without asking.
	Approval *Decision
}

// Explain says which rules allow, hide, check or put up for approval calls to target (a
// "Tool.method") whose method has effect.
func (s Set) Explain(target string, effect tool.Effect) Explanation {
	if !effect.Valid() {
		effect = tool.External
	}
	var e Explanation
	if p, r, reason := s.hidden(target, effect); r != nil {
		e.Hidden = &Decision{Verdict: Refused, Policy: p.Name, Rule: r.name, Reason: reason, pos: r.pos, text: r.text(), log: p.Log}
		return e
	}
	for _, ref := range s.argRules(target) {
		e.ArgRules = append(e.ArgRules, ref.ref())
	}
	if d, ok := s.approval(target, effect); ok {
		e.Approval = &d
	}
	return e
}

// A ToolExplanation is what a set's tool rules say about a tool whose methods and effects are
// known only once its server or plugin starts (an MCP server, a module package).
type ToolExplanation struct {
	// Hidden is the refusal of a rule that hides every method the tool could have; nil when
	// some method may be offered.
	Hidden *Decision
	// Rules are the rules that may apply to some of its methods, in the order written: which
	// of them do depends on each method's name and effect.
	Rules []RuleRef
}

// ExplainTool says which rules may apply to the methods of the tool called name when its
// methods are not known.
func (s Set) ExplainTool(name string) ToolExplanation {
	var e ToolExplanation
	for _, p := range s {
		if p == nil {
			continue
		}
		for _, r := range p.rules {
			switch r.kind {
			case kAllowTools:
				if !anyMayMatch(r.patterns, name) {
					e.Hidden = &Decision{Verdict: Refused, Policy: p.Name, Rule: r.name, Reason: "no method of " + name + " is allowed by " + r.text(), pos: r.pos, text: r.text(), log: p.Log}
					return e
				}
				if !anyMatchesAll(r.patterns, name) {
					e.Rules = append(e.Rules, ruleRef{p, r}.ref())
				}
			case kDenyTools:
				if anyMatchesAll(r.patterns, name) {
					e.Hidden = &Decision{Verdict: Refused, Policy: p.Name, Rule: r.name, Reason: "every method of " + name + " is denied by " + r.text(), pos: r.pos, text: r.text(), log: p.Log}
					return e
				}
				if anyMayMatch(r.patterns, name) {
					e.Rules = append(e.Rules, ruleRef{p, r}.ref())
				}
			case kApproveTools, kDenyArgs:
				if anyMayMatch(r.patterns, name) {
					e.Rules = append(e.Rules, ruleRef{p, r}.ref())
				}
			case kAllowEffects, kApproveEffects:
				e.Rules = append(e.Rules, ruleRef{p, r}.ref())
			}
		}
	}
	return e
}

// anyMayMatch reports whether some pattern can match some method of the tool called name.
func anyMayMatch(patterns []string, name string) bool {
	for _, p := range patterns {
		pt, _, _ := strings.Cut(p, ".")
		if glob(pt, name) {
			return true
		}
	}
	return false
}

// anyMatchesAll reports whether some pattern matches every method of the tool called name:
// the tool's name alone, or the tool with a method part of only stars.
func anyMatchesAll(patterns []string, name string) bool {
	for _, p := range patterns {
		pt, pm, hasDot := strings.Cut(p, ".")
		if glob(pt, name) && (!hasDot || strings.Trim(pm, "*") == "") {
			return true
		}
	}
	return false
}
