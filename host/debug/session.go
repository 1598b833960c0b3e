// Package debug owns Halo's debugger, the engine of `halo debug`: it runs one pipeline with
// host/runtime's Hooks, stops before the steps a person asked for (the next stage, a step
// into a called pipeline or an agent call's model requests and tool calls, a breakpoint on a
// stage's line, on a Tool.method or Agent.task, or on a policy violation), shows where the
// run is and what it holds, lets the person evaluate expressions over context, change
// context.data and answer a tool call instead of running it, and asks the run's questions
// (|! yield, approvals, ~> listen). The run is an ordinary run: its record is saved in the
// runtime's store, with what a person set marked so, and a stopped run's record says it was
// stopped (DEBUG_STOPPED).
//
// Two front ends drive a Session: Console, the terminal's command prompt, and ServeDAP, the
// Debug Adapter Protocol (github.com/google/go-dap) that editors speak. cmd/halo's debug
// command wires them to a terminal or to stdio.
package debug

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
)

// CodeStopped: the run was stopped in the debugger (q, the terminal closed, the editor
// disconnected) before it ended. Its record is saved failed, with this code.
const CodeStopped = "DEBUG_STOPPED"

// A Reason says why a run stopped.
type Reason string

// Reasons of stops.
const (
	// ReasonEntry is the first stop of a run started to stop at once.
	ReasonEntry Reason = "entry"
	// ReasonStep is a stop after n, s or out.
	ReasonStep Reason = "step"
	// ReasonBreakpoint is a stop at a breakpoint on a line or a call.
	ReasonBreakpoint Reason = "breakpoint"
	// ReasonViolation is a stop at a policy violation (b violation).
	ReasonViolation Reason = "violation"
	// ReasonPause is a stop the person asked for while the run went on (an editor's pause).
	ReasonPause Reason = "pause"
	// ReasonAsk is a question of the run (a |! yield, an approval, a ~> listen), waiting for
	// the person's answer.
	ReasonAsk Reason = "ask"
)

// A Stop is a place the run waits at for the person.
type Stop struct {
	Reason Reason
	// Breakpoints are the ids of the breakpoints that stopped it.
	Breakpoints []int
	// Step is what the run is about to do; at a question (ReasonAsk), the last step taken.
	Step *runtime.Step
	// Ask is the question at ReasonAsk.
	Ask *runtime.Interrupt
	// Stack is where the run is, outermost first: the pipeline, its stage, then a called
	// pipeline's or a branch arm's stages, and an agent call's model request or tool call.
	Stack []Frame
}

// An End is how the run ended: its result, or why it could not start.
type End struct {
	Result *runtime.Result
	Err    error
}

// An Event is what a Session tells its front end: a stop, or the end.
type Event struct {
	Stop *Stop
	End  *End
}

// A mode says where the run stops next, besides breakpoints and questions.
type mode int

const (
	runFree  mode = iota // continue: breakpoints only
	stepIn               // every step
	stepOver             // steps at the depth of the last stop, or outside it
	stepOut              // steps outside the depth of the last stop
)

// Config is what a Session needs from outside.
type Config struct {
	// Source reads a .halo file by the name its positions carry; nil shows no source.
	Source func(name string) ([]byte, error)
	// Path returns the absolute path of a file name (as positions carry it, or as a person
	// or an editor names it), so that breakpoints find their file; nil compares names.
	Path func(name string) string
}

// A Session debugs one run of one pipeline. Make it with New, hand its hooks to the
// runtime (Configure), Load the runtime, set breakpoints, Start, then read Events until
// the End, answering each Stop with Resume, Answer or Stop.
type Session struct {
	cfg   Config
	rt    *runtime.Runtime
	index *stageIndex

	mu      sync.Mutex
	bps     []*Breakpoint
	nextBP  int
	onViol  bool
	mode    mode
	depth   int
	entry   bool
	pausing bool
	current *Stop
	last    *runtime.Step
	stopErr error
	cancel  context.CancelCauseFunc
	quit    chan struct{}

	// gate lets one stop at a time reach the person: a fan-out's calls and a |* each's items
	// may be at steps at once.
	gate    sync.Mutex
	events  chan Event
	actions chan action
	done    chan struct{}
	started bool
}

