// Package agent owns the tool loop: one agent call's conversation with its model, in which
// the model may ask for tool calls. The loop offers the tools, sends the conversation, runs
// the calls the model asks for in order, each checked against the agent's tool policies
// (host/policy's Decide) and, where a policy says so, put to a person through an approval
// hook; it feeds each result back as a tool message (cut to size and passed through the
// agent's input policies) and asks again, until the model answers without tool calls or its
// steps are used up.
//
// The loop knows nothing of pipelines, mocks or how tools are implemented: host/runtime
// hands it a model.Provider (the real adapter, or a mock that answers as a model does), the
// offered tools, the policies, a function that runs one allowed call, and hooks that turn
// what happens into events. A Conversation's State is plain data (the messages in their
// provider-native form, the calls of the turn in progress and what has been answered of
// them), so a conversation stopped in the middle of a turn can be saved and continued
// without asking the model again.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// Defaults of the loop's settings.
const (
	// DefaultMaxSteps is how many requests may ask for tools before the model must answer.
	DefaultMaxSteps = 10
	// DefaultResultChars is how much of one tool result the model reads.
	DefaultResultChars = 16000
	// MaxCallsPerTurn bounds the tool calls one reply may run; the model is told that the
	// calls past it did not run.
	MaxCallsPerTurn = 64
)

// Stable error codes of the loop.
const (
	// CodeApprovalNeeded: a call needs a person's approval and there is no way to ask one.
	CodeApprovalNeeded = "APPROVAL_NEEDED"
	// CodeToolConfig: the tools cannot be offered (a model that cannot call tools, two
	// methods with one function name). The same string as the tool package's.
	CodeToolConfig = tool.CodeToolConfig
)

// An Error is a failure of the loop itself, with a stable code: the host's one coded-error
// type.
type Error = errcode.Error

// A Tool is one method offered to the model.
type Tool struct {
	// Target is "Tool.method", as policies, events and mocks name it.
	Target string
	// Name is the function name the model sees ("Tool__method"); Offer assigns it.
	Name string
	// Description and Params are what the model reads (Params: the arguments' JSON Schema).
	Description string
	Params      json.RawMessage
	// Effect classifies the method for AllowEffects and ApproveEffects.
	Effect tool.Effect
	// Hidden marks a method the agent's policies hide (AllowTools, DenyTools,
	// AllowEffects): it is not offered, but a call the model makes to it anyway is refused
	// by the rule that hides it, a policy violation, rather than answered as a function
	// that does not exist.
	Hidden bool
}

// A Call is one tool call the model asked for and the policies let run.
type Call struct {
	// ID is the provider's call id (or one its adapter made up).
	ID string
	// Target is the "Tool.method" asked for; Effect is its method's effect.
	Target string
	Effect tool.Effect
	// Args is the arguments object exactly as the model sent it ("{}" when it sent none):
	// the bytes Value was decoded from (tool.ParseArgs), which the tool gets.
	Args json.RawMessage
	// Value is Args decoded: what the policies checked. Nil for a call made from bytes
	// alone (a pipeline's tool: T), whose readers decode Args themselves.
	Value map[string]any
}

// A Runner runs one call and returns its result (a string, or any JSON-shaped value). An
// error goes to the model as "Error: <message>", unless the context has ended or it is a
// Fatal error, which stop the conversation.
type Runner func(ctx context.Context, c Call) (any, error)

// A Fatal error from a Runner or an Approver ends the conversation instead of going to the
// model (a scripted mock that ran out, say).
type Fatal struct{ Err error }

func (f *Fatal) Error() string { return f.Err.Error() }

// Unwrap returns the cause.
func (f *Fatal) Unwrap() error { return f.Err }

// An ApprovalRequest asks whether a call a policy marked for approval may run.
type ApprovalRequest struct {
	Agent string
	Call  Call
	// Policy, Rule and Reason name the rule that asks for approval.
	Policy, Rule, Reason string
}

// An Approval is a person's answer.
type Approval struct {
	Approved bool
	// Reason is why a person declined, when they said; the model reads it.
	Reason string
}

// An Approver asks for a person's approval of one call. It may wait. ErrNoOneToAsk (or a
// nil Approver) ends the conversation with APPROVAL_NEEDED; any other error stops it with its
// State at that call, so a later Run (after the State was saved and loaded, say) puts the
// same call to the Approver again without asking the model anew.
type Approver func(ctx context.Context, req ApprovalRequest) (Approval, error)

