package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/expr-lang/expr"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// Hooks are told before each step a run takes, and may hold the run there: a debugger
// (host/debug) stops at them. Config.Hooks passes them in; a runtime without them checks a
// nil interface at each step and does nothing else.
type Hooks interface {
	// Before is called from the goroutine about to take step s, which waits until it
	// returns (the items of a |* each and the calls of a fan-out may be at steps at once).
	// While it runs, s's methods read the run's context and may change it (Set) or answer a
	// tool call instead of running it (Skip). An error stops the step: the run fails with
	// it. At a violation the error is ignored: the violation has happened.
	Before(ctx context.Context, s *Step) error
}

// A StepKind says what a Step is about to do.
type StepKind string

// The kinds of steps.
const (
	// StepStage is a stage about to run, or a pipeline's start value that is a call (Index
	// -1).
	StepStage StepKind = "stage"
	// StepRequest is a model request of an agent call about to be sent.
	StepRequest StepKind = "request"
	// StepTool is a tool call about to run, after the policies decided on it and before a
	// person is asked for approval.
	StepTool StepKind = "tool"
	// StepViolation is a policy violation that has just been recorded.
	StepViolation StepKind = "violation"
)

// SetByPerson marks what a person set instead of the run: a tool call they answered, a
// value of context.data they changed (Recorded.SetBy, Event.SetBy, CallInfo.SetBy).
const SetByPerson = "person"

// A Frame is one level a step is nested in: a stage of another pipeline that called this one,
// or a branch stage whose arm the step is in.
type Frame struct {
	// Pipeline is the pipeline of the nesting stage; At is where the call or the branch is
	// written.
	Pipeline string
	At       string
	// Called is the pipeline the stage calls; Arm is the branch arm taken ("else" or its
	// condition). One of the two is set.
	Called string
	Arm    string
}

// A Step is what a run is about to do, as Hooks see it.
type Step struct {
	Kind  StepKind
	RunID string
	// Pipeline is the pipeline the step belongs to; At where its stage is written
	// (file:line:col). Frames say where that pipeline (or branch arm) is nested, outermost
	// first; none for a top-level stage of the pipeline the run started with.
	Pipeline string
	At       string
	Frames   []Frame
	// Index is a stage's index in its list of stages (the pipeline's or a branch arm's);
	// -1 for a pipeline's start value. Stage is the stage itself (nil for a start value).
	Index int
	Stage *lang.Stage
	// Value is the value flowing into a stage (or into a tool call the pipeline makes).
	Value any
	// Agent is the agent of a model request or of a tool call its model chose; Target what
	// the step calls: "Agent.task", "Tool.method", a pipeline.
	Agent  string
	Target string
	// Model, Request, System, Messages and Offered describe a model request: the model
	// ("openai/gpt-4o"), its number in the conversation from 1, the system prompt, the
	// conversation so far (the conversation's own slice: read it, do not change it) and the
	// "Tool.method" names offered. A tool call an agent's model chose has Messages too.
	Model    string
	Request  int
	System   string
	Messages []model.Message
	Offered  []string
	// Args are a tool call's arguments as the tool gets them; Decision is what the agent's
	// policies decided, nil for a call no policy checks (one the pipeline makes itself).
	Args     json.RawMessage
	Decision *policy.Decision
	// Violation is a StepViolation's violation.
	Violation *ViolationInfo

	rn *run
	// pass is which time this stage (by place) is reached in the run, from 1: a value set
	// here is set again there by a replay.
	pass   int
	answer *personAnswer
}

// Context returns the run's context as expressions read it at this step: data (inputs and
// `as` names), inputs and meta, as plain JSON-shaped values (a copy).
func (s *Step) Context() map[string]any {
	return s.rn.st.snapshot(s.rn.inputs)
}

// Events returns the events the run has made so far, oldest first (a copy).
func (s *Step) Events() []Event {
	top := s.rn.st.top()
	top.mu.Lock()
	defer top.mu.Unlock()
	return append([]Event(nil), top.events...)
}

