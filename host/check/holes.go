package check

import (
	"strings"
	"sync"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
)

// knownTools lists the declared tools whose provider type describes its methods (Workspace,
// Bash, http packages), for what the policies say of them before a run, in source order.
func (c *checker) knownTools(decls []lang.Decl) []policy.KnownTool {
	if c.cfg.ToolMethods == nil {
		return nil
	}
	n := 0
	for _, d := range decls {
		if _, ok := d.(*lang.ToolDecl); ok {
			n++
		}
	}
	out := make([]policy.KnownTool, 0, n)
	for _, d := range decls {
		td, ok := d.(*lang.ToolDecl)
		if !ok || c.decls[td.Name.Name] != d { // a second declaration of a name is an error
			continue
		}
		if ms, ok := c.cfg.ToolMethods(td.Provider.Name); ok {
			out = append(out, policy.KnownTool{Name: td.Name.Name, Methods: ms})
		}
	}
	return out
}

// checkPolicyHoles warns of what agents' tool policies leave open or never apply
// (policy.Set.Findings): each agent's policies are checked together, as the runtime applies
// them, and a policy no agent requires on its own. A finding is reported once at its rule,
// however many agents share the policy. The sets are checked in up to parts contiguous runs
// at once, each with its own index of the tools (policy.KnownTools is not shared between
// goroutines); their findings, taken in run order, are those of one run.
func (c *checker) checkPolicyHoles(decls []lang.Decl, parts int) {
	known := c.knownTools(decls)
	if len(known) == 0 {
		return
	}
	required := map[string]bool{}
	var sets []policy.Set
	for _, d := range decls {
		switch x := d.(type) {
		case *lang.AgentDecl:
			for _, id := range x.Requires {
				required[id.Name] = true
			}
			if set := c.policySet(x); len(set) > 0 {
				sets = append(sets, set)
			}
		}
	}
	for _, d := range decls {
		if pd, ok := d.(*lang.PolicyDecl); ok && !required[pd.Name.Name] {
			if set := c.policySet(&lang.AgentDecl{Requires: []*lang.Ident{pd.Name}}); len(set) > 0 {
				sets = append(sets, set)
			}
		}
	}
	parts = max(1, min(parts, len(sets)/minHoleSets))
	found := make([][]policy.Finding, parts)
	findings := func(i int) {
		tools := policy.NewKnownTools(known)
		for _, set := range sets[len(sets)*i/parts : len(sets)*(i+1)/parts] {
			found[i] = append(found[i], set.Findings(tools)...)
		}
	}
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		wg.Go(func() { findings(i) })
	}
	func() {
		defer wg.Wait() // should the first run panic
		findings(0)
	}()

	var rules map[string]lang.Pos // a rule's RuleSpec position, as lang wrote it
	seen := map[string]bool{}
	for _, fs := range found {
		for _, f := range fs {
			if rules == nil { // findings are few: the rules are indexed when there is one
				rules = map[string]lang.Pos{}
				for _, d := range decls {
					if pd, ok := d.(*lang.PolicyDecl); ok {
						for _, r := range pd.Rules {
							rules[r.Pos.String()] = r.Pos
						}
					}
				}
			}
			pos, ok := rules[f.Pos]
			if key := f.Pos + "\x00" + f.Message; !ok || seen[key] {
				continue
			} else {
				seen[key] = true
			}
			c.warn(pos, policy.CodeHole, "%s", f.Message)
		}
	}
}

// minHoleSets is the fewest policy sets each run of checkPolicyHoles takes: fewer are not
// worth a goroutine.
const minHoleSets = 128

// checkPatternMethod warns when a tool pattern names a method its declared tool does not
// have (DenyTools("Docs.delet") denies nothing), where the provider describes its methods.
func (c *checker) checkPatternMethod(a *lang.Arg, pattern, toolPart string) {
	td, ok := c.decls[toolPart].(*lang.ToolDecl)
	if !ok || c.cfg.ToolMethods == nil {
		return
	}
	ms, ok := c.cfg.ToolMethods(td.Provider.Name)
	if !ok {
		return
	}
	_, method, hasDot := strings.Cut(pattern, ".")
	if !hasDot {
		return
	}
	// The pattern's tool part is toolPart, which holds no dot: it matches "toolPart.m" when its
	// method part matches m (policy.MatchPattern, without making each target).
	for _, m := range ms {
		if policy.MatchPart(method, m.Name) {
			return
		}
	}
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.Name
	}
	if strings.Contains(method, "*") {
		c.warn(a.Value.Position(), CodeUndeclared, "%q matches no method of %s (it has: %s), so the rule never applies", pattern, toolPart, strings.Join(names, ", "))
		return
	}
	c.warn(a.Value.Position(), CodeUndeclared, "%s has no method %s (it has: %s), so the rule never applies to it%s", toolPart, method, strings.Join(names, ", "), suggest(method, names).textOnly()) // the method is part of the pattern string
}
