package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dlclark/regexp2/v2"

	"halolang.dev/halo/host/policy/detect"
	"halolang.dev/halo/host/tool"
)

// argKind is what one rule argument must be.
type argKind int

const (
	argString argKind = iota // a string
	argWord                  // a bare name (a category, a format, a pattern, an effect) or a string
	argAmount                // a number above 0 (an amount in USD)
	argCount                 // a whole number, 1 or more
	argScalar                // a string, number, boolean or null
)

// A ruleShape is what a rule takes, and why the runtime ignores it when it does.
type ruleShape struct {
	// min and max bound the argument count; max < 0 means any number.
	min, max int
	// kinds gives the kind of each argument; the last one repeats.
	kinds []argKind
	// ignored, when set, says why the runtime does not enforce the rule.
	ignored string
}

// shapes is the one table of policy rules: the checker (host/check, through CompileRules) and
// Compile read it, so a rule that validates compiles.
var shapes = map[string]ruleShape{
	"Block":          {min: 1, max: -1, kinds: []argKind{argWord}},
	"Redact":         {min: 1, max: -1, kinds: []argKind{argWord}},
	"MaxWords":       {min: 1, max: 1, kinds: []argKind{argCount}},
	"MaxChars":       {min: 1, max: 1, kinds: []argKind{argCount}},
	"MaxTokens":      {min: 1, max: 1, kinds: []argKind{argCount}},
	"MaxSpend":       {min: 1, max: 1, kinds: []argKind{argAmount}},
	"Require":        {min: 1, max: 1, kinds: []argKind{argWord}},
	"Enforce":        {min: 1, max: 1, kinds: []argKind{argWord}},
	"MatchRegex":     {min: 1, max: 1, kinds: []argKind{argString}},
	"Validate":       {min: 3, max: 3, kinds: []argKind{argString, argString, argScalar}},
	"LogViolation":   {min: 0, max: 0},
	"AllowTools":     {min: 1, max: -1, kinds: []argKind{argWord}},
	"DenyTools":      {min: 1, max: -1, kinds: []argKind{argWord}},
	"ApproveTools":   {min: 1, max: -1, kinds: []argKind{argWord}},
	"AllowEffects":   {min: 1, max: -1, kinds: []argKind{argWord}},
	"ApproveEffects": {min: 1, max: -1, kinds: []argKind{argWord}},
	"DenyArgs":       {min: 2, max: 3, kinds: []argKind{argWord, argString, argString}},
	"Tone":           {max: -1, kinds: []argKind{argScalar}, ignored: "it would need a model to judge the answer"},
	"Anonymize":      {max: -1, kinds: []argKind{argScalar}, ignored: "it would need a model to judge the answer"},
	"MaxDensity":     {max: -1, kinds: []argKind{argScalar}, ignored: "it would need a model to judge the answer"},
}

// The formats Require and Enforce enforce.
var (
	requireFormats = []string{"JSON", "XML", "Citation"}
	enforceFormats = []string{"JSON"}
)

