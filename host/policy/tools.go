package policy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"halolang.dev/halo/host/policy/fold"
	"halolang.dev/halo/host/tool"
)

// A ToolMethod is a method an agent could be offered: its "Tool.method" target and effect.
type ToolMethod struct {
	Target string
	Effect tool.Effect
}

// Offered returns the methods the set lets the model see, in the order given: those that
// every AllowTools and AllowEffects rule allows and no DenyTools rule hides. When methods
// is not empty and none is left, it fails with a TOOL_CONFIG error.
func (s Set) Offered(methods []ToolMethod) ([]ToolMethod, error) {
	var out []ToolMethod
	for _, m := range methods {
		if _, _, reason := s.hidden(m.Target, m.Effect); reason == "" {
			out = append(out, m)
		}
	}
	if len(methods) > 0 && len(out) == 0 {
		names := make([]string, 0, len(s))
		for _, p := range s {
			if p != nil {
				names = append(names, p.Name)
			}
		}
		return nil, tool.Errorf(tool.CodeToolConfig, "the agent's policies (%s) allow none of its %d tool methods", strings.Join(names, ", "), len(methods))
	}
	return out, nil
}

// hidden returns the first rule that hides target, with the reason.
func (s Set) hidden(target string, effect tool.Effect) (*Policy, *rule, string) {
	return s.hiddenSkipping(target, effect, nil)
}

// hiddenSkipping is hidden as if the rule skip were not there (nil: every rule counts).
func (s Set) hiddenSkipping(target string, effect tool.Effect, skip *rule) (*Policy, *rule, string) {
	if !effect.Valid() {
		effect = tool.External
	}
	for _, p := range s {
		if p == nil {
			continue
		}
		for _, r := range p.rules {
			if r == skip {
				continue
			}
			switch r.kind {
			case kAllowTools:
				if !matchAny(r.patterns, target) {
					return p, r, fmt.Sprintf("%s is not allowed by %s", target, r.text())
				}
			case kDenyTools:
				if matchAny(r.patterns, target) {
					return p, r, fmt.Sprintf("%s is denied by %s", target, r.text())
				}
			case kAllowEffects:
				if !hasEffect(r.effects, effect) {
					return p, r, fmt.Sprintf("%s has effect %s, which %s does not allow", target, effect, r.text())
				}
			}
		}
	}
	return nil, nil, ""
}

// A Verdict is what the policies say about one tool call.
type Verdict int

const (
	// Allowed calls run.
	Allowed Verdict = iota
	// Refused calls do not run; the model is told why.
	Refused
	// NeedsApproval calls wait for a person.
	NeedsApproval
)

func (v Verdict) String() string {
	switch v {
	case Allowed:
		return "allowed"
	case Refused:
		return "refused"
	case NeedsApproval:
		return "needs approval"
	}
	return "verdict(" + strconv.Itoa(int(v)) + ")"
}

// A Decision is the verdict on one tool call and the rule that gave it.
type Decision struct {
	Verdict Verdict
	// Policy and Rule name the deciding rule (empty for Allowed).
	Policy string
	Rule   string
	// Reason says why a call was refused or needs approval.
	Reason string

	pos  string
	text string // the rule as written
	log  bool
}

// Ref names the deciding rule; the zero RuleRef for Allowed.
func (d Decision) Ref() RuleRef { return RuleRef{Policy: d.Policy, Rule: d.Rule, Text: d.text} }

// Violation returns the refusal as a *Violation (phase tool), or nil when the call was not
// refused. A call waiting for approval is not a violation.
func (d Decision) Violation() *Violation {
	if d.Verdict != Refused {
		return nil
	}
	return &Violation{Policy: d.Policy, Rule: d.Rule, Phase: ToolPhase, Message: d.Reason, Pos: d.pos, Log: d.log}
}