// ErrNoOneToAsk is what an Approver returns when no person can be asked about a call. An
// Approver may return an error that says why instead (see NoOneToAsk); errors.Is finds
// ErrNoOneToAsk in it.
var ErrNoOneToAsk = errors.New("no one can be asked for approval")

// NoOneToAsk returns an error that is ErrNoOneToAsk and says why no one can be asked ("no
// interrupt handler answered, and a run cannot pause inside a fan-out").
func NoOneToAsk(why string) error { return noOneToAsk(why) }

type noOneToAsk string

func (e noOneToAsk) Error() string        { return string(e) }
func (e noOneToAsk) Is(target error) bool { return target == ErrNoOneToAsk }

// NoOneBecause ends the message of an APPROVAL_NEEDED error: ", and there is no way to ask
// one here", or ", but " and why, when err says why (NoOneToAsk).
func NoOneBecause(err error) string {
	var why noOneToAsk
	if errors.As(err, &why) && why != "" {
		return ", but " + string(why)
	}
	return ", and there is no way to ask one here"
}

// Decisions, as agent_tool events name them.
const (
	Allowed  = "allowed"
	Approved = "approved"
	Declined = "declined"
	Refused  = "refused"
	Errored  = "error"
)

// A ToolEvent is what happened to one call the model asked for; the loop reports it after
// the call has finished (or was refused).
type ToolEvent struct {
	// CallID is the provider's call id; Target the "Tool.method" (or the unknown name the
	// model used).
	CallID string
	Target string
	// Args are the arguments with the agent's Redact rules applied, or a note that they were
	// withheld when a Block rule matched them.
	Args json.RawMessage
	// Decision is Allowed, Approved, Declined, Refused, Errored or Skipped.
	Decision string
	// Code is the stable code of a refusal Halo made itself, not a policy (a key given
	// twice: tool.CodeDuplicateKey); "" otherwise.
	Code string
	// Detail is the refusal, the error, or the person's reason.
	Detail string
	// Result is what the model read (after cutting and input policies).
	Result string
	// Duration is how long the call ran (0 when it did not run).
	Duration time.Duration
}

// A Correction is what an Accept function returns for an answer a policy rejected that the
// model may fix: Note is added to the conversation and the model asked again, while
// corrections are left; then Err is the call's error.
type Correction struct {
	Note string
	Err  error
}

func (c *Correction) Error() string { return c.Err.Error() }

// Unwrap returns the rejection.
func (c *Correction) Unwrap() error { return c.Err }

// Config is one conversation's fixed parts.
type Config struct {
	// Agent names the agent ("Fixer"), for approval requests.
	Agent string
	// Model answers the requests. A provider that says it cannot call tools (see
	// model.ToolCapable) makes a conversation with tools fail with TOOL_CONFIG.
	Model model.Provider
	// Request is the template of every request: Model, System, Temperature, MaxTokens,
	// Timeout. Its Messages, Tools and ToolChoice are the loop's.
	Request model.Request
	// Prompt is the first user message.
	Prompt string
	// Tools are the methods, named by Offer: the offered ones, and the Hidden ones a call
	// to which is refused. None offered means a plain completion.
	Tools []Tool
	// Resolve, when set, is asked about a function name the model used that is not among
	// Tools: a tool whose methods were not described when the conversation started (a mock
	// standing in for the model may call a server's method without the server having been
	// started to list them). ok false means there is no such function; a Hidden tool is
	// one the policies hide.
	Resolve func(ctx context.Context, name string) (t Tool, ok bool, err error)
	// Policies are the agent's: Decide on each call, Input on each result and the shown
	// arguments.
	Policies policy.Set
	// MaxSteps is how many requests may ask for tools; 0 means DefaultMaxSteps.
	MaxSteps int
	// ResultChars is where a result is cut, in characters; 0 means DefaultResultChars.
	ResultChars int
	// Corrections is @correct(n): how many times a rejected answer may be sent back.
	Corrections int
	// Run runs a call the policies allowed.
	Run Runner
	// Approve asks a person about calls that need approval; nil means no one can be asked,
	// and such a call ends the conversation with APPROVAL_NEEDED.
	Approve Approver
	// Accept checks the final answer and returns the call's value (output policies,
	// schemas). A *Correction error asks the model again while corrections are left. Nil
	// accepts the answer's text.
	Accept func(resp model.Response) (any, error)
	// OnTool, when set, hears about every call the model asked for.
	OnTool func(ToolEvent)
	// OnViolation, when set, hears about every policy violation of a call or a result: a
	// refused call (phase tool) and a Block on a result (phase input). Neither ends the
	// conversation.
	OnViolation func(v *policy.Violation, target string)
	// Now reads the clock for durations; nil means time.Now.
	Now func() time.Time
	// Hooks, when set, is told of every call before it is put to a person or runs, and may
	// answer it instead (a debugger).
	Hooks Hooks
}

