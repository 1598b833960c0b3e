// Package policy owns the rules Halo enforces in code, at no model cost, on what an agent
// may read, say and call: content rules (Block, Redact, MaxWords, MaxChars, MaxTokens,
// Require, Enforce, MatchRegex, Validate, LogViolation), the run's MaxSpend budget, and
// tool rules (AllowTools, DenyTools, AllowEffects, ApproveTools, ApproveEffects, DenyArgs).
//
// It knows nothing of pipelines or the .halo syntax tree: the runtime turns each policy
// declaration into RuleSpecs, compiles it once with Compile, and applies the Set of an
// agent's policies (its `requires`) to the prompt and tool results (input phase), to the
// answer (output phase) and to each tool call the agent asks for (tool phase). Detection
// lives in the subpackage detect; look-alike folding in fold.
package policy

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2/v2"

	"github.com/halo-lang/halo/host/policy/detect"
	"github.com/halo-lang/halo/host/tool"
)

// Stable codes of policy diagnostics. Users match on them; never change or reuse one.
const (
	// CodeInvalid: a policy that can never work, as Compile reports it (every problem listed).
	CodeInvalid = "POLICY_INVALID"
	// CodeNotEnforced: a rule the runtime ignores (Tone, Block(Competitors), ...).
	CodeNotEnforced = "NOT_ENFORCED"
	// CodeBadRegex: a MatchRegex or DenyArgs pattern that does not compile.
	CodeBadRegex = "BAD_REGEX"
	// CodeBadEffect: an effect other than read, write and external.
	CodeBadEffect = "BAD_EFFECT"
)

// An Ident is a bare identifier argument, as in Block(PII) or AllowEffects(read).
type Ident string

// A RuleSpec is one rule of a policy declaration as the runtime hands it over.
type RuleSpec struct {
	// Name is the rule name: Block, MaxWords, DenyArgs, ...
	Name string
	// Args are the arguments: string, float64, bool or Ident values.
	Args []any
	// Pos is where the rule is written ("file:line:col"), for messages.
	Pos string
}

// A Diagnostic is a problem found while compiling a policy.
type Diagnostic struct {
	Pos     string
	Warning bool
	Message string
	Code    string
}

func (d Diagnostic) String() string {
	sev := "error"
	if d.Warning {
		sev = "warning"
	}
	pos := d.Pos
	if pos != "" {
		pos += ": "
	}
	return fmt.Sprintf("%s%s: %s [%s]", pos, sev, d.Message, d.Code)
}

// Errors are the errors of one Compile call, all of them.
type Errors []Diagnostic

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, d := range e {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// ErrorCode returns CodeInvalid.
func (e Errors) ErrorCode() string { return CodeInvalid }

// A Policy is a compiled policy: its enforced rules, in the order written.
type Policy struct {
	// Name is the declared policy name.
	Name string
	// Log is set by LogViolation(): this policy's violations are also logged as warnings.
	Log      bool
	rules    []*rule
	warnings []Diagnostic
}

// Warnings lists the rules that are not enforced and are ignored.
func (p *Policy) Warnings() []Diagnostic { return p.warnings }

type ruleKind int

const (
	kBlock ruleKind = iota + 1
	kRedact
	kMaxWords
	kMaxChars
	kMaxTokens
	kMaxSpend
	kRequireJSON
	kEnforceJSON
	kRequireXML
	kRequireCitation
	kMatchRegex
	kValidate
	kAllowTools
	kDenyTools
	kAllowEffects
	kApproveTools
	kApproveEffects
	kDenyArgs
)

type rule struct {
	kind ruleKind
	name string // the rule name as written: "Block"
	text string // the rule as written, for messages: `Block(PII, APIKey)`
	pos  string

	cats     []detect.Category // Block/Redact: the named categories, in order
	mask     detect.Category
	n        int     // MaxWords, MaxChars, MaxTokens
	usd      float64 // MaxSpend
	re       *regexp2.Regexp
	patterns []string      // tool patterns
	effects  []tool.Effect // AllowEffects, ApproveEffects
	arg      string        // DenyArgs with a name
	hasArg   bool
	field    string // Validate
	op       string
	value    any
}

// Compile checks and compiles one policy. Rules the runtime does not enforce are dropped
// with a warning (see Policy.Warnings); rules that are wrong make it fail with Errors,
// listing every problem.
func Compile(name string, specs []RuleSpec) (*Policy, error) {
	p := &Policy{Name: name}
	var errs Errors
	for _, s := range specs {
		c := compiler{spec: s}
		r := c.rule()
		failed := false
		for _, d := range c.diags {
			if d.Warning {
				p.warnings = append(p.warnings, d)
			} else {
				errs = append(errs, d)
				failed = true
			}
		}
		if failed || r == nil {
			continue
		}
		if r.kind == 0 { // LogViolation
			p.Log = true
			continue
		}
		r.name, r.text, r.pos = s.Name, ruleText(s), s.Pos
		p.rules = append(p.rules, r)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

// MustCompile is Compile for tests and fixed policies; it panics on an error.
func MustCompile(name string, specs []RuleSpec) *Policy {
	p, err := Compile(name, specs)
	if err != nil {
		panic(err)
	}
	return p
}

func ruleText(s RuleSpec) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		switch v := a.(type) {
		case string:
			args[i] = strconv.Quote(v)
		case Ident:
			args[i] = string(v)
		case float64:
			args[i] = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			args[i] = fmt.Sprint(v)
		}
	}
	return s.Name + "(" + strings.Join(args, ", ") + ")"
}

type compiler struct {
	spec  RuleSpec
	diags []Diagnostic
}

func (c *compiler) errorf(format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: c.spec.Pos, Message: fmt.Sprintf(format, args...), Code: CodeInvalid})
}