// Decide checks one tool call the agent asked for: target is "Tool.method", effect its
// method's effect, args the JSON arguments object, read with tool.ParseArgs (arguments it
// refuses, a key given twice say, are refused by any DenyArgs rule on target, which cannot
// check them). Refusal checks (AllowTools, DenyTools, AllowEffects, DenyArgs) run first, so
// a refused call is never put to a person; then ApproveTools and ApproveEffects.
func (s Set) Decide(target string, effect tool.Effect, args json.RawMessage) Decision {
	a, err := tool.ParseArgs(args)
	return s.decide(target, effect, a.Value, err)
}

// DecideArgs is Decide for arguments already decoded (tool.ParseArgs): the tool loop decodes
// a call's arguments once, and the policies check that very value.
func (s Set) DecideArgs(target string, effect tool.Effect, args tool.Args) Decision {
	return s.decide(target, effect, args.Value, nil)
}

func (s Set) decide(target string, effect tool.Effect, args map[string]any, decodeErr error) Decision {
	if !effect.Valid() {
		effect = tool.External
	}
	if p, r, reason := s.hidden(target, effect); r != nil {
		return Decision{Verdict: Refused, Policy: p.Name, Rule: r.name, Reason: reason, pos: r.pos, text: r.text(), log: p.Log}
	}
	for _, ref := range s.argRules(target) {
		p, r := ref.p, ref.r
		refuse := func(reason string) Decision {
			return Decision{Verdict: Refused, Policy: p.Name, Rule: r.name, Reason: reason, pos: r.pos, text: r.text(), log: p.Log}
		}
		if decodeErr != nil {
			return refuse(fmt.Sprintf("the arguments of %s %v, so %s cannot check them", target, decodeErr, r.text()))
		}
		if reason := denyArgs(r, args); reason != "" {
			return refuse(reason)
		}
	}
	if d, ok := s.approval(target, effect); ok {
		return d
	}
	return Decision{Verdict: Allowed}
}

// argRules returns the DenyArgs rules that check target's arguments, in the order written.
func (s Set) argRules(target string) []ruleRef {
	var out []ruleRef
	s.each(kDenyArgs, func(p *Policy, r *rule) bool {
		if matchAny(r.patterns, target) {
			out = append(out, ruleRef{p, r})
		}
		return true
	})
	return out
}

// approval returns the first ApproveTools or ApproveEffects rule that puts a call to target
// up for a person's approval.
func (s Set) approval(target string, effect tool.Effect) (Decision, bool) {
	p, r := s.approvalRule(target, effect)
	if r == nil {
		return Decision{}, false
	}
	text := r.text()
	reason := fmt.Sprintf("%s matches %s", target, text)
	if r.kind == kApproveEffects {
		reason = fmt.Sprintf("%s has effect %s (%s)", target, effect, text)
	}
	return Decision{Verdict: NeedsApproval, Policy: p.Name, Rule: r.name, Reason: reason, pos: r.pos, text: text}, true
}

// approvalRule returns the first rule of s that puts a call to target to a person, and its
// policy; nil when none does. What only asks whether one does (the hole checks of halo
// validate) spells no reason.
func (s Set) approvalRule(target string, effect tool.Effect) (*Policy, *rule) {
	for _, p := range s {
		if p == nil {
			continue
		}
		for _, r := range p.rules {
			switch {
			case r.kind == kApproveTools && matchAny(r.patterns, target),
				r.kind == kApproveEffects && hasEffect(r.effects, effect):
				return p, r
			}
		}
	}
	return nil, nil
}