// State is where a conversation stands: plain data that can be saved as JSON and given to
// Resume. Its JSON form keeps the model's bytes exactly (tool call arguments and native
// messages are JSON strings of them), so a saved conversation continues with the very
// requests an uninterrupted one sends.
type State struct {
	// Messages is the conversation after the system prompt, oldest first. Assistant messages
	// keep their provider-native form (model.Message.Native).
	Messages []model.Message `json:"messages"`
	// Requests counts the model requests made; Steps those that asked for tools.
	Requests int `json:"requests"`
	Steps    int `json:"steps"`
	// Corrections counts the rejected answers sent back.
	Corrections int `json:"corrections"`
	// Pending are the calls of the last assistant message, while its turn is answered;
	// Results the answers given so far, one per call in order. A conversation stopped
	// mid-turn continues with Pending[len(Results)].
	Pending []model.ToolCall   `json:"pending,omitempty"`
	Results []model.ToolResult `json:"results,omitempty"`
}

// A Conversation is one agent call's exchange with its model. It is not safe for concurrent
// use; Run it from one goroutine.
type Conversation struct {
	cfg    Config
	st     State
	byName map[string]*Tool
	hidden map[string]*Tool // by function name: methods the policies hide
	defs   []model.ToolDef
	names  []string // function names, sorted, for "You can call"
	// wire keeps the conversation in its provider's wire bytes: each message is encoded once,
	// by the request that first carries it.
	wire model.Wire
}

// New starts a conversation with cfg.Prompt as its first message.
func New(cfg Config) (*Conversation, error) {
	return Resume(cfg, State{Messages: []model.Message{{Role: model.User, Text: cfg.Prompt}}})
}