type actionKind int

const (
	actContinue actionKind = iota
	actNext
	actIn
	actOut
	actAnswer
	actNoAnswer
)

type action struct {
	kind   actionKind
	answer any
}

// New makes a Session.
func New(cfg Config) *Session {
	return &Session{cfg: cfg, quit: make(chan struct{}), events: make(chan Event), actions: make(chan action), done: make(chan struct{})}
}

// Configure hands the session's hooks and question handler to a runtime's config: every
// step of its runs is told to the session, and every question is asked of the person.
func (s *Session) Configure(cfg *runtime.Config) {
	cfg.Hooks = s
	cfg.OnInterrupt = s.interrupt
}

// Load tells the session the runtime it debugs (made with Configure): breakpoints are
// placed on its program's stages.
func (s *Session) Load(rt *runtime.Runtime) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rt = rt
	s.index = newStageIndex(rt.Program(), s.cfg.Source)
}

// Program returns the loaded program.
func (s *Session) Program() *lang.Program { return s.rt.Program() }

// Events returns the channel of stops and, last, the end. It is closed after the end.
func (s *Session) Events() <-chan Event { return s.events }

// Start runs pipeline with inputs in a goroutine of its own, stopping at its first step when
// stopAtEntry is set. The session's Stop, or ctx, ends it; its End is the last Event.
func (s *Session) Start(ctx context.Context, pipeline string, inputs map[string]any, stopAtEntry bool) {
	rctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.cancel, s.started = cancel, true
	if stopAtEntry {
		s.mode, s.entry = stepIn, true
	}
	if s.stopErr != nil {
		cancel(s.stopErr)
	}
	s.mu.Unlock()
	go func() {
		defer close(s.done)
		defer close(s.events)
		res, err := s.rt.Run(rctx, pipeline, inputs)
		cancel(nil)
		s.events <- Event{End: &End{Result: res, Err: err}}
	}()
}

// Wait waits for the run's goroutine to end (after the End was read). A session never
// started returns at once.
func (s *Session) Wait() {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		<-s.done
	}
}

// Stop stops the run for why ("q", "the terminal was closed"): the step it waits at, or
// the call it is making, fails with DEBUG_STOPPED, every plugin it started is stopped with
// it, and its record says so. The End follows on Events.
func (s *Session) Stop(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopErr != nil {
		return
	}
	s.stopErr = errcode.New(CodeStopped, "the run was stopped in the debugger: %s", why)
	close(s.quit)
	if s.cancel != nil {
		s.cancel(s.stopErr)
	}
}

// Current returns the stop the run waits at, or nil while it runs.
func (s *Session) Current() *Stop {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// ErrRunning is what Resume and Answer return while the run is not stopped.
var ErrRunning = errors.New("the run is not stopped")

// Continue lets the run go on to the next breakpoint or question.
func (s *Session) Continue() error { return s.resume(action{kind: actContinue}, runFree) }

// Next lets the run go on to its next step at the depth of this stop or outside it: the
// next stage, from a stage; the next model request or tool call of the same agent call,
// from one of those.
func (s *Session) Next() error { return s.resume(action{kind: actNext}, stepOver) }

// StepIn lets the run go on to its very next step: into a called pipeline's or a branch
// arm's stages, an agent call's model requests and tool calls.
func (s *Session) StepIn() error { return s.resume(action{kind: actIn}, stepIn) }

// StepOut lets the run go on to its next step outside the depth of this stop: the stage
// after the agent call or the called pipeline it is in.
func (s *Session) StepOut() error { return s.resume(action{kind: actOut}, stepOut) }

// Pause asks the running run to stop at its next step.
func (s *Session) Pause() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode, s.pausing = stepIn, true
}

