package runtime

import (
	"encoding/json"
	"sync"
	"time"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/tool"
)

// Status is how a run ended (or stands).
type Status string

const (
	Completed Status = "completed"
	Failed    Status = "failed"
	Paused    Status = "paused"
)

// Meta is context.meta: what the run has spent, called and refused so far.
type Meta struct {
	// RunID identifies the run (its record is .halo/runs/<RunID>.json).
	RunID string `json:"runId"`
	// Cost is the dollars every model call of the run cost, from the price table.
	Cost float64 `json:"cost"`
	// Calls lists every model and tool call, in the order they finished.
	Calls []CallInfo `json:"calls"`
	// Violations lists every policy violation, including those @correct repaired.
	Violations []ViolationInfo `json:"violations"`
	// Paused says what a paused run waits for; nil while it runs.
	Paused *PauseInfo `json:"paused"`
	// Retrievals lists every search of a store an agent call made for its prompt.
	Retrievals []RetrievalInfo `json:"retrievals,omitempty"`
}

// A CallInfo is one model or tool call of a run.
type CallInfo struct {
	// Kind is "llm" or "tool".
	Kind string `json:"kind"`
	// Target is "Agent.task" or "Tool.method".
	Target string `json:"target"`
	// Agent is the agent that made the call (for tool calls an agent made).
	Agent string `json:"agent,omitempty"`
	// Model is the "provider/model" of an llm call.
	Model      string       `json:"model,omitempty"`
	Usage      *model.Usage `json:"usage,omitempty"`
	Cost       float64      `json:"cost,omitempty"`
	DurationMs int64        `json:"durationMs"`
	Mocked     bool         `json:"mocked,omitempty"`
	// Error is the failure's code, when the call failed.
	Error string `json:"error,omitempty"`
	// Unpriced says the price table has no entry for the model: Cost is 0, the real cost
	// unknown.
	Unpriced bool `json:"unpriced,omitempty"`
	// SetBy is "person" for a call a person answered instead of letting it run (a
	// debugger's skip).
	SetBy string `json:"setBy,omitempty"`
}

// A ViolationInfo is one policy violation as context.meta.violations holds it.
type ViolationInfo struct {
	Policy  string `json:"policy"`
	Rule    string `json:"rule"`
	Phase   string `json:"phase"`
	Message string `json:"message"`
	Agent   string `json:"agent,omitempty"`
	Target  string `json:"target,omitempty"`
}

// PauseInfo is context.meta.paused.
type PauseInfo struct {
	// WaitingFor is the channel the run waits on: "yield", a listen stage's channel, or
	// "approval".
	WaitingFor string `json:"waitingFor"`
	// Question is the yield's argument, for the person who answers; for an approval, the
	// message ("Allow Clerk to call Files.write with {...}? (policy Careful)").
	Question any `json:"question"`
	// Named holds an approval's details, as the interrupt handler gets them: target, args
	// (with the agent's Redact rules applied), policy and agent.
	Named map[string]any `json:"named,omitempty"`
}

