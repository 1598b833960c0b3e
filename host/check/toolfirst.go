package check

import (
	"fmt"
	"strings"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// RuleSpecs turns a policy declaration into the RuleSpecs host/policy compiles: the one
// translation the checker and the runtime share.
func RuleSpecs(pd *lang.PolicyDecl) []policy.RuleSpec {
	return appendRuleSpecs(make([]policy.RuleSpec, 0, len(pd.Rules)), pd)
}

// appendRuleSpecs appends pd's RuleSpecs to specs. The checker hands it the list of the
// policy it checked before, emptied: policy.CompileRules keeps what it reads of each spec
// (the strings and the argument lists, which are new for each policy) and not the list,
// and the lists of the 1 MB benchmark program were 360 KB that nothing read again.
func appendRuleSpecs(specs []policy.RuleSpec, pd *lang.PolicyDecl) []policy.RuleSpec {
	n, size := 0, 0
	for _, r := range pd.Rules {
		n += len(r.Args)
		size += len(r.Pos.File) + 10 // and two colons, a line and a column that fit in most
	}
	args := make([]any, n) // the rules' arguments, carved from one block
	// The rules' positions, spelled into one buffer and cut from one string: a policy's
	// rules share their file name, and halo validate compiles every policy.
	var b strings.Builder
	b.Grow(size)
	var endsOf [16]int
	ends := endsOf[:0]
	for _, r := range pd.Rules {
		var scratch [64]byte
		b.Write(r.Pos.Append(scratch[:0]))
		ends = append(ends, b.Len())
	}
	poss, start := b.String(), 0
	for i, r := range pd.Rules {
		spec := policy.RuleSpec{Name: r.Name.Name, Pos: poss[start:ends[i]]}
		start = ends[i]
		if len(r.Args) > 0 {
			spec.Args, args = args[:len(r.Args):len(r.Args)], args[len(r.Args):]
			for i, a := range r.Args {
				spec.Args[i] = ruleArg(a.Value)
			}
		}
		specs = append(specs, spec)
	}
	return specs
}

// ruleArg is a rule argument as host/policy reads it: a string, number, boolean, null, or a
// bare name (a dotted one too: DenyTools(Git.delete)). Any other expression (a list, an
// object, Env.NAME, a call) is passed as itself, which no rule takes.
func ruleArg(e lang.Expr) any {
	switch x := e.(type) {
	case *lang.StringLit:
		return x.Value
	case *lang.NumberLit:
		return x.Value
	case *lang.BoolLit:
		return x.Value
	case *lang.NullLit:
		return nil
	case *lang.Ident:
		return policy.Ident(x.Name)
	case *lang.Path:
		return policy.Ident(x.String())
	}
	return e
}

// compiledPolicy keeps the compiled policy called name (nil when it has errors).
func (c *checker) compiledPolicy(name string, p *policy.Policy) {
	if c.compiled == nil {
		c.compiled = map[string]*policy.Policy{}
	}
	c.compiled[name] = p
}

// policySet compiles the policies agent a requires (checkPolicy has compiled most of them
// already); a policy with errors (reported where it is declared) is left out.
func (c *checker) policySet(a *lang.AgentDecl) policy.Set {
	var set policy.Set
	for _, id := range a.Requires {
		pd, ok := c.decls[id.Name].(*lang.PolicyDecl)
		if !ok {
			continue
		}
		p, seen := c.compiled[id.Name]
		if !seen {
			p, _ = policy.Compile(pd.Name.Name, RuleSpecs(pd))
			c.compiledPolicy(id.Name, p)
		}
		if p != nil {
			set = append(set, p)
		}
	}
	return set
}

// checkToolFirst checks an agent call's tool: T: the tool must have one method an agent can
// call, and the agent's tool policies must not refuse it (AllowTools, DenyTools,
// AllowEffects), since the runtime checks the call as it checks any call the agent makes.
// Only tools whose provider type declares its methods can be checked before a run.
func (c *checker) checkToolFirst(a *lang.AgentDecl, id *lang.Ident) {
	td, ok := c.decls[id.Name].(*lang.ToolDecl)
	if !ok || c.cfg.ToolMethods == nil {
		return
	}
	ms, ok := c.cfg.ToolMethods(td.Provider.Name)
	if !ok {
		return
	}
	var callable []tool.Method
	for _, m := range ms {
		if !m.PipelineOnly {
			callable = append(callable, m)
		}
	}
	if len(callable) != 1 {
		names := make([]string, len(callable))
		for i, m := range callable {
			names[i] = m.Name
		}
		c.errorf(id.Pos(), CodeToolConfig, "tool: %s names a tool with %d methods (%s); call the method you mean as a stage before the agent", id.Name, len(callable), strings.Join(names, ", "))
		return
	}
	m := callable[0]
	target := id.Name + "." + m.Name
	set := c.policySet(a)
	if _, err := set.Offered([]policy.ToolMethod{{Target: target, Effect: m.EffectOrDefault()}}); err == nil {
		return
	}
	// Offered hid it; Decide checks the same rules first and says which refused.
	d := set.Decide(target, m.EffectOrDefault(), []byte(`{}`))
	reason := fmt.Sprintf("policy %s: %s", d.Policy, d.Reason)
	c.errorf(id.Pos(), CodeToolConfig, "tool: %s calls %s, which agent %s's policies refuse (%s)", id.Name, target, a.Name.Name, reason)
}