// Answer answers the question the run waits at (ReasonAsk) with v: a yield's or a listen's
// value, or an approval's answer (true, "y", "no, because ..."). The run goes on as it did
// before the question.
func (s *Session) Answer(v any) error {
	s.mu.Lock()
	cur := s.current
	s.mu.Unlock()
	if cur == nil {
		return ErrRunning
	}
	if cur.Reason != ReasonAsk {
		return fmt.Errorf("the run is stopped at a step, not at a question")
	}
	return s.send(action{kind: actAnswer, answer: v})
}

// resume sends act to the stop the run waits at, and sets where it stops next.
func (s *Session) resume(act action, m mode) error {
	s.mu.Lock()
	cur := s.current
	if cur == nil {
		s.mu.Unlock()
		return ErrRunning
	}
	if cur.Reason == ReasonAsk {
		// Going on without an answer leaves the question unanswered: the run pauses where
		// it can (halo resume answers it later), as halo run does without a terminal.
		act = action{kind: actNoAnswer}
	} else {
		s.mode, s.depth = m, depth(cur.Step)
	}
	s.mu.Unlock()
	return s.send(act)
}

func (s *Session) send(act action) error {
	select {
	case s.actions <- act:
		return nil
	case <-s.quit:
		return s.stopped()
	}
}

func (s *Session) stopped() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopErr
}

// depth is how deep a step is: one for each called pipeline or branch arm it is in, and one
// more for a model request or a tool call, which are inside a stage.
func depth(st *runtime.Step) int {
	if st == nil {
		return 0
	}
	d := len(st.Frames)
	if st.Kind != runtime.StepStage {
		d++
	}
	return d
}

// Before is the runtime's hook: it decides whether the run stops at st and, when it does,
// hands the stop to the front end and waits for the person.
func (s *Session) Before(ctx context.Context, st *runtime.Step) error {
	if err := s.stopped(); err != nil {
		return err
	}
	s.mu.Lock()
	s.last = st
	s.mu.Unlock()
	if reason, _ := s.decide(st); reason == "" {
		return nil
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	// Decided again: while this step waited for the gate, the person may have gone on.
	reason, ids := s.decide(st)
	if reason == "" {
		return s.stopped()
	}
	s.mu.Lock()
	s.entry, s.pausing = false, false
	s.mu.Unlock()
	stop := &Stop{Reason: reason, Breakpoints: ids, Step: st, Stack: s.stack(st)}
	_, err := s.wait(ctx, stop)
	return err
}

// decide says why the run stops at st ("" when it does not) and which breakpoints it hits.
func (s *Session) decide(st *runtime.Step) (Reason, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.Kind == runtime.StepViolation {
		if s.onViol {
			return ReasonViolation, nil
		}
		return "", nil
	}
	var ids []int
	for _, bp := range s.bps {
		if bp.matches(st, s.samePath) {
			ids = append(ids, bp.ID)
		}
	}
	switch {
	case s.entry:
		return ReasonEntry, ids
	case s.pausing:
		return ReasonPause, ids
	case len(ids) > 0:
		return ReasonBreakpoint, ids
	}
	switch d := depth(st); {
	case s.mode == stepIn,
		s.mode == stepOver && d <= s.depth,
		s.mode == stepOut && d < s.depth:
		return ReasonStep, nil
	}
	return "", nil
}

// interrupt is the runtime's question handler: every question waits for the person.
func (s *Session) interrupt(ctx context.Context, in runtime.Interrupt) (any, bool, error) {
	if err := s.stopped(); err != nil {
		return nil, false, err
	}
	s.gate.Lock()
	defer s.gate.Unlock()
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	stop := &Stop{Reason: ReasonAsk, Ask: &in, Step: last, Stack: s.stack(last)}
	act, err := s.wait(ctx, stop)
	if err != nil {
		return nil, false, err
	}
	if act.kind != actAnswer {
		return nil, false, nil
	}
	return act.answer, true, nil
}

// wait hands stop to the front end and waits for its action. The run's context ending or
// the session stopping ends the wait with why.
func (s *Session) wait(ctx context.Context, stop *Stop) (action, error) {
	// The stop is current before the front end hears of it, so its first action finds it.
	s.mu.Lock()
	s.current = stop
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.current = nil
		s.mu.Unlock()
	}()
	select {
	case s.events <- Event{Stop: stop}:
	case <-ctx.Done():
		return action{}, context.Cause(ctx)
	case <-s.quit:
		return action{}, s.stopped()
	}
	select {
	case act := <-s.actions:
		return act, nil
	case <-ctx.Done():
		return action{}, context.Cause(ctx)
	case <-s.quit:
		return action{}, s.stopped()
	}
}