// An Event is one line of the event stream (--events FILE) and of a run record. Which
// fields are set depends on Type: "llm" (a model request), "tool" (a tool call),
// "agent_tool" (a call an agent's model asked for, after it finished or was refused),
// "progress" (a running tool call's report; live only, never in the run record),
// "violation" (a policy violation), "stage" (a stage of the pipeline the run started with
// finished: At and Target say which), "loop", "branch" (a branch chose an arm, or none),
// "answered" (an interrupt handler answered a stage that waits), "paused", "run" (the run
// ended).
type Event struct {
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	RunID string    `json:"runId"`
	// At is where the stage is written (file:line:col).
	At     string `json:"at,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Target string `json:"target,omitempty"`
	Model  string `json:"model,omitempty"`
	// Prompt and Answer are an llm event's request text and answer, with the agent's Redact
	// rules applied (and withheld when a Block rule matched).
	Prompt string `json:"prompt,omitempty"`
	Answer string `json:"answer,omitempty"`
	// ToolCalls are the function names an llm event's answer asked for.
	ToolCalls []string `json:"toolCalls,omitempty"`
	// Step is an llm event's request number in its conversation, from 1.
	Step int `json:"step,omitempty"`
	// Args and Output are a tool event's arguments and result, with the agent's Redact rules
	// applied (and withheld when a Block rule matched).
	Args   json.RawMessage `json:"args,omitempty"`
	Output any             `json:"output,omitempty"`
	Usage  *model.Usage    `json:"usage,omitempty"`
	Cost   float64         `json:"cost,omitempty"`
	// DurationMs is how long the call took.
	DurationMs int64 `json:"durationMs,omitempty"`
	Mocked     bool  `json:"mocked,omitempty"`
	// Attempt counts @retry and @correct attempts from 1.
	Attempt int `json:"attempt,omitempty"`
	// Decision and Detail are an agent_tool event's: allowed, approved, declined, refused or
	// error, and the refusal, the error or the person's reason.
	Decision string `json:"decision,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Violation fields.
	Policy  string `json:"policy,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Message string `json:"message,omitempty"`
	// Channel is what a paused or answered stage waits on: "yield" or a listen channel.
	Channel string `json:"channel,omitempty"`
	// Item is the index in its list of the |* each item the event comes from (the
	// innermost, when eaches nest through called pipelines).
	Item *int `json:"item,omitempty"`
	// Arm is the branch arm the event comes from, as its condition is written or "else";
	// on a "branch" event, the arm taken.
	Arm string `json:"arm,omitempty"`
	// Status is a run event's status.
	Status Status     `json:"status,omitempty"`
	Error  *ErrorInfo `json:"error,omitempty"`
	// Progress is a progress event's report, as the tool sent it.
	Progress *tool.Progress `json:"progress,omitempty"`
	// System is the agent's system prompt, on the llm event of a conversation's first
	// request, with the agent's Redact rules applied (withheld when a Block rule matched).
	System string `json:"system,omitempty"`
	// Result is an agent_tool event's result as the model read it: cut at the agent's
	// tool_result_chars and after its input policies, or the refusal or error it was told.
	Result string `json:"result,omitempty"`
	// Unpriced, on an llm event, says the price table has no entry for the model: Cost is
	// 0, the real cost unknown.
	Unpriced bool `json:"unpriced,omitempty"`
	// SetBy is "person" on a tool event of a call a person answered instead of letting it
	// run, and on a "set" event (a person changed context.data.<Target> to Output in a
	// debugger).
	SetBy string `json:"setBy,omitempty"`
}

// state is what a run shares between its stages and its fan-out branches.
type state struct {
	mu     sync.Mutex
	meta   Meta
	data   map[string]any
	events []Event
	onEv   func(Event)
	now    func() time.Time
	// root, when set, is the state of the run that called this pipeline: meta and events
	// are the whole run's, while data is each pipeline's own.
	root *state
	// parent, when set, is the state of the stages a branch arm or an each item is nested
	// in: names not in data are read from it (and its parents).
	parent *state
	// item and arm are stamped on every event made here (see Event.Item and Event.Arm).
	item *int
	arm  string
	// lane says which branch of the run's nesting the state is on, the same in every run of
	// the pipeline whatever the file's line numbers: "*1" for the second call of a fan-out,
	// "#3" for the fourth item of an each, "?else" for a branch arm, joined from the
	// outermost. A replay matches recorded calls by it.
	lane string
}

// top returns the state that holds the run's meta and events.
func (s *state) top() *state {
	if s.root != nil {
		return s.root
	}
	return s
}

func (s *state) emit(e Event) {
	if e.Item == nil {
		e.Item = s.item
	}
	if e.Arm == "" {
		e.Arm = s.arm
	}
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Time = s.now().UTC()
	e.RunID = s.meta.RunID
	s.events = append(s.events, e)
	if s.onEv != nil {
		s.onEv(e)
	}
}

// emitLive hands e to the event stream without keeping it in the run record: progress,
// which says nothing once the call it reports on has ended.
func (s *state) emitLive(e Event) {
	if e.Item == nil {
		e.Item = s.item
	}
	if e.Arm == "" {
		e.Arm = s.arm
	}
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onEv == nil {
		return
	}
	e.Time = s.now().UTC()
	e.RunID = s.meta.RunID
	s.onEv(e)
}

// runID returns the run's id, which never changes while it runs.
func (s *state) runID() string {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.meta.RunID
}

func (s *state) addCall(c CallInfo) {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta.Calls = append(s.meta.Calls, c)
	s.meta.Cost += c.Cost
}

func (s *state) addRetrieval(r RetrievalInfo) {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta.Retrievals = append(s.meta.Retrievals, r)
}

func (s *state) addViolation(v ViolationInfo) {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta.Violations = append(s.meta.Violations, v)
}

func (s *state) set(name string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data[name] = v
}

// get reads a name of context.data, from this state or the ones it is nested in.
func (s *state) get(name string) (any, bool) {
	for ; s != nil; s = s.parent {
		s.mu.Lock()
		v, ok := s.data[name]
		s.mu.Unlock()
		if ok {
			return v, true
		}
	}
	return nil, false
}

// snapshot returns the context as plain JSON-shaped values: what conditions, paths and
// templates read.
func (s *state) snapshot(inputs map[string]any) map[string]any {
	var chain []*state
	for p := s; p != nil; p = p.parent {
		chain = append(chain, p)
	}
	data := map[string]any{}
	for i := len(chain) - 1; i >= 0; i-- {
		p := chain[i]
		p.mu.Lock()
		for k, v := range p.data {
			data[k] = v
		}
		p.mu.Unlock()
	}
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := make([]any, len(s.meta.Calls))
	for i, c := range s.meta.Calls {
		calls[i] = plain(c)
	}
	viol := make([]any, len(s.meta.Violations))
	for i, v := range s.meta.Violations {
		viol[i] = plain(v)
	}
	retrievals := make([]any, len(s.meta.Retrievals))
	for i, r := range s.meta.Retrievals {
		retrievals[i] = plain(r)
	}
	var paused any
	if s.meta.Paused != nil {
		paused = plain(s.meta.Paused)
	}
	return map[string]any{
		"data":   data,
		"inputs": inputs,
		"meta": map[string]any{
			"runId":      s.meta.RunID,
			"cost":       s.meta.Cost,
			"calls":      calls,
			"violations": viol,
			"paused":     paused,
			"retrievals": retrievals,
		},
	}
}

// plain turns a Go value into what encoding/json decodes (maps, slices, float64...).
func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
