package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/tool"
)

// CodeReplayDiverged: a replayed run made a call its recording cannot answer (a tool call
// with other arguments, a model request past the recorded ones, an approval no one was
// asked), so it stops there.
const CodeReplayDiverged = "REPLAY_DIVERGED"

// A Recording is what a run's models answered, its tools returned and its people said, as
// they did (unredacted), in the order it happened: Runtime.Replay runs the pipeline again
// answering every call from it, without a model, a key or a server. A run record keeps it
// (Record.Recording), which is why records are private (mode 0600).
type Recording struct {
	// Calls are in the order they finished.
	Calls []Recorded `json:"calls"`
	// Methods are the methods each tool (by its declared name) was described with, so a
	// replay offers the same without starting anything.
	Methods map[string][]tool.Method `json:"methods,omitempty"`
}

// Kinds of Recorded.
const (
	RecordedLLM      = "llm"
	RecordedTool     = "tool"
	RecordedApproval = "approval"
	RecordedAnswer   = "answer"
	RecordedSet      = "set"
)

// A Recorded is one call of a run and what answered it.
type Recorded struct {
	// Kind is "llm" (a model request), "tool" (a tool call), "approval" (a person's, a
	// mock's or a handler's answer to a call put up for approval), "answer" (the answer to
	// a |! yield or a ~> listen) or "set" (a value a person set in a debugger).
	Kind string `json:"kind"`
	// Target is "Agent.task" (llm), "Tool.method" (tool, approval; "Tool" for a mocked
	// tool: T of a tool whose methods were not described), or the channel (answer).
	Target string `json:"target"`
	// At is where the stage is written. Lane says which fan-out call, each item and branch
	// arm made the call ("*1#3" for the fourth item of an each in the second call of a
	// fan-out), which a replay matches calls by, whatever line numbers the file has now.
	At   string `json:"at,omitempty"`
	Lane string `json:"lane,omitempty"`
	// Step is a model request's number in its conversation, from 1.
	Step int `json:"step,omitempty"`
	// Args are a tool call's or an approval's arguments, as sent.
	Args json.RawMessage `json:"args,omitempty"`
	// Response is what the model answered.
	Response *model.Response `json:"response,omitempty"`
	// Value is a mocked agent's answer when it was not text.
	Value any `json:"value,omitempty"`
	// Result is what the tool returned, as JSON; Mocked says a mock gave it.
	Result json.RawMessage `json:"result,omitempty"`
	Mocked bool            `json:"mocked,omitempty"`
	// Answer is an approval's verdict ({approved, reason}) or a yield's or listen's value.
	Answer any `json:"answer,omitempty"`
	// Error is why a model or tool call failed.
	Error *RecordedError `json:"error,omitempty"`
	// SetBy is "person" when a person gave the value instead of a model, a tool or the
	// pipeline: a tool call a debugger skipped (Result is the person's value; an approval
	// beside it, when the call needed one), and every "set" (a person changed
	// context.data.<Target> to Answer before stage At, on its Step-th pass).
	SetBy string `json:"setBy,omitempty"`
}

// A RecordedError is a failed call as a Recording keeps it.
type RecordedError struct {
	Code      string          `json:"code,omitempty"`
	Message   string          `json:"message"`
	Retryable bool            `json:"retryable,omitempty"`
	Detail    json.RawMessage `json:"detail,omitempty"`
}

func recordError(err error) *RecordedError {
	re := &RecordedError{Code: errcode.Code(err), Message: err.Error(), Retryable: retryable(err)}
	var te *tool.Error
	if errors.As(err, &te) {
		re.Detail = te.Detail
	}
	return re
}

// toolError is a recorded tool failure as the tool gave it.
func (e *RecordedError) toolError() error {
	return &tool.Error{Code: e.Code, Message: e.Message, Retryable: e.Retryable, Detail: e.Detail}
}

// modelError is a recorded model failure as the provider gave it.
func (e *RecordedError) modelError() error {
	return &model.Error{Code: e.Code, Message: e.Message, Retryable: e.Retryable}
}

// A recorder keeps a run's Recording while it runs; every run of a pipeline (called
// pipelines, fan-out branches, each items) adds to the one of the run it belongs to.
type recorder struct {
	mu  sync.Mutex
	rec Recording
}

func (r *recorder) add(c Recorded) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.rec.Calls = append(r.rec.Calls, c)
	r.mu.Unlock()
}

func (r *recorder) methods(name string, ms []tool.Method) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.rec.Methods == nil {
		r.rec.Methods = map[string][]tool.Method{}
	}
	r.rec.Methods[name] = ms
	r.mu.Unlock()
}