func (c *compiler) ignored(format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: c.spec.Pos, Warning: true, Message: fmt.Sprintf(format, args...) + "; the runtime ignores it", Code: CodeNotEnforced})
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

func (c *compiler) nargs(min, max int) bool {
	n := len(c.spec.Args)
	if n < min || n > max {
		switch {
		case min == max:
			c.errorf("%s takes %d argument(s), got %d", c.spec.Name, min, n)
		case max < 0 || max > 100:
			if n < min {
				c.errorf("%s takes at least %d argument(s), got %d", c.spec.Name, min, n)
				return false
			}
			return true
		default:
			c.errorf("%s takes %d to %d arguments, got %d", c.spec.Name, min, max, n)
		}
		return false
	}
	return true
}

func (c *compiler) positiveInt(a any) (int, bool) {
	f, ok := a.(float64)
	if !ok || f < 1 || f != float64(int(f)) {
		c.errorf("%s takes a whole number above 0, got %v", c.spec.Name, a)
		return 0, false
	}
	return int(f), true
}

func (c *compiler) rule() *rule {
	s := c.spec
	switch s.Name {
	case "Block", "Redact":
		return c.categories()
	case "MaxWords", "MaxChars", "MaxTokens":
		if !c.nargs(1, 1) {
			return nil
		}
		n, ok := c.positiveInt(s.Args[0])
		if !ok {
			return nil
		}
		k := map[string]ruleKind{"MaxWords": kMaxWords, "MaxChars": kMaxChars, "MaxTokens": kMaxTokens}[s.Name]
		return &rule{kind: k, n: n}
	case "MaxSpend":
		if !c.nargs(1, 1) {
			return nil
		}
		f, ok := s.Args[0].(float64)
		if !ok || f <= 0 {
			c.errorf("MaxSpend takes an amount in USD above 0, got %v", s.Args[0])
			return nil
		}
		return &rule{kind: kMaxSpend, usd: f}
	case "Require", "Enforce":
		if !c.nargs(1, 1) {
			return nil
		}
		w, _ := word(s.Args[0])
		switch {
		case w == "JSON" && s.Name == "Require":
			return &rule{kind: kRequireJSON}
		case w == "JSON":
			return &rule{kind: kEnforceJSON}
		case w == "XML" && s.Name == "Require":
			return &rule{kind: kRequireXML}
		case w == "Citation" && s.Name == "Require":
			return &rule{kind: kRequireCitation}
		case s.Name == "Require":
			c.ignored("Require(%s) is not enforced: only JSON, XML and Citation are (for a person's approval, use |! yield)", w)
		default:
			c.ignored("Enforce(%s) is not enforced: only Enforce(JSON) is", w)
		}
		return nil
	case "MatchRegex":
		if !c.nargs(1, 1) {
			return nil
		}
		pat, ok := s.Args[0].(string)
		if !ok {
			c.errorf("MatchRegex takes a pattern string")
			return nil
		}
		re, err := compileRegex(pat, 0)
		if err != nil {
			c.errorf("MatchRegex: %v", err)
			return nil
		}
		return &rule{kind: kMatchRegex, re: re}
	case "Validate":
		return c.validate()
	case "LogViolation":
		if !c.nargs(0, 0) {
			return nil
		}
		return &rule{}
	case "AllowTools", "DenyTools", "ApproveTools":
		if !c.nargs(1, 1<<30) {
			return nil
		}
		var pats []string
		for _, a := range s.Args {
			p, ok := word(a)
			if !ok || !validPattern(p) {
				c.errorf("%s: %v is not a tool pattern (Tool, Tool.method, Tool.*, *.method or *)", s.Name, a)
				return nil
			}
			pats = append(pats, p)
		}
		k := map[string]ruleKind{"AllowTools": kAllowTools, "DenyTools": kDenyTools, "ApproveTools": kApproveTools}[s.Name]
		return &rule{kind: k, patterns: pats}
	case "AllowEffects", "ApproveEffects":
		if !c.nargs(1, 1<<30) {
			return nil
		}
		var effs []tool.Effect
		for _, a := range s.Args {
			w, _ := word(a)
			e, err := tool.ParseEffect(w)
			if err != nil {
				c.errorf("%s: %v", s.Name, err)
				return nil
			}
			effs = append(effs, e)
		}
		k := kAllowEffects
		if s.Name == "ApproveEffects" {
			k = kApproveEffects
		}
		return &rule{kind: k, effects: effs}
	case "DenyArgs":
		return c.denyArgs()
	case "Tone", "Anonymize", "MaxDensity":
		c.ignored("%s(...) would need a model to judge the output and is not enforced", s.Name)
		return nil
	}
	c.ignored("%s is not a rule Halo enforces", s.Name)
	return nil
}

