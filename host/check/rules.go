package check

import (
	"strings"

	"github.com/dlclark/regexp2/v2"

	"github.com/halo-lang/halo/host/lang"
	"github.com/halo-lang/halo/host/tool"
)

// argKind is what one rule argument must be.
type argKind int

const (
	argString       argKind = iota // a string
	argNameOrString                // a bare name (a category, a format, a pattern) or a string
	argNumber                      // a number > 0 (an amount in USD)
	argInteger                     // a whole number >= 1
	argAny                         // a string, number or boolean
)

// A ruleShape is a known policy rule: its arguments and whether the runtime enforces it.
type ruleShape struct {
	// min and max bound the argument count; max < 0 means any number.
	min, max int
	// kinds gives the kind of each argument; the last one repeats.
	kinds []argKind
	// notEnforced rules are accepted with a warning: the runtime ignores them.
	notEnforced string
}

// rules is the table of policy rules the policies seed lists. host/policy enforces the same
// set; this table only knows their shapes.
var rules = map[string]ruleShape{
	"Block":          {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"Redact":         {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"MaxWords":       {min: 1, max: 1, kinds: []argKind{argInteger}},
	"MaxChars":       {min: 1, max: 1, kinds: []argKind{argInteger}},
	"MaxTokens":      {min: 1, max: 1, kinds: []argKind{argInteger}},
	"MaxSpend":       {min: 1, max: 1, kinds: []argKind{argNumber}},
	"Require":        {min: 1, max: 1, kinds: []argKind{argNameOrString}},
	"Enforce":        {min: 1, max: 1, kinds: []argKind{argNameOrString}},
	"MatchRegex":     {min: 1, max: 1, kinds: []argKind{argString}},
	"Validate":       {min: 3, max: 3, kinds: []argKind{argString, argString, argAny}},
	"LogViolation":   {min: 0, max: 0},
	"AllowTools":     {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"DenyTools":      {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"ApproveTools":   {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"AllowEffects":   {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"ApproveEffects": {min: 1, max: -1, kinds: []argKind{argNameOrString}},
	"DenyArgs":       {min: 2, max: 3, kinds: []argKind{argNameOrString, argString, argString}},
	"Tone":           {max: -1, kinds: []argKind{argAny}, notEnforced: "it would need a model to judge the answer"},
	"Anonymize":      {max: -1, kinds: []argKind{argAny}, notEnforced: "it would need a model to judge the answer"},
	"MaxDensity":     {max: -1, kinds: []argKind{argAny}, notEnforced: "it would need a model to judge the answer"},
}

// Detector categories each of Block and Redact enforces.
var (
	blockCategories  = set("PromptInjection", "DestructiveOps", "Profanity", "Markdown", "PII", "SSN", "CreditCard", "Email", "Phone", "APIKey")
	redactCategories = set("PII", "SSN", "CreditCard", "Email", "Phone", "APIKey", "IPAddress")
	requireFormats   = set("JSON", "XML", "Citation")
	enforceFormats   = set("JSON")
	compareOps       = set("==", "!=", "<", "<=", ">", ">=")
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

// ruleNames lists the known rule names, for suggestions.
func ruleNames() []string {
	out := make([]string, 0, len(rules))
	for k := range rules {
		out = append(out, k)
	}
	return out
}

func (c *checker) checkPolicy(d *lang.PolicyDecl) {
	for _, r := range d.Rules {
		c.checkRule(r)
	}
}

func (c *checker) checkRule(r *lang.Rule) {
	name := r.Name.Name
	shape, ok := rules[name]
	if !ok {
		c.warn(r.Pos, CodeNotEnforced, "unknown rule %s is not enforced%s", name, suggest(name, ruleNames()))
		return
	}
	if shape.notEnforced != "" {
		c.warn(r.Pos, CodeNotEnforced, "%s is not enforced: %s", name, shape.notEnforced)
		return
	}
	for _, a := range r.Args {
		if a.Name != nil {
			c.errorf(a.Pos, CodeArguments, "%s takes no named arguments", name)
			return
		}
	}
	n := len(r.Args)
	switch {
	case n < shape.min || shape.max >= 0 && n > shape.max:
		c.errorf(r.Pos, CodeArguments, "%s takes %s, got %d", name, countText(shape), n)
		return
	}
	for i, a := range r.Args {
		k := shape.kinds[min(i, len(shape.kinds)-1)]
		if !c.argFits(name, i, a.Value, k) {
			return
		}
	}
	c.checkRuleValues(r)
}

func countText(s ruleShape) string {
	switch {
	case s.max == 0:
		return "no arguments"
	case s.min == s.max && s.min == 1:
		return "one argument"
	case s.min == s.max:
		return spell(s.min) + " arguments"
	case s.max < 0:
		return "at least " + spell(s.min) + " argument" + plural(s.min)
	}
	return spell(s.min) + " or " + spell(s.max) + " arguments"
}

func spell(n int) string {
	if n >= 0 && n < 4 {
		return [...]string{"zero", "one", "two", "three"}[n]
	}
	return "many"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// argFits reports (and diagnoses) whether v is an argument of kind k.
func (c *checker) argFits(rule string, i int, v lang.Expr, k argKind) bool {
	bad := func(want string) bool {
		c.errorf(v.Position(), CodeArguments, "argument %d of %s must be %s", i+1, rule, want)
		return false
	}
	switch k {
	case argString:
		if _, ok := v.(*lang.StringLit); !ok {
			return bad("a string")
		}
	case argNameOrString:
		switch v.(type) {
		case *lang.Ident, *lang.StringLit:
		default:
			return bad("a name or a string")
		}
	case argNumber:
		n, ok := v.(*lang.NumberLit)
		if !ok || n.Value <= 0 {
			return bad("a number above 0")
		}
	case argInteger:
		n, ok := v.(*lang.NumberLit)
		if !ok || n.Value < 1 || !n.IsInteger() {
			return bad("a whole number, 1 or more")
		}
	case argAny:
		switch v.(type) {
		case *lang.StringLit, *lang.NumberLit, *lang.BoolLit, *lang.NullLit:
		default:
			return bad("a string, number or boolean")
		}
	}
	return true
}

// text returns the string or name an argument holds.
func text(v lang.Expr) string {
	switch x := v.(type) {
	case *lang.StringLit:
		return x.Value
	case *lang.Ident:
		return x.Name
	}
	return ""
}

// checkRuleValues checks what each known rule's arguments mean, once their shapes fit.
func (c *checker) checkRuleValues(r *lang.Rule) {
	name := r.Name.Name
	switch name {
	case "Block", "Redact":
		cats := blockCategories
		if name == "Redact" {
			cats = redactCategories
		}
		for _, a := range r.Args {
			cat := text(a.Value)
			if !cats[cat] {
				c.warn(a.Pos, CodeNotEnforced, "%s(%s) is not enforced: no %s detector for %s%s", name, cat, strings.ToLower(name), cat, suggest(cat, keys(cats)))
			}
		}
	case "Require", "Enforce":
		formats := requireFormats
		if name == "Enforce" {
			formats = enforceFormats
		}
		if f := text(r.Args[0].Value); !formats[f] {
			hint := ""
			if name == "Require" && f == "Approver" {
				hint = "; for a person's approval use |! yield"
			}
			c.warn(r.Args[0].Pos, CodeNotEnforced, "%s(%s) is not enforced%s", name, f, hint)
		}
	case "MatchRegex":
		c.checkRegex(r.Args[0].Value, false)
	case "Validate":
		if op := text(r.Args[1].Value); !compareOps[op] {
			c.errorf(r.Args[1].Pos, CodeArguments, "Validate's operator %q must be one of == != < <= > >=", op)
		}
		if field := text(r.Args[0].Value); field == "" {
			c.errorf(r.Args[0].Pos, CodeArguments, "Validate needs a field name")
		}
	case "AllowTools", "DenyTools", "ApproveTools":
		for _, a := range r.Args {
			c.checkToolPattern(a.Value)
		}
	case "AllowEffects", "ApproveEffects":
		for _, a := range r.Args {
			e := text(a.Value)
			if _, err := tool.ParseEffect(e); err != nil {
				c.errorf(a.Pos, CodeBadEffect, "%s: unknown effect %q: effects are read, write and external%s", name, e, suggest(e, []string{"read", "write", "external"}))
			}
		}
	case "DenyArgs":
		c.checkToolPattern(r.Args[0].Value)
		if len(r.Args) == 3 && text(r.Args[1].Value) == "" {
			c.errorf(r.Args[1].Pos, CodeArguments, "DenyArgs: the argument name is empty")
		}
		c.checkRegex(r.Args[len(r.Args)-1].Value, true)
	}
}

type regexKey struct {
	pattern    string
	ignoreCase bool
}

// checkRegex compiles a pattern the way host/policy does (DenyArgs is case-insensitive).
func (c *checker) checkRegex(v lang.Expr, ignoreCase bool) {
	s, ok := v.(*lang.StringLit)
	if !ok {
		return
	}
	// The same options host/policy compiles with (RE2 mode: `$` is the end of the text), so
	// a pattern that validates also loads.
	opt := regexp2.RE2
	if ignoreCase {
		opt |= regexp2.IgnoreCase
	}
	key := regexKey{s.Value, ignoreCase}
	err, done := c.regexErrs[key]
	if !done {
		_, err = regexp2.Compile(s.Value, opt)
		if c.regexErrs == nil {
			c.regexErrs = map[regexKey]error{}
		}
		c.regexErrs[key] = err // policies often repeat a pattern; compile it once
	}
	if err != nil {
		c.errorf(s.Pos, CodeBadRegex, "invalid regular expression %q: %v (in a Halo string a regex backslash is written \\\\)", s.Value, err)
	}
}

// checkToolPattern checks "Tool", "Tool.method", "Tool.*", "*.method" or "*": the tool part
// must be a declared tool.
func (c *checker) checkToolPattern(v lang.Expr) {
	p := text(v)
	toolPart, method, hasDot := strings.Cut(p, ".")
	switch {
	case p == "":
		c.errorf(v.Position(), CodeArguments, "empty tool pattern: write Tool, Tool.method, Tool.*, *.method or *")
		return
	case hasDot && (method == "" || strings.Contains(method, ".")):
		c.errorf(v.Position(), CodeArguments, "tool pattern %q: write Tool, Tool.method, Tool.*, *.method or *", p)
		return
	case toolPart == "*":
		return
	case strings.Contains(toolPart, "*"):
		c.errorf(v.Position(), CodeArguments, "tool pattern %q: a * stands for a whole tool or method name", p)
		return
	}
	if c.kindOf(toolPart) != "tool" {
		c.undeclared(v.Position(), "tool", toolPart)
	}
}