// Eval evaluates src over the run's context as loop and branch conditions are written
// ("context.data.result.exitCode", "report.score > 3"): context, the inputs and the `as`
// names by themselves. A source that does not compile or run is a BAD_CONDITION error.
func (s *Step) Eval(src string) (any, error) {
	p, err := expr.Compile(src, expr.AllowUndefinedVariables())
	if err != nil {
		return nil, &Error{Code: CodeCondition, Message: "expression " + quote(src) + ": " + err.Error(), Err: err}
	}
	out, err := expr.Run(p, condEnv(s.rn.scope()))
	if err != nil {
		return nil, &Error{Code: CodeCondition, Message: "expression " + quote(src) + ": " + err.Error(), Err: err}
	}
	return out, nil
}

// Set changes context.data.<path> to v before the stage runs: path is a name
// ("limit"), or a path into an object ("report.score"; "context.data." before it is
// allowed). The stage and everything after it read the new value; the change is an event
// (type "set") and is kept in the recording, both marked as set by a person, so a replay
// sets it again at the same place. Only a stage step can set values.
func (s *Step) Set(path string, v any) error {
	if s.Kind != StepStage {
		return errorf(CodeRun, "values are set before a stage; this step is a %s", s.Kind)
	}
	path = strings.TrimPrefix(path, "context.data.")
	if err := s.rn.setPath(path, v); err != nil {
		return err
	}
	s.rn.record(Recorded{Kind: RecordedSet, Target: path, At: s.At, Step: s.pass, Answer: v, SetBy: SetByPerson})
	s.rn.st.emit(Event{Type: "set", At: s.At, Target: path, Output: v, SetBy: SetByPerson})
	return nil
}

// Skip answers a tool call with v instead of running it: the pipeline (or the agent's model)
// gets v as the call's result, no one is asked for approval, and the call is recorded with v
// as its result, marked as set by a person. A call the policies refused never runs, and
// cannot be answered.
func (s *Step) Skip(v any) error {
	if s.Kind != StepTool {
		return errorf(CodeRun, "only a tool call can be answered instead of run; this step is a %s", s.Kind)
	}
	if d := s.Decision; d != nil && d.Verdict == policy.Refused {
		return errorf(CodeRun, "policy %s refuses this call, so it will not run and there is nothing to answer", d.Policy)
	}
	if _, err := json.Marshal(v); err != nil {
		return errorf(CodeRun, "the answer is not a JSON value: %v", err)
	}
	s.answer = &personAnswer{value: v}
	return nil
}

// A personAnswer is a person's value standing in for a tool call's result.
type personAnswer struct{ value any }

// result is the answer as a call's result: the value and its JSON for the recording.
func (a *personAnswer) result() (any, json.RawMessage, error) {
	raw, err := json.Marshal(a.value)
	return a.value, raw, err
}

// setBy is "person" for a call a person answered, "" for one that ran (a nil answer).
func (a *personAnswer) setBy() string {
	if a == nil {
		return ""
	}
	return SetByPerson
}

// A debugRun is what the runs of one pipeline run share while Hooks watch them or a replay
// sets values a person set: how often each stage has been reached.
type debugRun struct {
	mu     sync.Mutex
	visits map[string]int
}

func newDebugRun() *debugRun { return &debugRun{visits: map[string]int{}} }

// visit counts one more time the stage at, on lane, is reached, and returns the count.
func (d *debugRun) visit(at, lane string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := lane + "\x00" + at
	d.visits[k]++
	return d.visits[k]
}

// hooks are the Hooks told of this run's steps: none in a replay, which runs on its own.
func (rn *run) hooks() Hooks {
	if rn.tools.replay != nil {
		return nil
	}
	return rn.r.cfg.Hooks
}

// nest returns this run's frames with f inside them, for a run nested in this one.
func (rn *run) nest(f Frame) []Frame {
	return append(rn.frames[:len(rn.frames):len(rn.frames)], f)
}