// RuleNames lists every rule name policy knows, sorted: those it enforces and those it knows
// it ignores.
func RuleNames() []string {
	out := make([]string, 0, len(shapes))
	for n := range shapes {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type compiler struct {
	spec  RuleSpec
	diags []Diagnostic
	// slot is where the rule is written, carved from a block of the policy's rules (one
	// allocation for a policy rather than one for each rule); nil once used, or when there
	// is no block.
	slot *rule
}

// newRule returns v in c's slot, or in a rule of its own when the slot is used.
func (c *compiler) newRule(v rule) *rule {
	r := c.slot
	if r == nil {
		r = new(rule)
	}
	c.slot = nil
	*r = v
	return r
}

// errorf reports an error with CodeInvalid; arg is the 1-based argument at fault, 0 for the rule.
func (c *compiler) errorf(arg int, format string, args ...any) {
	c.report(Diagnostic{Code: CodeInvalid, Arg: arg, Message: fmt.Sprintf(format, args...)})
}

// ignored reports a rule, or an argument of one, that the runtime does not enforce.
func (c *compiler) ignored(arg int, word string, known []string, format string, args ...any) {
	c.report(Diagnostic{Code: CodeNotEnforced, Warning: true, Arg: arg, Word: word, Known: known, Message: fmt.Sprintf(format, args...)})
}

func (c *compiler) report(d Diagnostic) {
	d.Pos = c.spec.Pos
	c.diags = append(c.diags, d)
}

// word returns an argument written as a bare identifier or a string.
func word(a any) (string, bool) {
	switch v := a.(type) {
	case Ident:
		return string(v), true
	case string:
		return v, true
	}
	return "", false
}

// shaped checks the spec against its rule's shape: the number of arguments and the kind of
// each. It returns the shape, and false when the rule is unknown, ignored or misshapen (each
// reported).
func (c *compiler) shaped() (ruleShape, bool) {
	s := c.spec
	shape, ok := shapes[s.Name]
	switch {
	case !ok:
		c.ignored(0, s.Name, RuleNames(), "unknown rule %s is not enforced", s.Name)
		return shape, false
	case shape.ignored != "":
		c.ignored(0, "", nil, "%s is not enforced: %s", s.Name, shape.ignored)
		return shape, false
	}
	if n := len(s.Args); n < shape.min || shape.max >= 0 && n > shape.max {
		c.errorf(0, "%s takes %s, got %d", s.Name, countText(shape), n)
		return shape, false
	}
	for i, a := range s.Args {
		k := shape.kinds[min(i, len(shape.kinds)-1)]
		if want := fits(a, k); want != "" {
			c.errorf(i+1, "argument %d of %s must be %s", i+1, s.Name, want)
			return shape, false
		}
	}
	return shape, true
}

// fits returns what a must be when it is not of kind k, else "".
func fits(a any, k argKind) string {
	switch k {
	case argString:
		if _, ok := a.(string); !ok {
			return "a string"
		}
	case argWord:
		if _, ok := word(a); !ok {
			return "a name or a string"
		}
	case argAmount:
		if f, ok := a.(float64); !ok || f <= 0 {
			return "a number above 0"
		}
	case argCount:
		if f, ok := a.(float64); !ok || f < 1 || f != float64(int64(f)) {
			return "a whole number, 1 or more"
		}
	case argScalar:
		switch a.(type) {
		case string, float64, bool, Ident, nil:
		default:
			return "a string, number or boolean"
		}
	}
	return ""
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
	return fmt.Sprint(n)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// rule compiles the spec, reporting every problem; nil when it cannot run (LogViolation is a
// rule of kind 0).
func (c *compiler) rule() *rule {
	s := c.spec
	if _, ok := c.shaped(); !ok {
		return nil
	}
	switch s.Name {
	case "Block", "Redact":
		return c.categories()
	case "MaxWords", "MaxChars", "MaxTokens":
		k := map[string]ruleKind{"MaxWords": kMaxWords, "MaxChars": kMaxChars, "MaxTokens": kMaxTokens}[s.Name]
		return c.newRule(rule{kind: k, n: int(s.Args[0].(float64))})
	case "MaxSpend":
		return c.newRule(rule{kind: kMaxSpend, usd: s.Args[0].(float64)})
	case "Require", "Enforce":
		return c.format()
	case "MatchRegex":
		re, ok := c.regex(1, 0)
		if !ok {
			return nil
		}
		return c.newRule(rule{kind: kMatchRegex, re: re, unicode: asksUnicode(re.String())})
	case "Validate":
		return c.validate()
	case "LogViolation":
		return c.newRule(rule{})
	case "AllowTools", "DenyTools", "ApproveTools":
		pats, ok := c.patterns(s.Args, 1)
		if !ok {
			return nil
		}
		k := map[string]ruleKind{"AllowTools": kAllowTools, "DenyTools": kDenyTools, "ApproveTools": kApproveTools}[s.Name]
		return c.newRule(rule{kind: k, patterns: pats})
	case "AllowEffects", "ApproveEffects":
		var effs []tool.Effect
		for i, a := range s.Args {
			w, _ := word(a)
			e, err := tool.ParseEffect(w)
			if err != nil {
				c.report(Diagnostic{Code: CodeBadEffect, Arg: i + 1, Word: w, Known: effectNames,
					Message: fmt.Sprintf("%s: unknown effect %q: effects are read, write and external", s.Name, w)})
				continue
			}
			effs = append(effs, e)
		}
		if len(effs) < len(s.Args) {
			return nil
		}
		k := kAllowEffects
		if s.Name == "ApproveEffects" {
			k = kApproveEffects
		}
		return c.newRule(rule{kind: k, effects: effs})
	case "DenyArgs":
		return c.denyArgs()
	}
	return nil
}

var effectNames = []string{string(tool.Read), string(tool.Write), string(tool.External)}

// format compiles Require(...) and Enforce(...).
func (c *compiler) format() *rule {
	s := c.spec
	w, _ := word(s.Args[0])
	switch {
	case w == "JSON" && s.Name == "Require":
		return c.newRule(rule{kind: kRequireJSON})
	case w == "JSON":
		return c.newRule(rule{kind: kEnforceJSON})
	case w == "XML" && s.Name == "Require":
		return c.newRule(rule{kind: kRequireXML})
	case w == "Citation" && s.Name == "Require":
		return c.newRule(rule{kind: kRequireCitation})
	case s.Name == "Require" && w == "Approver":
		c.ignored(1, "", nil, "Require(%s) is not enforced; for a person's approval use |! yield", w)
	case s.Name == "Require":
		c.ignored(1, w, requireFormats, "Require(%s) is not enforced: Require knows %s", w, strings.Join(requireFormats, ", "))
	default:
		c.ignored(1, w, enforceFormats, "Enforce(%s) is not enforced: Enforce knows %s", w, strings.Join(enforceFormats, ", "))
	}
	return nil
}

// regex compiles argument n (1-based) as a pattern; DenyArgs compiles case-insensitively.
func (c *compiler) regex(n int, opts regexp2.RegexOptions) (*regexp2.Regexp, bool) {
	src := c.spec.Args[n-1].(string)
	re, err := cachedRegex(src, opts)
	if err != nil {
		msg := fmt.Sprintf("%s: %v", c.spec.Name, err)
		if isEscapeError(err) {
			msg += " (in a Halo string a regex backslash is written \\\\)"
		}
		c.report(Diagnostic{Code: CodeBadRegex, Arg: n, Message: msg})
		return nil, false
	}
	return re, true
}

// patterns reads tool patterns, the first at argument first (1-based).
func (c *compiler) patterns(args []any, first int) ([]string, bool) {
	var pats []string
	ok := true
	for i, a := range args {
		p, _ := word(a)
		if _, err := ParsePattern(p); err != nil {
			c.errorf(first+i, "%s: %v", c.spec.Name, err)
			ok = false
			continue
		}
		pats = append(pats, p)
	}
	return pats, ok
}

func (c *compiler) categories() *rule {
	s := c.spec
	kind, allowed := kBlock, detect.Blockable
	if s.Name == "Redact" {
		kind, allowed = kRedact, detect.Redactable
	}
	r := c.newRule(rule{kind: kind, cats: make([]detect.Category, 0, len(s.Args))})
	for i, a := range s.Args {
		w, _ := word(a)
		cat, known := detect.Parse(w)
		if !known || cat&^allowed != 0 {
			names := categoryNames(allowed)
			c.ignored(i+1, w, names, "%s(%s) is not enforced: %s knows %s", s.Name, w, s.Name, strings.Join(names, ", "))
			continue
		}
		r.cats = append(r.cats, cat)
		r.mask |= cat
	}
	if len(r.cats) == 0 {
		return nil
	}
	// Unknown categories beside known ones were warned about; the known ones still run.
	return r
}

func categoryNames(allowed detect.Category) []string {
	var out []string
	for _, n := range detect.Names() {
		if c, _ := detect.Parse(n); c&^allowed == 0 {
			out = append(out, n)
		}
	}
	return out
}

var validOps = map[string]bool{"==": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

func (c *compiler) validate() *rule {
	s := c.spec
	field, op := s.Args[0].(string), s.Args[1].(string)
	ok := true
	if field == "" {
		c.errorf(1, "Validate needs a field name")
		ok = false
	}
	if !validOps[op] {
		c.errorf(2, "Validate's operator %q must be one of == != < <= > >=", op)
		ok = false
	}
	if !ok {
		return nil
	}
	v := s.Args[2]
	if id, ok := v.(Ident); ok {
		v = string(id)
	}
	return c.newRule(rule{kind: kValidate, validation: &validation{field: field, op: op, value: v}})
}

func (c *compiler) denyArgs() *rule {
	s := c.spec
	pats, ok := c.patterns(s.Args[:1], 1)
	r := c.newRule(rule{kind: kDenyArgs, patterns: pats})
	if len(s.Args) == 3 {
		name := s.Args[1].(string)
		if name == "" {
			c.errorf(2, "DenyArgs: the argument name is empty")
			ok = false
		}
		r.arg, r.hasArg = name, true
	}
	re, reOK := c.regex(len(s.Args), regexp2.IgnoreCase)
	if !ok || !reOK {
		return nil
	}
	r.re, r.unicode = re, asksUnicode(re.String())
	return r
}