// denyArgs returns why r refuses the arguments, or "".
func denyArgs(r *rule, args any) string {
	check := func(name, value string) string {
		hit, err := matchValue(r, value)
		switch {
		case err != nil:
			return fmt.Sprintf("%s could not check %s: %v", r.text(), name, err)
		case hit:
			return fmt.Sprintf("%s %q matches %s", name, excerpt(value), r.text())
		}
		return ""
	}
	if r.hasArg {
		obj, _ := args.(map[string]any)
		v, ok := obj[r.arg]
		if !ok || v == nil {
			return check("argument "+r.arg, "")
		}
		reason := ""
		walkScalars(v, false, func(s string) bool {
			reason = check("argument "+r.arg, s)
			return reason == ""
		})
		return reason
	}
	reason := ""
	walkScalars(args, false, func(s string) bool {
		reason = check("an argument", s)
		return reason == ""
	})
	return reason
}

// matchValue checks a value as given (in each of its case forms: caseForms) and with
// look-alikes folded and escapes decoded; any match is a hit.
func matchValue(r *rule, v string) (bool, error) {
	hit, err := matchSome(r, v)
	if hit || err != nil {
		return hit, err
	}
	if f := fold.String(v, fold.Options{JSONEscapes: true}); f.Changed() {
		return matchSome(r, f.Folded)
	}
	return false, nil
}

func hasEffect(effs []tool.Effect, e tool.Effect) bool {
	for _, x := range effs {
		if x == e {
			return true
		}
	}
	return false
}

func matchAny(patterns []string, target string) bool {
	for _, p := range patterns {
		if MatchPattern(p, target) {
			return true
		}
	}
	return false
}

// ParsePattern checks a tool pattern as AllowTools, DenyTools, ApproveTools and DenyArgs read
// it, and returns its tool part. It accepts Tool, Tool.method, Tool.*, *.method, * and globs
// within a part ("Gi*", "*.delete_*"); the method part may hold dots, as MCP tool names may
// ("Git.delete.repo"), since the first dot separates tool from method (see MatchPattern). The
// tool part is a tool's name, or a glob when it holds a `*`.
func ParsePattern(p string) (toolPart string, err error) {
	toolPart, method, hasDot := strings.Cut(p, ".")
	if toolPart == "" || hasDot && method == "" {
		return "", fmt.Errorf("%q is not a tool pattern: write Tool, Tool.method, Tool.*, *.method or *", p)
	}
	return toolPart, nil
}

// MatchPattern reports whether a tool pattern matches a "Tool.method" target. Tool names
// never hold a dot, so the first dot of each separates tool from method; a method name may
// hold more (MCP allows letters, digits, '_', '-' and '.'). A pattern without a dot names a
// tool (any of its methods). A `*` matches any run of characters within its part: in the
// tool part it never reaches the method, so *.delete matches Files.delete but not Files,
// and in the method part it matches any method name, so Git.* matches Git.delete.repo.
func MatchPattern(pattern, target string) bool {
	tool, method, hasMethod := strings.Cut(target, ".")
	pt, pm, hasDot := strings.Cut(pattern, ".")
	if !hasDot {
		return glob(pt, tool)
	}
	return hasMethod && glob(pt, tool) && glob(pm, method)
}

// MatchPart reports whether one part of a tool pattern, the tool's or the method's (split
// at the first dot, as MatchPattern splits it), matches that part of a target.
func MatchPart(part, s string) bool { return glob(part, s) }

// glob matches s against a pattern whose only metacharacter is `*`, which matches any run
// of characters.
func glob(p, s string) bool {
	if strings.IndexByte(p, '*') < 0 {
		return p == s // most parts name a tool or a method as it is
	}
	// Iterative matching with one backtrack point, as for path.Match's star: the last star
	// seen absorbs one more character each time the rest fails.
	px, sx := 0, 0
	starP, starS := -1, 0
	for sx < len(s) {
		switch {
		case px < len(p) && p[px] == '*':
			starP, starS = px, sx
			px++
		case px < len(p) && p[px] == s[sx]:
			px++
			sx++
		case starP >= 0:
			starS++
			px, sx = starP+1, starS
		default:
			return false
		}
	}
	for px < len(p) && p[px] == '*' {
		px++
	}
	return px == len(p)
}
