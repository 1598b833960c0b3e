package check

import (
	"strings"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy"
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkPolicy checks each rule as host/policy reads it (policy.CompileRules: the one table of
// rules, their arguments and what the runtime ignores), then what only the program can say:
// that the tools its patterns name are declared.
func (c *checker) checkPolicy(d *lang.PolicyDecl) {
	c.specs = appendRuleSpecs(c.specs[:0], d)
	p, ruleDiags := policy.CompileRules(d.Name.Name, c.specs)
	if c.decls[d.Name.Name] == lang.Decl(d) {
		c.compiledPolicy(d.Name.Name, p) // what the agents that require it are checked with
	}
	for i, r := range d.Rules {
		named := false
		for _, a := range r.Args {
			if a.Name != nil {
				// RuleSpecs drops names: policy would read Block(name: PII) as Block(PII).
				c.errorf(a.Position(), policy.CodeInvalid, "%s takes no named arguments", r.Name.Name)
				named = true
				break
			}
		}
		if named {
			continue
		}
		var diags []policy.Diagnostic
		if ruleDiags != nil { // nil when no rule has a problem
			diags = ruleDiags[i]
		}
		for _, pd := range diags {
			pos := r.Pos
			if pd.Arg > 0 && pd.Arg <= len(r.Args) {
				pos = r.Args[pd.Arg-1].Position()
			}
			var h hint
			if pd.Word != "" {
				h = suggest(pd.Word, pd.Known)
				if pd.Arg < 1 || pd.Arg > len(r.Args) || text(r.Args[pd.Arg-1].Value) != pd.Word {
					h = h.textOnly() // the word is part of the argument (a category in a string)
				}
			}
			sev := lang.Error
			if pd.Warning {
				sev = lang.Warning
			}
			c.report(pos, sev, pd.Code, "%s%s", pd.Message, h)
		}
		if len(diags) == 0 {
			c.checkPatternTools(r)
		}
	}
}

// checkPatternTools checks that the tool part of each tool pattern of r names a declared
// tool. A glob in it ("*", "Gi*") stands for whichever tools it matches.
func (c *checker) checkPatternTools(r *lang.Rule) {
	for _, a := range PatternArgs(r) {
		toolPart, err := policy.ParsePattern(text(a.Value))
		if err != nil || strings.Contains(toolPart, "*") {
			continue
		}
		if c.kindOf(toolPart) != "tool" {
			c.undeclaredIn(a.Value.Position(), "tool", toolPart, toolPart != text(a.Value))
			continue
		}
		c.checkPatternMethod(a, text(a.Value), toolPart)
	}
}

// PatternArgs returns the arguments of r that are tool patterns ("Tool.method", "Git.*"):
// all of AllowTools', DenyTools' and ApproveTools', DenyArgs' first, none of another rule's.
func PatternArgs(r *lang.Rule) []*lang.Arg {
	switch r.Name.Name {
	case "AllowTools", "DenyTools", "ApproveTools":
		return r.Args
	case "DenyArgs":
		if len(r.Args) > 0 {
			return r.Args[:1]
		}
	}
	return nil
}

// text returns the string or name an argument holds.
func text(v lang.Expr) string {
	switch x := v.(type) {
	case *lang.StringLit:
		return x.Value
	case *lang.Ident:
		return x.Name
	case *lang.Path:
		return x.String()
	}
	return ""
}