// recording returns a copy of what was recorded.
func (r *recorder) recording() *Recording {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	// Calls cut at length and capacity: later calls go past it or into a new array, and a
	// recorded call is never changed.
	calls := r.rec.Calls
	out := &Recording{Calls: calls[:len(calls):len(calls)]}
	if r.rec.Methods != nil {
		out.Methods = make(map[string][]tool.Method, len(r.rec.Methods))
		for k, v := range r.rec.Methods {
			out.Methods[k] = v
		}
	}
	return out
}

// record adds c, made at this run's place (its each item and branch arm).
func (rn *run) record(c Recorded) {
	if rn.tools.rec == nil {
		return
	}
	c.Lane = rn.st.lane
	rn.tools.rec.add(c)
}

// A replayer answers a replayed run's calls from a Recording, each recorded call once.
type replayer struct {
	mu   sync.Mutex
	rec  *Recording
	used []bool
	// waiting is the call the recorded run still waits for approval of, if it does: the
	// replay pauses there too.
	waiting *WaitingCall
}

func newReplayer(rec *Recording) *replayer {
	return &replayer{rec: rec, used: make([]bool, len(rec.Calls))}
}

// place is where a call is made: its stage and its lane (see state.lane).
type place struct {
	at   string
	lane string
}

// of reports whether c was made on the same lane.
func (p place) of(c *Recorded) bool { return c.Lane == p.lane }

func (rn *run) place(at string) place { return place{at: at, lane: rn.st.lane} }

// take finds the first unused recorded call of kind and target that ok accepts, made at p
// when one is, else anywhere, and marks it used.
func (rp *replayer) take(kind, target string, p place, ok func(*Recorded) bool) (*Recorded, bool) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	first := -1
	for i := range rp.rec.Calls {
		c := &rp.rec.Calls[i]
		if rp.used[i] || c.Kind != kind || c.Target != target || !ok(c) {
			continue
		}
		if p.of(c) {
			rp.used[i] = true
			return c, true
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return nil, false
	}
	rp.used[first] = true
	return &rp.rec.Calls[first], true
}

// model answers a model request of the agent call target at p, step step of its
// conversation, with the next recorded answer of that call.
func (rp *replayer) model(target string, p place, step int) (*Recorded, error) {
	rp.mu.Lock()
	next, total := -1, 0
	for i := range rp.rec.Calls {
		c := &rp.rec.Calls[i]
		if c.Kind != RecordedLLM || c.Target != target || !p.of(c) {
			continue
		}
		total++
		if next < 0 && !rp.used[i] {
			next = i
		}
	}
	if next >= 0 && rp.rec.Calls[next].Step == step {
		rp.used[next] = true
		c := &rp.rec.Calls[next]
		rp.mu.Unlock()
		return c, nil
	}
	rp.mu.Unlock()
	switch {
	case next >= 0:
		return nil, errorf(CodeReplayDiverged, "%s asked its model for step %d of its conversation, and the recorded run's next answer is for step %d: the conversation took another way", target, step, rp.rec.Calls[next].Step)
	case total == 0:
		return nil, errorf(CodeReplayDiverged, "%s asked its model, and the recorded run never made this agent call here", target)
	}
	return nil, errorf(CodeReplayDiverged, "%s asked its model for step %d of its conversation, and the recorded run has no more answers of this agent call here (it had %d)", target, step, total)
}

// tool answers a tool call with a recorded call of the same target and arguments.
func (rp *replayer) tool(target string, args json.RawMessage, p place, shown func(json.RawMessage) string) (*Recorded, error) {
	if c, ok := rp.take(RecordedTool, target, p, func(c *Recorded) bool { return sameJSON(c.Args, args) }); ok {
		return c, nil
	}
	// toolCall says which tool: the message starts with the arguments.
	return nil, errorf(CodeReplayDiverged, "the recorded run made no call with %s%s", shown(args), rp.other(RecordedTool, target, p, shown))
}

// approval answers an approval with the recorded answer for a call of the same target and
// arguments.
func (rp *replayer) approval(target string, args json.RawMessage, p place, shown func(json.RawMessage) string) (agent.Approval, error) {
	if c, ok := rp.take(RecordedApproval, target, p, func(c *Recorded) bool { return sameJSON(c.Args, args) }); ok {
		return agent.ParseApproval(c.Answer), nil
	}
	if w := rp.waiting; w != nil && w.Target == target && sameJSON(w.Args, args) {
		return agent.Approval{}, errUnanswered
	}
	return agent.Approval{}, errorf(CodeReplayDiverged, "%s with %s waits for approval, and no one was asked about such a call in the recorded run%s", target, shown(args), rp.other(RecordedApproval, target, p, shown))
}