func (rn *run) step(kind StepKind, at string) *Step {
	return &Step{Kind: kind, RunID: rn.st.runID(), Pipeline: rn.pd.Name.Name, At: at, Frames: rn.frames, Index: -1, rn: rn}
}

// beforeStage is what happens before stage i runs, while rn.dbg is set: a replay sets the
// values a person set here, and Hooks are told.
func (rn *run) beforeStage(ctx context.Context, i int, st *lang.Stage, value any) error {
	s, err := rn.reached(st.Pos.String())
	if s == nil || err != nil {
		return err
	}
	s.Index, s.Stage, s.Value, s.Target = i, st, value, markTarget(st)
	return rn.hooks().Before(ctx, s)
}

// beforeStart is beforeStage for a pipeline's start value that is a call.
func (rn *run) beforeStart(ctx context.Context, c *lang.Call) error {
	s, err := rn.reached(c.Pos().String())
	if s == nil || err != nil {
		return err
	}
	s.Target = c.Target()
	return rn.hooks().Before(ctx, s)
}

// reached counts a visit of the stage at and applies what a replayed run's person set
// there; it returns the step to tell Hooks of, or nil without Hooks.
func (rn *run) reached(at string) (*Step, error) {
	pass := rn.dbg.visit(at, rn.st.lane)
	if rp := rn.tools.replay; rp != nil {
		for _, c := range rp.sets(rn.place(at), pass) {
			if err := rn.setPath(c.Target, c.Answer); err != nil {
				return nil, errorf(CodeReplayDiverged, "the recorded run set %s here, and it cannot be set now: %v", c.Target, err)
			}
			rn.st.emit(Event{Type: "set", At: at, Target: c.Target, Output: c.Answer, SetBy: c.SetBy})
		}
	}
	if rn.hooks() == nil {
		return nil, nil
	}
	s := rn.step(StepStage, at)
	s.pass = pass
	return s, nil
}

// setPath sets context.data.<path> of this run: a name, or a path into an object, whose
// objects on the way are copied, not changed (earlier events and stages hold them).
func (rn *run) setPath(path string, v any) error {
	parts := strings.Split(path, ".")
	for _, p := range parts {
		if p == "" {
			return errorf(CodeRun, "%q is not a name of context.data or a path into one (report.score)", path)
		}
	}
	if len(parts) == 1 {
		rn.st.set(path, v)
		return nil
	}
	cur, _ := rn.st.get(parts[0])
	nv, err := withField(cur, parts[0], parts[1:], v)
	if err != nil {
		return err
	}
	rn.st.set(parts[0], nv)
	return nil
}

// withField returns a copy of the object cur (named name) with the field at path set to v.
func withField(cur any, name string, path []string, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	m, ok := cur.(map[string]any)
	if !ok && cur != nil {
		return nil, errorf(CodeRun, "%s is %s, not an object with fields", name, describe(cur))
	}
	out := make(map[string]any, len(m)+1)
	for k, x := range m {
		out[k] = x
	}
	inner, err := withField(m[path[0]], name+"."+path[0], path[1:], v)
	if err != nil {
		return nil, err
	}
	out[path[0]] = inner
	return out, nil
}

// sets takes the recorded values a person set at p on the pass-th visit, in order.
func (rp *replayer) sets(p place, pass int) []*Recorded {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	var out []*Recorded
	for i := range rp.rec.Calls {
		c := &rp.rec.Calls[i]
		if !rp.used[i] && c.Kind == RecordedSet && c.At == p.at && p.of(c) && c.Step == pass {
			rp.used[i] = true
			out = append(out, c)
		}
	}
	return out
}

// hasSets reports whether a person set values in the recorded run.
func (r *Recording) hasSets() bool {
	for i := range r.Calls {
		if r.Calls[i].Kind == RecordedSet {
			return true
		}
	}
	return false
}