// A Breakpoint stops the run before a stage's line, before a call, or at a violation.
type Breakpoint struct {
	ID int
	// File and Line are the stage line it stops at; Asked is the line it was asked for,
	// when no stage is written there (it moved to the next stage's line).
	File  string
	Line  int
	Asked int
	// Call is the "Tool.method", "Tool" (any method) or "Agent.task" it stops before.
	Call string
	// Violation is set for the breakpoint at every policy violation.
	Violation bool
}

func (bp *Breakpoint) matches(st *runtime.Step, same func(a, b string) bool) bool {
	switch {
	case bp.Call != "":
		if st.Kind != runtime.StepTool && st.Kind != runtime.StepRequest {
			return false
		}
		return st.Target == bp.Call || st.Kind == runtime.StepTool && strings.HasPrefix(st.Target, bp.Call+".")
	case bp.Line > 0:
		if st.Kind != runtime.StepStage {
			return false
		}
		file, line, _ := splitAt(st.At)
		return line == bp.Line && same(file, bp.File)
	}
	return false
}

// Describe says where the breakpoint stops, for people.
func (bp *Breakpoint) Describe() string {
	switch {
	case bp.Violation:
		return fmt.Sprintf("breakpoint %d at every policy violation", bp.ID)
	case bp.Call != "":
		return fmt.Sprintf("breakpoint %d before every call of %s", bp.ID, bp.Call)
	case bp.Asked > bp.Line:
		return fmt.Sprintf("breakpoint %d at %s:%d (line %d is part of the stage written there)", bp.ID, bp.File, bp.Line, bp.Asked)
	case bp.Asked > 0 && bp.Asked != bp.Line:
		return fmt.Sprintf("breakpoint %d at %s:%d (line %d has no stage; the next stage is on line %d)", bp.ID, bp.File, bp.Line, bp.Asked, bp.Line)
	}
	return fmt.Sprintf("breakpoint %d at %s:%d", bp.ID, bp.File, bp.Line)
}

// BreakLine adds a breakpoint before the stage written on line of file ("" for the file
// of the run's pipeline), or, when no stage is written there, before the next stage in the
// file. A line after the file's last stage, or a file the program does not have, is an
// error.
func (s *Session) BreakLine(file string, line int) (*Breakpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bp, err := s.lineBreakpoint(file, line)
	if err != nil {
		return nil, err
	}
	s.add(bp)
	return bp, nil
}

func (s *Session) lineBreakpoint(file string, line int) (*Breakpoint, error) {
	if s.index == nil {
		return nil, fmt.Errorf("no program is loaded")
	}
	name, ok := s.index.file(file, s.samePath)
	if !ok {
		return nil, fmt.Errorf("%s is not a file of this program (its files: %s)", file, strings.Join(s.index.files(), ", "))
	}
	if line < 1 {
		return nil, fmt.Errorf("line %d: lines count from 1", line)
	}
	at, ok := s.index.stageAtOrAfter(name, line)
	if !ok {
		return nil, fmt.Errorf("%s has no stage on line %d or after it", name, line)
	}
	return &Breakpoint{File: name, Line: at, Asked: line}, nil
}

// BreakCall adds a breakpoint before every call of target: "Tool.method", "Tool" (any of its
// methods) or "Agent.task" (each of its model requests). A name the program does not
// declare is an error.
func (s *Session) BreakCall(target string) (*Breakpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkCall(target); err != nil {
		return nil, err
	}
	bp := &Breakpoint{Call: target}
	s.add(bp)
	return bp, nil
}