// errUnanswered is an approval the recorded run still waits for: the replay pauses there.
var errUnanswered = errors.New("the recorded run waits for this approval")

// answer is the recorded answer to a yield or listen on channel at p; ok is false when the
// recorded run was never answered there (it paused).
func (rp *replayer) answer(channel string, p place) (any, bool) {
	c, ok := rp.take(RecordedAnswer, channel, p, func(c *Recorded) bool { return p.of(c) })
	if !ok {
		return nil, false
	}
	return c.Answer, true
}

// other says what the recorded run did instead: a call of the same target with other
// arguments, or none at all.
func (rp *replayer) other(kind, target string, p place, shown func(json.RawMessage) string) string {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	var found *Recorded
	for i := range rp.rec.Calls {
		c := &rp.rec.Calls[i]
		if c.Kind == kind && c.Target == target && (found == nil || !rp.used[i] && p.of(c)) {
			found = c
			if !rp.used[i] && p.of(c) {
				break
			}
		}
	}
	if found == nil {
		return fmt.Sprintf(" (it never called %s)", target)
	}
	return fmt.Sprintf(" (it called %s with %s)", target, shown(found.Args))
}

// maxDiverged bounds the arguments a REPLAY_DIVERGED message quotes, in bytes.
const maxDiverged = 300

// quoteArgs shows args in a message: compact JSON, cut at maxDiverged bytes.
func quoteArgs(args json.RawMessage) string {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return quoteJSON(args, maxDiverged)
}

// A replayModel answers an agent call's model requests from the recording.
type replayModel struct {
	rp     *replayer
	target string
	place  place
	// step is the request's number in its conversation, set before each Complete.
	step int
	// last is the value of the last answer when a mock gave it as other than text.
	last any
}

// CanCallTools: a recorded model called tools if it did.
func (m *replayModel) CanCallTools() bool { return true }

func (m *replayModel) Complete(_ context.Context, _ model.Request) (model.Response, error) {
	c, err := m.rp.model(m.target, m.place, m.step)
	if err != nil {
		return model.Response{}, err
	}
	if c.Error != nil {
		return model.Response{}, c.Error.modelError()
	}
	if c.Response == nil {
		return model.Response{}, errorf(CodeRun, "the recording of %s has neither an answer nor an error", m.target)
	}
	m.last = c.Value
	return *c.Response, nil
}

// A replayProvider stands in for a tool's provider in a replayed run, so nothing is
// started: its methods are the recorded ones (or those its type declares). Its calls are
// answered by toolCall from the recording.
type replayProvider struct {
	rp   *replayer
	name string
	// static are the methods the provider type declares, if it does.
	static []tool.Method
}

func (p *replayProvider) Methods(context.Context) ([]tool.Method, error) {
	if ms, ok := p.rp.rec.Methods[p.name]; ok {
		return ms, nil
	}
	if p.static != nil {
		return p.static, nil
	}
	return nil, errorf(CodeReplayDiverged, "tool %s: the recorded run never described its methods", p.name)
}

func (p *replayProvider) Call(context.Context, tool.Request) (json.RawMessage, error) {
	return nil, errorf(CodeReplayDiverged, "tool %s: a replayed call is answered from the recording", p.name)
}

func (p *replayProvider) Close() error { return nil }

// mocked reports whether the recorded run's calls of any of targets were answered by mocks
// (so the replay binds their arguments as mocks see them).
func (rp *replayer) mocked(targets ...string) bool {
	for _, c := range rp.rec.Calls {
		if c.Kind != RecordedTool || !c.Mocked {
			continue
		}
		for _, t := range targets {
			if c.Target == t {
				return true
			}
		}
	}
	return false
}

// replayTool answers a tool call from the recording: the result the tool returned then, or
// its failure.
func (rn *run) replayTool(q toolReq, target string, args json.RawMessage) (any, error) {
	shown := func(a json.RawMessage) string { return quoteArgs(agent.ShowArgs(q.set, a)) }
	c, err := rn.tools.replay.tool(target, args, rn.place(q.at), shown)
	if err != nil {
		return nil, err
	}
	if c.Error != nil {
		return nil, c.Error.toolError()
	}
	return decodeResult(c.Result)
}

// clone copies the recording's lists, so appending to the copy leaves it as it is.
func (r *Recording) clone() *Recording {
	out := &Recording{Calls: append([]Recorded(nil), r.Calls...)}
	if r.Methods != nil {
		out.Methods = make(map[string][]tool.Method, len(r.Methods))
		for k, v := range r.Methods {
			out.Methods[k] = v
		}
	}
	return out
}