// stop tells Hooks of a model request about to be sent.
func (s *modelStep) stop(ctx context.Context, req model.Request) error {
	st := s.rn.step(StepRequest, s.at)
	st.Agent, st.Target, st.Model = s.agent, s.target, s.ref
	st.Request = s.conv.State().Requests + 1
	st.System, st.Messages = req.System, req.Messages
	for _, t := range s.conv.Tools() {
		st.Offered = append(st.Offered, t.Target)
	}
	return s.rn.hooks().Before(ctx, st)
}

// agentStops tells Hooks of each tool call an agent's model chose (host/agent's Hooks), with
// the policies' decision, and records a call a person answered as toolCall records any.
type agentStops struct {
	rn    *run
	at    string
	agent string
	set   policy.Set
}

func (a *agentStops) BeforeCall(ctx context.Context, c agent.Call, d policy.Decision, st agent.State) (any, bool, error) {
	rn := a.rn
	s := rn.step(StepTool, a.at)
	s.Agent, s.Target, s.Args, s.Decision, s.Messages = a.agent, c.Target, c.Args, &d, st.Messages
	if err := rn.hooks().Before(ctx, s); err != nil {
		return nil, false, err
	}
	if s.answer == nil || d.Verdict == policy.Refused {
		return nil, false, nil
	}
	if d.Verdict == policy.NeedsApproval {
		rn.personApproved(c.Target, a.at, c.Args)
	}
	toolName, method, _ := strings.Cut(c.Target, ".")
	out, err := rn.toolCall(ctx, toolReq{td: rn.r.prog.Tool(toolName), method: method, raw: c.Args, value: c.Value,
		at: a.at, agent: a.agent, set: a.set, answered: s.answer})
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// toolStop tells Hooks of a tool call the pipeline makes (a stage's, or an agent call's
// tool: T, with the agent's policies' decision on decideOn), and returns a person's answer
// when they gave one. A call an agent's model chose was told of by its loop (agentStops).
func (rn *run) toolStop(ctx context.Context, q toolReq, target, decideOn string, effect tool.Effect, args json.RawMessage) (*personAnswer, error) {
	if q.raw != nil {
		return nil, nil
	}
	s := rn.step(StepTool, q.at)
	s.Agent, s.Target, s.Args, s.Value = q.agent, target, args, q.input
	if q.police {
		d := q.set.Decide(decideOn, effect, args)
		s.Decision = &d
	}
	if err := rn.hooks().Before(ctx, s); err != nil {
		return nil, err
	}
	if s.answer != nil && s.Decision != nil && s.Decision.Verdict == policy.NeedsApproval {
		rn.personApproved(target, q.at, args)
	}
	return s.answer, nil
}

// personApproved records that a person let a call that needed approval go (by answering it
// themselves), so a replay finds the approval as it finds any.
func (rn *run) personApproved(target, at string, args json.RawMessage) {
	rn.record(Recorded{Kind: RecordedApproval, Target: target, At: at, Args: args,
		Answer: map[string]any{"approved": true, "reason": "answered by a person instead of running"}, SetBy: SetByPerson})
}

// violationStop tells Hooks of a violation just recorded.
func (rn *run) violationStop(ctx context.Context, v ViolationInfo, at string) {
	s := rn.step(StepViolation, at)
	s.Agent, s.Target, s.Violation = v.Agent, v.Target, &v
	_ = rn.hooks().Before(ctx, s) // the violation has happened; a stop ends the run through ctx
}

// stoppedBy is why a run failed: when its context was cancelled with a cause that has a
// stable code (a debugger that stopped it: DEBUG_STOPPED), that cause, whatever error the
// cancellation surfaced as in the stage that was running; else err.
func stoppedBy(ctx context.Context, err error) error {
	if ctx.Err() == nil || !errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && errcode.Code(cause) != "" {
		return cause
	}
	return err
}

// String names a step for logs: "stage at f.halo:3:5".
func (s *Step) String() string { return fmt.Sprintf("%s at %s", s.Kind, s.At) }

// Program returns the program the runtime runs (a debugger places breakpoints on it).
func (r *Runtime) Program() *lang.Program { return r.prog }
