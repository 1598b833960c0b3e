package policy

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"halolang.dev/halo/host/tool"
)

// CodeHole: a tool rule that leaves a method beside the one it guards open, or that never
// applies because another rule refuses every method it names first (halo validate warns).
const CodeHole = "POLICY_HOLE"

// A KnownTool is a declared tool whose methods are known before a run (the built-ins,
// http packages): its name (a declared name, which holds no dot) and methods.
type KnownTool struct {
	Name    string
	Methods []tool.Method
}

// KnownTools indexes known tools by name, each method's parameter names read from its
// schema once: halo validate asks it about every pattern of every agent's policies, and a
// program of many tools must not be scanned, nor its schemas decoded, for each. It is not
// safe for concurrent use.
type KnownTools struct {
	byName map[string]*knownTool
	// schemas holds the parameter names of each method's schema decoded so far, by the
	// method: tools of one provider type share its list of methods (the registry's), so a
	// schema is decoded once per type and looked up without hashing its text.
	schemas map[*tool.Method]paramSet
	// scratch is matching's result, reused by the next call.
	scratch []knownMethod
}

type knownTool struct {
	KnownTool
	methods []knownMethod // built on the first look-up
}

// paramSet is a schema's argument names; ok is false for a method that takes any fields.
type paramSet struct {
	names map[string]bool
	ok    bool
}

// NewKnownTools indexes tools; of two tools of one name the first counts.
func NewKnownTools(tools []KnownTool) *KnownTools {
	k := &KnownTools{byName: make(map[string]*knownTool, len(tools)), schemas: map[*tool.Method]paramSet{}}
	block := make([]knownTool, len(tools)) // one allocation, not one for each tool
	for i, t := range tools {
		if _, dup := k.byName[t.Name]; !dup {
			block[i].KnownTool = t
			k.byName[t.Name] = &block[i]
		}
	}
	return k
}

// lookup returns the methods of the tool called name.
func (k *KnownTools) lookup(name string) ([]knownMethod, bool) {
	t, ok := k.byName[name]
	if !ok {
		return nil, false
	}
	if t.methods == nil {
		t.methods = make([]knownMethod, len(t.Methods))
		// The targets "Tool.method" are cut from one string.
		size := 0
		for i := range t.Methods {
			size += len(t.Name) + 1 + len(t.Methods[i].Name)
		}
		var b strings.Builder
		b.Grow(size)
		for i := range t.Methods {
			b.WriteString(t.Name)
			b.WriteByte('.')
			b.WriteString(t.Methods[i].Name)
		}
		targets := b.String()
		for i := range t.Methods {
			m := &t.Methods[i]
			ps, seen := k.schemas[m]
			if !seen {
				ps.names, ps.ok = paramNames(m.Params)
				k.schemas[m] = ps
			}
			n := len(t.Name) + 1 + len(m.Name)
			t.methods[i] = knownMethod{target: targets[:n], m: m, params: ps.names, hasParams: ps.ok}
			targets = targets[n:]
		}
	}
	return t.methods, true
}

// A Finding is something a set's tool rules leave open or never do, at one rule.
type Finding struct {
	// Policy is the policy holding the rule, and Pos where the rule is written (its
	// RuleSpec's Pos).
	Policy, Pos string
	Message     string
}

// Findings checks the tool rules of s against the methods of tools (what halo validate can
// see of an agent's tools before a run):
//
//   - A DenyArgs on an argument of one method of a tool, where a sibling method of that tool
//     takes the same argument with an effect at least as strong (Code.edit and Code.delete
//     beside Code.write) and no rule of s guards it: no DenyArgs checks that argument, and
//     nothing hides it or puts it to a person. The check on one method is then one call away
//     from being beside the point.
//   - A DenyArgs on an argument that none of the methods it names takes: it checks "" and
//     never refuses anything.
//   - An AllowTools, DenyTools, ApproveTools or DenyArgs pattern that names methods of a known
//     tool every one of which another rule already refuses: it never applies. And an
//     ApproveEffects whose every effect an AllowEffects refuses.
//
// Tools whose methods are not known (MCP servers, module packages) are left out, as are
// patterns whose tool part is a glob. A pattern that matches no method at all is the
// caller's to report (host/check names the method that is not there).
func (s Set) Findings(tools *KnownTools) []Finding {
	var out []Finding
	for _, p := range s {
		if p == nil {
			continue
		}
		for _, r := range p.rules {
			switch r.kind {
			case kAllowTools, kDenyTools, kApproveTools, kDenyArgs:
				for _, pat := range r.patterns {
					if msg := s.neverApplies(r, pat, tools); msg != "" {
						out = append(out, Finding{Policy: p.Name, Pos: r.pos, Message: msg})
					}
				}
				if r.kind == kDenyArgs && r.hasArg {
					if msg := s.argHole(r, tools); msg != "" {
						out = append(out, Finding{Policy: p.Name, Pos: r.pos, Message: msg})
					}
				}
			case kApproveEffects:
				if msg := s.effectsNeverApproved(r); msg != "" {
					out = append(out, Finding{Policy: p.Name, Pos: r.pos, Message: msg})
				}
			}
		}
	}
	return out
}

// A knownMethod is one method of a known tool, as a target, with the argument names its
// schema lists (hasParams false: it takes any fields).
type knownMethod struct {
	target    string
	m         *tool.Method
	params    map[string]bool
	hasParams bool
}

// takes reports whether the method takes argument arg (any method without a schema does).
func (km knownMethod) takes(arg string) bool { return !km.hasParams || km.params[arg] }

