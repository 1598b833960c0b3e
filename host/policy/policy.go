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

	"halolang.dev/halo/host/policy/detect"
	"halolang.dev/halo/host/tool"
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
	// Args are the arguments: string, float64, bool or Ident values. A compiled policy keeps
	// them, to spell the rule in its messages: they are not changed after Compile.
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
	// Arg is the argument at fault, counted from 1; 0 means the rule as a whole.
	Arg int `json:"-"`
	// Word and Known, when set, are the name that is not known and the names that are,
	// for a "did you mean" (Block(Profanty): Profanity).
	Word  string   `json:"-"`
	Known []string `json:"-"`
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

type ruleKind uint8

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

// A rule is one compiled rule; the block of a policy's rules is most of what compiling a
// policy allocates, so its small fields share one word and Validate's three fields, which
// no other rule uses, are behind a pointer (184 bytes a rule rather than 248).
type rule struct {
	kind    ruleKind
	unicode bool            // MatchRegex, DenyArgs: the pattern asks for Unicode case folding (asksUnicode)
	hasArg  bool            // DenyArgs with a name
	mask    detect.Category // Block/Redact: the named categories, as a set
	name    string          // the rule name as written: "Block"
	// args are the arguments as written; text() spells the rule from them when a message
	// needs it (few do: halo validate compiles every policy and reports none of them).
	args []any
	pos  string

	cats     []detect.Category // Block/Redact: the named categories, in order
	n        int               // MaxWords, MaxChars, MaxTokens
	usd      float64           // MaxSpend
	re       *regexp2.Regexp
	patterns []string      // tool patterns
	effects  []tool.Effect // AllowEffects, ApproveEffects
	arg      string        // DenyArgs with a name
	*validation
}

// A validation is what Validate(field, op, value) compares.
type validation struct {
	field string
	op    string
	value any
}

// Compile checks and compiles one policy. Rules the runtime does not enforce are dropped
// with a warning (see Policy.Warnings); rules that are wrong make it fail with Errors,
// listing every problem.
func Compile(name string, specs []RuleSpec) (*Policy, error) {
	p, diags := CompileRules(name, specs)
	if p != nil {
		return p, nil
	}
	var errs Errors
	for _, ds := range diags {
		for _, d := range ds {
			if !d.Warning {
				errs = append(errs, d)
			}
		}
	}
	return nil, errs
}

// CompileRules is Compile, returning the problems of each rule (each rule's, warnings
// included) beside the policy, which is nil when any rule has an error: halo validate
// reports the problems and checks the policy against the agents' tools from one
// compilation. The problems are nil when no rule has any (most policies: halo validate
// compiles every one, and made a list of empty lists for each).
func CompileRules(name string, specs []RuleSpec) (*Policy, [][]Diagnostic) {
	p := &Policy{Name: name, rules: make([]*rule, 0, len(specs))}
	var diags [][]Diagnostic
	block := make([]rule, len(specs))
	failed := false
	for i, s := range specs {
		c := compiler{spec: s, slot: &block[i]}
		r := c.rule()
		if len(c.diags) > 0 {
			if diags == nil {
				diags = make([][]Diagnostic, len(specs))
			}
			diags[i] = c.diags
		}
		bad := false
		for _, d := range c.diags {
			if d.Warning {
				p.warnings = append(p.warnings, d)
			} else {
				bad = true
			}
		}
		if bad || r == nil {
			failed = failed || bad
			continue
		}
		if r.kind == 0 { // LogViolation
			p.Log = true
			continue
		}
		r.name, r.args, r.pos = s.Name, s.Args, s.Pos
		p.rules = append(p.rules, r)
	}
	if failed {
		return nil, diags
	}
	return p, diags
}

// MustCompile is Compile for tests and fixed policies; it panics on an error.
func MustCompile(name string, specs []RuleSpec) *Policy {
	p, err := Compile(name, specs)
	if err != nil {
		panic(err)
	}
	return p
}

// text is the rule as written, for messages: `Block(PII, APIKey)`.
func (r *rule) text() string { return ruleText(r.name, r.args) }

func ruleText(name string, args []any) string {
	b := make([]byte, 0, 64)
	b = append(b, name...)
	b = append(b, '(')
	for i, a := range args {
		if i > 0 {
			b = append(b, ", "...)
		}
		switch v := a.(type) {
		case string:
			b = strconv.AppendQuote(b, v)
		case Ident:
			b = append(b, v...)
		case float64:
			b = strconv.AppendFloat(b, v, 'f', -1, 64)
		default:
			b = fmt.Append(b, v)
		}
	}
	return string(append(b, ')'))
}