func (c *compiler) categories() *rule {
	s := c.spec
	if !c.nargs(1, 1<<30) {
		return nil
	}
	kind, allowed := kBlock, detect.Blockable
	if s.Name == "Redact" {
		kind, allowed = kRedact, detect.Redactable
	}
	r := &rule{kind: kind}
	for _, a := range s.Args {
		w, ok := word(a)
		cat, known := detect.Parse(w)
		if !ok || !known || cat&^allowed != 0 {
			c.ignored("%s(%v) is not enforced: %s knows %s", s.Name, a, s.Name, strings.Join(categoryNames(allowed), ", "))
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
	if !c.nargs(3, 3) {
		return nil
	}
	field, ok1 := s.Args[0].(string)
	op, ok2 := s.Args[1].(string)
	if !ok1 || field == "" {
		c.errorf("Validate: the field must be a non-empty string")
		return nil
	}
	if !ok2 || !validOps[op] {
		c.errorf("Validate: the operator must be one of == != < <= > >=, got %v", s.Args[1])
		return nil
	}
	v := s.Args[2]
	if id, ok := v.(Ident); ok {
		v = string(id)
	}
	return &rule{kind: kValidate, field: field, op: op, value: v}
}

func (c *compiler) denyArgs() *rule {
	s := c.spec
	if !c.nargs(2, 3) {
		return nil
	}
	pat, ok := word(s.Args[0])
	if !ok || !validPattern(pat) {
		c.errorf("DenyArgs: %v is not a tool pattern (Tool, Tool.method, Tool.*, *.method or *)", s.Args[0])
		return nil
	}
	r := &rule{kind: kDenyArgs, patterns: []string{pat}}
	reArg := s.Args[1]
	if len(s.Args) == 3 {
		name, ok := s.Args[1].(string)
		if !ok || name == "" {
			c.errorf("DenyArgs: the argument name must be a non-empty string")
			return nil
		}
		r.arg, r.hasArg = name, true
		reArg = s.Args[2]
	}
	src, ok := reArg.(string)
	if !ok {
		c.errorf("DenyArgs: the pattern must be a string")
		return nil
	}
	re, err := compileRegex(src, regexp2.IgnoreCase)
	if err != nil {
		c.errorf("DenyArgs: %v", err)
		return nil
	}
	r.re = re
	return r
}