func (s *Session) checkCall(target string) error {
	if s.rt == nil {
		return fmt.Errorf("no program is loaded")
	}
	prog := s.rt.Program()
	recv, method, hasMethod := strings.Cut(target, ".")
	switch {
	case recv == "" || hasMethod && method == "":
		return fmt.Errorf("%q is not a call: write Tool.method, Tool or Agent.task", target)
	case prog.Tool(recv) != nil:
		return nil
	case prog.Agent(recv) != nil && hasMethod:
		return nil
	case prog.Agent(recv) != nil:
		return fmt.Errorf("%s is an agent: name its task, as in %s.task", recv, recv)
	}
	return fmt.Errorf("this program declares no tool or agent %s", recv)
}

// BreakViolation adds the breakpoint at every policy violation (one at most).
func (s *Session) BreakViolation() *Breakpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, bp := range s.bps {
		if bp.Violation {
			return bp
		}
	}
	bp := &Breakpoint{Violation: true}
	s.add(bp)
	s.onViol = true
	return bp
}

func (s *Session) add(bp *Breakpoint) {
	s.nextBP++
	bp.ID = s.nextBP
	s.bps = append(s.bps, bp)
}

// Delete removes breakpoint id; false when there is none.
func (s *Session) Delete(id int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, bp := range s.bps {
		if bp.ID == id {
			s.bps = append(s.bps[:i], s.bps[i+1:]...)
			if bp.Violation {
				s.onViol = false
			}
			return true
		}
	}
	return false
}

// Breakpoints lists the breakpoints, by id.
func (s *Session) Breakpoints() []*Breakpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]*Breakpoint(nil), s.bps...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// A LineResult is one line breakpoint an editor asked for: placed (Breakpoint) or not (Err).
type LineResult struct {
	Line       int
	Breakpoint *Breakpoint
	Err        error
}

// SetLineBreakpoints replaces the line breakpoints of file with one at each of lines (an
// editor sends a file's whole list each time).
func (s *Session) SetLineBreakpoints(file string, lines []int) []LineResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	name, _ := s.index.file(file, s.samePath)
	kept := s.bps[:0]
	for _, bp := range s.bps {
		if bp.Line == 0 || name == "" || bp.File != name {
			kept = append(kept, bp)
		}
	}
	s.bps = kept
	out := make([]LineResult, len(lines))
	for i, l := range lines {
		out[i].Line = l
		bp, err := s.lineBreakpoint(file, l)
		if err != nil {
			out[i].Err = err
			continue
		}
		s.add(bp)
		out[i].Breakpoint = bp
	}
	return out
}

// A CallResult is one function breakpoint an editor asked for.
type CallResult struct {
	Name       string
	Breakpoint *Breakpoint
	Err        error
}

// SetCallBreakpoints replaces the call breakpoints with one before each of targets.
func (s *Session) SetCallBreakpoints(targets []string) []CallResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.bps[:0]
	for _, bp := range s.bps {
		if bp.Call == "" {
			kept = append(kept, bp)
		}
	}
	s.bps = kept
	out := make([]CallResult, len(targets))
	for i, t := range targets {
		out[i].Name = t
		if err := s.checkCall(t); err != nil {
			out[i].Err = err
			continue
		}
		bp := &Breakpoint{Call: t}
		s.add(bp)
		out[i].Breakpoint = bp
	}
	return out
}

// SetBreakOnViolation turns the breakpoint at every violation on or off.
func (s *Session) SetBreakOnViolation(on bool) {
	if on {
		s.BreakViolation()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.bps[:0]
	for _, bp := range s.bps {
		if !bp.Violation {
			kept = append(kept, bp)
		}
	}
	s.bps, s.onViol = kept, false
}

// samePath reports whether two file names name one file.
func (s *Session) samePath(a, b string) bool {
	if a == b {
		return true
	}
	if s.cfg.Path != nil {
		return s.cfg.Path(a) == s.cfg.Path(b)
	}
	return false
}