// Resume continues a conversation from a saved State.
func Resume(cfg Config, st State) (*Conversation, error) {
	if cfg.Model == nil {
		return nil, &Error{Code: CodeToolConfig, Message: "no model provider"}
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.ResultChars <= 0 {
		cfg.ResultChars = DefaultResultChars
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if len(cfg.Tools) > 0 && !model.CanCallTools(cfg.Model) {
		return nil, &Error{Code: CodeToolConfig, Message: "the model's provider cannot call tools; remove tools: from this call or give the agent a model from another provider"}
	}
	// byName and hidden are made by the first tool added (add): most calls offer none.
	c := &Conversation{cfg: cfg, st: st}
	tools := cfg.Tools
	// Sized once for the tools offered at the start: offering twenty is then no growing of
	// three slices twenty times.
	c.cfg.Tools = make([]Tool, 0, len(tools))
	c.defs = make([]model.ToolDef, 0, len(tools))
	c.names = make([]string, 0, len(tools))
	for i := range tools {
		if err := c.add(tools[i]); err != nil {
			return nil, err
		}
	}
	sort.Strings(c.names)
	return c, nil
}

// add offers one more tool.
func (c *Conversation) add(t Tool) error {
	if t.Name == "" {
		return &Error{Code: CodeToolConfig, Message: fmt.Sprintf("tool %s has no function name (use Offer)", t.Target)}
	}
	prev, dup := c.byName[t.Name]
	if !dup {
		prev, dup = c.hidden[t.Name]
	}
	if dup {
		return &Error{Code: CodeToolConfig, Message: fmt.Sprintf("%s and %s have one function name %s", prev.Target, t.Target, t.Name)}
	}
	if t.Hidden {
		if c.hidden == nil {
			c.hidden = map[string]*Tool{}
		}
		h := t // copied here, so that t itself does not move to the heap for every tool
		c.hidden[t.Name] = &h
		return nil
	}
	if c.byName == nil {
		c.byName = make(map[string]*Tool, cap(c.cfg.Tools))
	}
	c.cfg.Tools = append(c.cfg.Tools, t)
	// The tool as the list holds it: a list that grows later (a tool Resolve found) leaves
	// the earlier pointers on the old array, whose tools are the same and never change.
	c.byName[t.Name] = &c.cfg.Tools[len(c.cfg.Tools)-1]
	c.defs = append(c.defs, model.ToolDef{Name: t.Name, Description: t.Description, Params: t.Params})
	c.names = append(c.names, t.Name)
	return nil
}

// State returns where the conversation stands. The slices are shared with the conversation:
// copy them before changing anything, and save the State only while Run is not running.
func (c *Conversation) State() State { return c.st }

// Tools returns the offered tools (not the hidden ones).
func (c *Conversation) Tools() []Tool { return c.cfg.Tools }

// Run continues the conversation until the model answers and Accept takes the answer, or
// something ends it: a model error, an Accept error (a rejection with no corrections left),
// a Fatal or approval error, or the context. The run's own failures are returned; failures
// of single tool calls go to the model instead.
func (c *Conversation) Run(ctx context.Context) (any, error) {
	for {
		if len(c.st.Pending) > 0 {
			if err := c.turn(ctx); err != nil {
				return nil, err
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		req, toolsOff := c.request()
		resp, err := c.cfg.Model.Complete(ctx, req)
		if err != nil {
			return nil, err
		}
		c.st.Requests++
		if len(resp.ToolCalls) == 0 || toolsOff || len(c.cfg.Tools) == 0 && c.cfg.Resolve == nil {
			if len(resp.ToolCalls) > 0 {
				// Tools were turned off (Ollama cannot say so) or never offered: the calls
				// are ignored and the text is the answer.
				resp.ToolCalls = nil
				resp.Message = model.Message{Role: model.Assistant, Text: resp.Text}
			}
			v, err := c.accept(resp)
			var corr *Correction
			if err != nil && errors.As(err, &corr) && c.st.Corrections < c.cfg.Corrections {
				c.st.Corrections++
				c.st.Messages = append(c.st.Messages, resp.Message, model.Message{Role: model.User, Text: corr.Note})
				continue
			}
			if corr != nil && err != nil {
				return nil, corr.Err
			}
			return v, err
		}
		c.st.Steps++
		c.st.Messages = append(c.st.Messages, resp.Message)
		c.st.Pending, c.st.Results = resp.ToolCalls, make([]model.ToolResult, 0, len(resp.ToolCalls))
	}
}

func (c *Conversation) accept(resp model.Response) (any, error) {
	if c.cfg.Accept == nil {
		return resp.Text, nil
	}
	return c.cfg.Accept(resp)
}

// request builds the next request. After MaxSteps requests that asked for tools, tools are
// turned off and the last tool message tells the model its steps are used.
func (c *Conversation) request() (model.Request, bool) {
	req := c.cfg.Request
	req.Tools, req.ToolChoice = nil, ""
	toolsOff := false
	if len(c.defs) > 0 || c.cfg.Resolve != nil {
		req.Tools = c.defs
		if c.st.Steps >= c.cfg.MaxSteps {
			toolsOff = true
			if len(c.defs) > 0 {
				req.ToolChoice = model.ToolNone
			}
		}
	}
	req.Messages = c.st.Messages
	req.Wire = &c.wire
	return req, toolsOff
}

// turn answers the pending calls in order, from the first without a result, and adds the
// tool message.
func (c *Conversation) turn(ctx context.Context) error {
	for len(c.st.Results) < len(c.st.Pending) {
		i := len(c.st.Results)
		res, err := c.handle(ctx, c.st.Pending[i], i, len(c.st.Pending))
		if err != nil {
			return err
		}
		c.st.Results = append(c.st.Results, res)
	}
	msg := model.Message{Role: model.Tool, ToolResults: c.st.Results}
	if c.st.Steps >= c.cfg.MaxSteps {
		msg.Text = stepsUsed(c.cfg.MaxSteps)
	}
	c.st.Messages = append(c.st.Messages, msg)
	c.st.Pending, c.st.Results = nil, nil
	return nil
}
