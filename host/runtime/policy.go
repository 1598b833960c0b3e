package runtime

import (
	"errors"
	"strings"

	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
)

type compiledPolicy = policy.Policy

// compilePolicies turns every policy declaration into host/policy's compiled form.
func compilePolicies(prog *lang.Program) (map[string]*compiledPolicy, error) {
	out := map[string]*compiledPolicy{}
	var errs []error
	for _, d := range prog.Decls() {
		pd, ok := d.(*lang.PolicyDecl)
		if !ok {
			continue
		}
		p, err := policy.Compile(pd.Name.Name, check.RuleSpecs(pd))
		if err != nil {
			errs = append(errs, err) // POLICY_INVALID, every problem listed
			continue
		}
		out[pd.Name.Name] = p
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// policySet returns the policies agent requires, in the order written.
func (r *Runtime) policySet(a *lang.AgentDecl) policy.Set {
	var s policy.Set
	for _, id := range a.Requires {
		if p := r.policies[id.Name]; p != nil {
			s = append(s, p)
		}
	}
	return s
}

// lookup resolves Validate's "context.…" paths over the run's context.
type lookup struct{ sc *scope }

func (l lookup) Lookup(path string) (any, bool) {
	v, err := l.sc.path(strings.Split(path, "."))
	if err != nil || v == nil {
		return nil, false
	}
	return v, true
}
