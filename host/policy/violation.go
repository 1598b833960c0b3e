package policy

import "fmt"

// CodeViolation is the stable code of a policy violation.
const CodeViolation = "POLICY_VIOLATION"

// A Phase says when a rule was checked.
type Phase string

const (
	// Input is the prompt and tool results, on their way to the model.
	Input Phase = "input"
	// Output is the model's answer.
	Output Phase = "output"
	// ToolPhase is a tool call the agent asked for.
	ToolPhase Phase = "tool"
)

// A Violation is a rule that failed. It is an error with code POLICY_VIOLATION; the runtime
// records it in context.meta.violations and emits a violation event.
type Violation struct {
	// Policy is the name of the policy the rule belongs to.
	Policy string `json:"policy"`
	// Rule is the rule's name (Block, MaxWords, DenyArgs, ...).
	Rule string `json:"rule"`
	// Phase is input, output or tool.
	Phase Phase `json:"phase"`
	// Message says what failed, for people and for the model (@correct).
	Message string `json:"message"`
	// Pos is where the rule is written, when known.
	Pos string `json:"pos,omitempty"`
	// Log is set when the policy has LogViolation(): the runtime also logs it as a warning.
	Log bool `json:"-"`
}

func (v *Violation) Error() string {
	return fmt.Sprintf("policy %s: %s: %s", v.Policy, v.Rule, v.Message)
}

// ErrorCode returns POLICY_VIOLATION.
func (v *Violation) ErrorCode() string { return CodeViolation }

func (p *Policy) violation(r *rule, phase Phase, format string, args ...any) *Violation {
	return &Violation{Policy: p.Name, Rule: r.name, Phase: phase, Message: fmt.Sprintf(format, args...), Pos: r.pos, Log: p.Log}
}