// guardedBy reports whether target is among the methods ms of a DenyArgs on arg that take
// it: the rule itself guards those.
func guardedBy(ms []knownMethod, target, arg string) bool {
	for _, km := range ms {
		if km.target == target && km.takes(arg) {
			return true
		}
	}
	return false
}

// matching returns the methods of tools that pat matches, when its tool part names a known
// tool (nil otherwise: a glob, or a tool whose methods only a run can list). The slice is
// valid until the next call.
func matching(pat string, tools *KnownTools) ([]knownMethod, bool) {
	toolPart, method, hasDot := strings.Cut(pat, ".")
	if strings.Contains(toolPart, "*") {
		return nil, false
	}
	ms, ok := tools.lookup(toolPart)
	if !ok {
		return nil, false
	}
	// Each target is toolPart, a dot and a method name (a tool's name has no dot), so pat
	// matches it as MatchPattern would when its method part matches the method's name.
	out := tools.scratch[:0]
	for _, km := range ms {
		if !hasDot || glob(method, km.m.Name) {
			out = append(out, km)
		}
	}
	tools.scratch = out
	return out, true
}

// neverApplies says why r's pattern pat never applies: every known method it names is
// refused by another rule first.
func (s Set) neverApplies(r *rule, pat string, tools *KnownTools) string {
	ms, known := matching(pat, tools)
	if !known || len(ms) == 0 {
		return ""
	}
	var by string
	for _, km := range ms {
		var skip *rule
		if r.kind == kDenyTools {
			skip = r
		}
		p, h, _ := s.hiddenSkipping(km.target, km.m.EffectOrDefault(), skip)
		if h == nil || h == r {
			return ""
		}
		if by == "" {
			by = fmt.Sprintf("%s (policy %s)", h.text(), p.Name)
		}
	}
	what := ms[0].target
	if len(ms) > 1 {
		what = fmt.Sprintf("every method %q names", pat)
	}
	return fmt.Sprintf("%s never applies to %q: %s is refused first by %s; remove the rule or the one that refuses", r.text(), pat, what, by)
}

// argHole says which siblings of the methods a DenyArgs rule checks take the same argument
// and are guarded by nothing in s, or that no method it names takes the argument.
func (s Set) argHole(r *rule, tools *KnownTools) string {
	ms, known := matching(r.patterns[0], tools)
	if !known || len(ms) == 0 {
		return ""
	}
	weakest := effectRank(tool.External)
	takes := false
	for _, km := range ms {
		if km.takes(r.arg) {
			takes = true
			weakest = min(weakest, effectRank(km.m.EffectOrDefault()))
		}
	}
	if !takes {
		var names []string
		for _, km := range ms {
			if km.hasParams {
				for n := range km.params {
					names = append(names, n)
				}
			}
		}
		sort.Strings(names)
		return fmt.Sprintf("%s never refuses anything: %s takes no argument %q (it takes %s), so the rule checks \"\"", r.text(), r.patterns[0], r.arg, strings.Join(slices.Compact(names), ", "))
	}
	toolName, _, _ := strings.Cut(ms[0].target, ".")
	var open []string
	all, _ := tools.lookup(toolName)
	for _, km := range all {
		if !km.hasParams || !km.params[r.arg] || effectRank(km.m.EffectOrDefault()) < weakest || guardedBy(ms, km.target, r.arg) {
			continue
		}
		if !s.guards(km.target, km.m.EffectOrDefault(), r.arg) {
			open = append(open, km.target)
		}
	}
	if len(open) == 0 {
		return ""
	}
	return fmt.Sprintf("%s guards %s, but %s also %s %q and nothing guards %s: a DenyArgs on each, a DenyTools or an ApproveTools closes the hole", r.text(), r.patterns[0], strings.Join(open, ", "), either(len(open), "takes", "take"), r.arg, either(len(open), "it", "them"))
}

// guards reports whether s keeps an eye on argument arg of calls to target: hides target,
// puts calls to it to a person, or checks arg (or every argument) with DenyArgs.
func (s Set) guards(target string, effect tool.Effect, arg string) bool {
	if _, r, _ := s.hidden(target, effect); r != nil {
		return true
	}
	if _, r := s.approvalRule(target, effect); r != nil {
		return true
	}
	for _, ref := range s.argRules(target) {
		if !ref.r.hasArg || ref.r.arg == arg {
			return true
		}
	}
	return false
}

// effectsNeverApproved says why an ApproveEffects rule never puts a call to a person: an
// AllowEffects refuses each of its effects first.
func (s Set) effectsNeverApproved(r *rule) string {
	var by *rule
	for _, e := range r.effects {
		refused := false
		for _, p := range s {
			if p == nil {
				continue
			}
			for _, a := range p.rules {
				if a.kind == kAllowEffects && !hasEffect(a.effects, e) {
					refused, by = true, a
				}
			}
		}
		if !refused {
			return ""
		}
	}
	return fmt.Sprintf("%s never applies: %s refuses every method with those effects first", r.text(), by.text())
}

// effectRank orders effects by what a call can do: read, write, external.
func effectRank(e tool.Effect) int {
	switch e {
	case tool.Read:
		return 0
	case tool.Write:
		return 1
	}
	return 2
}

// paramNames returns the argument names a method's JSON Schema lists; ok is false for a
// method that takes any fields (no schema, or one without properties).
func paramNames(schema json.RawMessage) (map[string]bool, bool) {
	if len(schema) == 0 {
		return nil, false
	}
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil || sc.Properties == nil {
		return nil, false
	}
	out := make(map[string]bool, len(sc.Properties))
	for k := range sc.Properties {
		out[k] = true
	}
	return out, true
}

func either(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
