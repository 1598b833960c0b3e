package debug

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-dap"

	"halolang.dev/halo/host/runtime"
)

// LaunchArgs are the arguments of a DAP launch request: what an editor's launch
// configuration says.
type LaunchArgs struct {
	// Program is the .halo file; Pipeline the pipeline to run ("" when it declares one).
	Program  string `json:"program"`
	Pipeline string `json:"pipeline,omitempty"`
	// Inputs are the pipeline's inputs, by name.
	Inputs map[string]any `json:"inputs,omitempty"`
	// Mock, Mocks and Events are halo run's --mock, --mocks FILE and --events FILE.
	Mock   bool   `json:"mock,omitempty"`
	Mocks  string `json:"mocks,omitempty"`
	Events string `json:"events,omitempty"`
	// Cwd is the project folder (halo.lock, .halo/runs); "" is the adapter's own.
	Cwd string `json:"cwd,omitempty"`
	// StopOnEntry stops before the run's first step.
	StopOnEntry bool `json:"stopOnEntry,omitempty"`
}

// A Launched program is what a DAPConfig's Launch made: a runtime configured with the
// session's hooks (Session.Configure), and what to run.
type Launched struct {
	Runtime  *runtime.Runtime
	Pipeline string
	Inputs   map[string]any
	// Close, when set, is called once the run has ended (it flushes events, say).
	Close func() error
}

// DAPConfig is what ServeDAP needs.
type DAPConfig struct {
	// In and Out carry the protocol (stdio). Nothing else may write to Out.
	In  io.Reader
	Out io.Writer
	// Launch loads a launch request's program into a runtime configured with s's hooks.
	// Its error (a file that does not validate, with its diagnostics) is the launch
	// request's error response.
	Launch func(ctx context.Context, args LaunchArgs, s *Session) (*Launched, error)
	// Session configures the debugging session.
	Session Config
}

// threadID is the one thread a run shows: its stops reach the editor one at a time.
const threadID = 1

// violationFilter is the exception breakpoint filter that stops at policy violations.
const violationFilter = "violation"

// ServeDAP serves the Debug Adapter Protocol on cfg.In and cfg.Out until the editor
// disconnects or the input ends: one launch, one run. A malformed message (bad framing,
// JSON that does not decode, an unknown request) is answered with an error response and the
// session goes on. When the editor disconnects or goes away, a run still going is stopped
// (DEBUG_STOPPED) and ServeDAP returns once it has ended.
func ServeDAP(ctx context.Context, cfg DAPConfig) error {
	srv := &dapServer{cfg: cfg, out: bufio.NewWriter(cfg.Out), ended: make(chan struct{})}
	defer srv.finish()
	r := bufio.NewReader(cfg.In)
	for {
		content, err := dap.ReadBaseMessage(r)
		if err != nil {
			var bad *dap.BaseProtocolError
			if errors.As(err, &bad) {
				srv.fail(0, "", fmt.Sprintf("malformed message: %v", err))
				continue
			}
			srv.stop("the editor went away")
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return fmt.Errorf("reading the debug adapter protocol: %w", err)
		}
		msg, err := dap.DecodeProtocolMessage(content)
		if err != nil {
			seq, command := peek(content)
			srv.fail(seq, command, fmt.Sprintf("cannot decode the message: %v", err))
			continue
		}
		req, ok := msg.(dap.RequestMessage)
		if !ok {
			srv.fail(msg.GetSeq(), "", "halo debug expects requests from the editor, not responses or events")
			continue
		}
		if done := srv.handle(ctx, req); done {
			return nil
		}
	}
}

// peek reads what it can of a message that does not decode: its seq and command.
func peek(content []byte) (int, string) {
	var m struct {
		Seq     int    `json:"seq"`
		Command string `json:"command"`
	}
	json.Unmarshal(content, &m)
	return m.Seq, m.Command
}

type dapServer struct {
	cfg DAPConfig

	wmu sync.Mutex
	out *bufio.Writer
	seq int

	sess     *Session
	launched *Launched
	args     LaunchArgs
	started  bool
	watch    sync.WaitGroup
	ended    chan struct{}

	// vars are the variables of the current stop, by reference; frames its stack frames
	// by id. Both are made anew at each stop.
	mu     sync.Mutex
	vars   map[int]*varNode
	frames map[int]Frame
	cur    *Stop
}

// A varNode is a value an editor can expand. data marks the context.data scope, whose
// entries can be set.
type varNode struct {
	value any
	data  bool
}

func (s *dapServer) send(m dap.Message) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.seq++
	switch x := m.(type) {
	case dap.ResponseMessage:
		x.GetResponse().Seq = s.seq
		x.GetResponse().Type = "response"
	case dap.EventMessage:
		x.GetEvent().Seq = s.seq
		x.GetEvent().Type = "event"
	}
	if err := dap.WriteProtocolMessage(s.out, m); err == nil {
		s.out.Flush()
	}
}

func response(req dap.RequestMessage) dap.Response {
	r := req.GetRequest()
	return dap.Response{RequestSeq: r.Seq, Command: r.Command, Success: true}
}

func event(name string) dap.Event { return dap.Event{Event: name} }

// fail sends an error response to request seq.
func (s *dapServer) fail(seq int, command, msg string) {
	s.send(&dap.ErrorResponse{
		Response: dap.Response{RequestSeq: seq, Command: command, Success: false, Message: msg},
		Body:     dap.ErrorResponseBody{Error: &dap.ErrorMessage{Id: 1, Format: msg, ShowUser: true}},
	})
}

func (s *dapServer) failReq(req dap.RequestMessage, msg string) {
	r := req.GetRequest()
	s.fail(r.Seq, r.Command, msg)
}

func (s *dapServer) output(category, text string) {
	s.send(&dap.OutputEvent{Event: event("output"), Body: dap.OutputEventBody{Category: category, Output: text}})
}

// handle answers one request; true when the session is over (disconnect).
func (s *dapServer) handle(ctx context.Context, req dap.RequestMessage) bool {
	switch r := req.(type) {
	case *dap.InitializeRequest:
		s.send(&dap.InitializeResponse{Response: response(r), Body: dap.Capabilities{
			SupportsConfigurationDoneRequest: true,
			SupportsFunctionBreakpoints:      true,
			SupportsSetVariable:              true,
			SupportsTerminateRequest:         true,
			ExceptionBreakpointFilters: []dap.ExceptionBreakpointsFilter{{
				Filter: violationFilter, Label: "Policy violations",
				Description: "Stop at every policy violation (a refused tool call, a rejected answer, a spend limit)",
			}},
		}})
	case *dap.LaunchRequest:
		s.launch(ctx, r)
	case *dap.AttachRequest:
		s.failReq(r, "halo debug starts the run itself: use a launch configuration")
	case *dap.SetBreakpointsRequest:
		s.setBreakpoints(r)
	case *dap.SetFunctionBreakpointsRequest:
		s.setFunctionBreakpoints(r)
	case *dap.SetExceptionBreakpointsRequest:
		if s.sess != nil {
			on := false
			for _, f := range r.Arguments.Filters {
				on = on || f == violationFilter
			}
			s.sess.SetBreakOnViolation(on)
		}
		s.send(&dap.SetExceptionBreakpointsResponse{Response: response(r)})
	case *dap.ConfigurationDoneRequest:
		s.configurationDone(ctx, r)
	case *dap.ThreadsRequest:
		name := "run"
		if s.launched != nil {
			name = "pipeline " + s.launched.Pipeline
		}
		s.send(&dap.ThreadsResponse{Response: response(r), Body: dap.ThreadsResponseBody{Threads: []dap.Thread{{Id: threadID, Name: name}}}})
	case *dap.StackTraceRequest:
		s.stackTrace(r)
	case *dap.ScopesRequest:
		s.scopes(r)
	case *dap.VariablesRequest:
		s.variables(r)
	case *dap.EvaluateRequest:
		s.evaluate(r)
	case *dap.SetVariableRequest:
		s.setVariable(r)
	case *dap.ContinueRequest:
		if s.step(r, s.sess.Continue) {
			s.send(&dap.ContinueResponse{Response: response(r), Body: dap.ContinueResponseBody{AllThreadsContinued: true}})
		}
	case *dap.NextRequest:
		if s.step(r, s.sess.Next) {
			s.send(&dap.NextResponse{Response: response(r)})
		}
	case *dap.StepInRequest:
		if s.step(r, s.sess.StepIn) {
			s.send(&dap.StepInResponse{Response: response(r)})
		}
	case *dap.StepOutRequest:
		if s.step(r, s.sess.StepOut) {
			s.send(&dap.StepOutResponse{Response: response(r)})
		}
	case *dap.PauseRequest:
		if s.sess != nil {
			s.sess.Pause()
		}
		s.send(&dap.PauseResponse{Response: response(r)})
	case *dap.TerminateRequest:
		s.stop("the editor asked to terminate it")
		s.send(&dap.TerminateResponse{Response: response(r)})
	case *dap.DisconnectRequest:
		s.stop("the editor disconnected")
		s.send(&dap.DisconnectResponse{Response: response(r)})
		return true
	default:
		s.failReq(req, fmt.Sprintf("halo debug does not support the %s request", req.GetRequest().Command))
	}
	return false
}

func (s *dapServer) launch(ctx context.Context, r *dap.LaunchRequest) {
	if s.sess != nil {
		s.failReq(r, "a program is launched already: one run per session")
		return
	}
	var args LaunchArgs
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		s.failReq(r, fmt.Sprintf("the launch arguments do not decode: %v", err))
		return
	}
	if args.Program == "" {
		s.failReq(r, `the launch arguments name no program: set "program" to the .halo file`)
		return
	}
	sess := New(s.cfg.Session)
	l, err := s.cfg.Launch(ctx, args, sess)
	if err != nil {
		s.failReq(r, err.Error())
		return
	}
	sess.Load(l.Runtime)
	s.sess, s.launched, s.args = sess, l, args
	s.send(&dap.LaunchResponse{Response: response(r)})
	s.send(&dap.InitializedEvent{Event: event("initialized")})
}

func (s *dapServer) configurationDone(ctx context.Context, r *dap.ConfigurationDoneRequest) {
	if s.sess == nil {
		s.failReq(r, "launch a program first")
		return
	}
	s.send(&dap.ConfigurationDoneResponse{Response: response(r)})
	if s.started {
		return
	}
	s.started = true
	s.sess.Start(ctx, s.launched.Pipeline, s.launched.Inputs, s.args.StopOnEntry)
	s.watch.Add(1)
	go func() {
		defer s.watch.Done()
		for ev := range s.sess.Events() {
			if ev.Stop != nil {
				s.stopped(ev.Stop)
				continue
			}
			s.end(ev.End)
		}
	}()
}

// stop stops a run still going, and waits until it has ended.
func (s *dapServer) stop(why string) {
	if s.sess == nil {
		return
	}
	s.sess.Stop(why)
	if s.started {
		<-s.ended
	}
}

// finish waits for the run's events to be sent and closes what the launch opened.
func (s *dapServer) finish() {
	if s.sess != nil {
		s.sess.Stop("the debug session ended")
	}
	s.watch.Wait()
	if s.sess != nil {
		s.sess.Wait()
	}
	if s.launched != nil && s.launched.Close != nil {
		s.launched.Close()
	}
}

func (s *dapServer) stopped(stop *Stop) {
	s.mu.Lock()
	s.cur, s.vars, s.frames = stop, map[int]*varNode{}, map[int]Frame{}
	s.mu.Unlock()
	body := dap.StoppedEventBody{ThreadId: threadID, AllThreadsStopped: true, HitBreakpointIds: stop.Breakpoints}
	switch stop.Reason {
	case ReasonEntry:
		body.Reason = "entry"
	case ReasonBreakpoint:
		body.Reason = "breakpoint"
		if st := stop.Step; st != nil && st.Kind != runtime.StepStage {
			body.Reason = "function breakpoint"
		}
	case ReasonViolation:
		v := stop.Step.Violation
		body.Reason, body.Description = "exception", "policy violation"
		body.Text = fmt.Sprintf("policy %s (%s, phase %s): %s", v.Policy, v.Rule, v.Phase, v.Message)
	case ReasonPause:
		body.Reason = "pause"
	case ReasonAsk:
		body.Reason, body.Description = "pause", "waits for an answer"
		body.Text = stop.Ask.Message
		how := "type the answer in the debug console (JSON, or text)"
		if stop.Ask.Channel == runtime.ChannelApproval {
			how = "type y in the debug console to allow it, or no and why"
		}
		s.output("console", fmt.Sprintf("the run asks at %s: %s\n%s; continuing without an answer pauses the run\n", stop.Ask.At, stop.Ask.Message, how))
	default:
		body.Reason = "step"
	}
	s.send(&dap.StoppedEvent{Event: event("stopped"), Body: body})
}

func (s *dapServer) end(end *End) {
	defer close(s.ended)
	s.mu.Lock()
	s.cur = nil
	s.mu.Unlock()
	code := 1
	switch {
	case end.Err != nil:
		s.output("stderr", fmt.Sprintf("halo: %v\n", end.Err))
	case end.Result.Status == runtime.Completed:
		code = 0
		s.output("stdout", pretty(end.Result.Output, maxPrinted)+"\n")
	case end.Result.Status == runtime.Paused:
		code = 3
		waiting := ""
		if p := end.Result.Meta.Paused; p != nil {
			waiting = p.WaitingFor
		}
		s.output("console", fmt.Sprintf("run %s paused, waiting for %s; continue it with halo resume %s %s\n", end.Result.RunID, waiting, s.args.Program, end.Result.RunID))
	default:
		msg := "failed"
		if e := end.Result.Error; e != nil {
			at := ""
			if e.At != "" {
				at = e.At + ": "
			}
			msg = fmt.Sprintf("failed: %s%s [%s]", at, e.Message, e.Code)
		}
		s.output("stderr", fmt.Sprintf("run %s %s\n", end.Result.RunID, msg))
	}
	s.send(&dap.ExitedEvent{Event: event("exited"), Body: dap.ExitedEventBody{ExitCode: code}})
	s.send(&dap.TerminatedEvent{Event: event("terminated")})
}

// step runs a stepping action; false (and an error response) when the run is not stopped.
func (s *dapServer) step(req dap.RequestMessage, f func() error) bool {
	if s.sess == nil {
		s.failReq(req, "launch a program first")
		return false
	}
	if err := f(); err != nil {
		s.failReq(req, err.Error())
		return false
	}
	return true
}

func (s *dapServer) source(file string) *dap.Source {
	path := file
	if s.cfg.Session.Path != nil {
		path = s.cfg.Session.Path(file)
	}
	return &dap.Source{Name: filepath.Base(file), Path: path}
}

func (s *dapServer) setBreakpoints(r *dap.SetBreakpointsRequest) {
	lines := r.Arguments.Lines
	if len(r.Arguments.Breakpoints) > 0 {
		lines = nil
		for _, b := range r.Arguments.Breakpoints {
			lines = append(lines, b.Line)
		}
	}
	out := make([]dap.Breakpoint, len(lines))
	if s.sess == nil {
		for i, l := range lines {
			out[i] = dap.Breakpoint{Line: l, Message: "launch the program first"}
		}
	} else {
		for i, res := range s.sess.SetLineBreakpoints(r.Arguments.Source.Path, lines) {
			if res.Err != nil {
				out[i] = dap.Breakpoint{Line: res.Line, Message: res.Err.Error()}
				continue
			}
			bp := res.Breakpoint
			out[i] = dap.Breakpoint{Id: bp.ID, Verified: true, Line: bp.Line, Source: s.source(bp.File)}
			if bp.Line != bp.Asked {
				out[i].Message = bp.Describe()
			}
		}
	}
	s.send(&dap.SetBreakpointsResponse{Response: response(r), Body: dap.SetBreakpointsResponseBody{Breakpoints: out}})
}

func (s *dapServer) setFunctionBreakpoints(r *dap.SetFunctionBreakpointsRequest) {
	names := make([]string, len(r.Arguments.Breakpoints))
	for i, b := range r.Arguments.Breakpoints {
		names[i] = b.Name
	}
	out := make([]dap.Breakpoint, len(names))
	if s.sess == nil {
		for i := range names {
			out[i] = dap.Breakpoint{Message: "launch the program first"}
		}
	} else {
		for i, res := range s.sess.SetCallBreakpoints(names) {
			if res.Err != nil {
				out[i] = dap.Breakpoint{Message: res.Err.Error()}
				continue
			}
			out[i] = dap.Breakpoint{Id: res.Breakpoint.ID, Verified: true}
		}
	}
	s.send(&dap.SetFunctionBreakpointsResponse{Response: response(r), Body: dap.SetFunctionBreakpointsResponseBody{Breakpoints: out}})
}

// current returns the stop the run waits at, or sends req an error response.
func (s *dapServer) current(req dap.RequestMessage) *Stop {
	s.mu.Lock()
	stop := s.cur
	s.mu.Unlock()
	if stop == nil || s.sess == nil || s.sess.Current() != stop {
		s.failReq(req, "the run is not stopped")
		return nil
	}
	return stop
}

func (s *dapServer) stackTrace(r *dap.StackTraceRequest) {
	stop := s.current(r)
	if stop == nil {
		return
	}
	stack := stop.Stack
	if stop.Reason == ReasonAsk {
		stack = append(stack[:len(stack):len(stack)], Frame{Kind: FrameAsk, Name: "question: " + cut(stop.Ask.Message, 80), At: stop.Ask.At})
	}
	frames := make([]dap.StackFrame, 0, len(stack))
	s.mu.Lock()
	for i := len(stack) - 1; i >= 0; i-- {
		f := stack[i]
		id := i + 1
		s.frames[id] = f
		file, line, col := splitAt(f.At)
		sf := dap.StackFrame{Id: id, Name: f.Name, Line: line, Column: col}
		if file != "" {
			sf.Source = s.source(file)
		}
		frames = append(frames, sf)
	}
	s.mu.Unlock()
	start := min(r.Arguments.StartFrame, len(frames))
	frames = frames[start:]
	if lv := r.Arguments.Levels; lv > 0 && lv < len(frames) {
		frames = frames[:lv]
	}
	s.send(&dap.StackTraceResponse{Response: response(r), Body: dap.StackTraceResponseBody{StackFrames: frames, TotalFrames: len(stack)}})
}

// handle registers v as an expandable value of the current stop and returns its reference;
// 0 for a value with nothing inside.
func (s *dapServer) handleOf(v any, data bool) int {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 && !data {
			return 0
		}
	case []any:
		if len(x) == 0 {
			return 0
		}
	default:
		if !data {
			return 0
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := len(s.vars) + 1
	s.vars[id] = &varNode{value: v, data: data}
	return id
}

func (s *dapServer) scopes(r *dap.ScopesRequest) {
	stop := s.current(r)
	if stop == nil {
		return
	}
	s.mu.Lock()
	f, ok := s.frames[r.Arguments.FrameId]
	s.mu.Unlock()
	if !ok {
		s.failReq(r, fmt.Sprintf("no frame %d in this stop", r.Arguments.FrameId))
		return
	}
	var scopes []dap.Scope
	add := func(name string, v any, data bool) {
		scopes = append(scopes, dap.Scope{Name: name, VariablesReference: s.handleOf(v, data)})
	}
	st := stop.Step
	// Only the frames of the step's own pipeline see its context; a calling pipeline's
	// context is its own, and not at hand here.
	if st != nil && f.own {
		ctx := st.Context()
		switch f.Kind {
		case FrameRequest:
			add("Request", map[string]any{"target": st.Target, "model": st.Model, "request": st.Request, "system": st.System, "offered": anyList(st.Offered)}, false)
			add("Conversation", plainMessages(st.Messages), false)
		case FrameTool:
			var args any
			json.Unmarshal(st.Args, &args)
			add("Call", map[string]any{"target": st.Target, "agent": st.Agent, "args": args, "policies": decisionText(st.Decision)}, false)
			if len(st.Messages) > 0 {
				add("Conversation", plainMessages(st.Messages), false)
			}
		case FrameStage:
			if st.Kind == runtime.StepStage {
				add("Stage", map[string]any{"value": st.Value, "target": st.Target}, false)
			}
		}
		data, _ := ctx["data"].(map[string]any)
		scopes = append(scopes, dap.Scope{Name: "context.data", VariablesReference: s.handleOf(data, st.Kind == runtime.StepStage)})
		add("context.meta", ctx["meta"], false)
		add("context.inputs", ctx["inputs"], false)
	}
	if scopes == nil {
		scopes = []dap.Scope{}
	}
	s.send(&dap.ScopesResponse{Response: response(r), Body: dap.ScopesResponseBody{Scopes: scopes}})
}

func anyList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (s *dapServer) variables(r *dap.VariablesRequest) {
	if s.current(r) == nil {
		return
	}
	s.mu.Lock()
	n, ok := s.vars[r.Arguments.VariablesReference]
	s.mu.Unlock()
	if !ok {
		s.failReq(r, fmt.Sprintf("no variables %d in this stop", r.Arguments.VariablesReference))
		return
	}
	vars := []dap.Variable{}
	child := func(name string, v any) {
		vars = append(vars, dap.Variable{Name: name, Value: summary(v), Type: kindOf(v), VariablesReference: s.handleOf(v, false)})
	}
	switch x := n.value.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			child(k, x[k])
		}
	case []any:
		for i, v := range x {
			child(strconv.Itoa(i), v)
		}
	}
	s.send(&dap.VariablesResponse{Response: response(r), Body: dap.VariablesResponseBody{Variables: vars}})
}

// summary is how a variable's value reads in an editor's list.
func summary(v any) string {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			return compact(v, 80)
		}
	case []any:
		return fmt.Sprintf("[%d items] %s", len(x), compact(v, 60))
	}
	return compact(v, 1000)
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64, int, json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func (s *dapServer) evaluate(r *dap.EvaluateRequest) {
	stop := s.current(r)
	if stop == nil {
		return
	}
	expr := strings.TrimSpace(r.Arguments.Expression)
	reply := func(result string, v any) {
		s.send(&dap.EvaluateResponse{Response: response(r), Body: dap.EvaluateResponseBody{Result: result, Type: kindOf(v), VariablesReference: s.handleOf(v, false)}})
	}
	repl := r.Arguments.Context == "repl" || r.Arguments.Context == ""
	if stop.Reason == ReasonAsk {
		if !repl {
			s.failReq(r, "the run waits for an answer: type it in the debug console")
			return
		}
		var answer any = expr
		if stop.Ask.Channel != runtime.ChannelApproval {
			answer = ParseValue(expr)
		}
		if err := s.sess.Answer(answer); err != nil {
			s.failReq(r, err.Error())
			return
		}
		reply("answered: "+compact(answer, maxSummary), nil)
		return
	}
	st := stop.Step
	if name, arg, _ := strings.Cut(expr, " "); repl && (name == "set" || name == "skip") {
		arg = strings.TrimSpace(arg)
		switch name {
		case "set":
			path, value, ok := strings.Cut(arg, " ")
			if !ok || strings.TrimSpace(value) == "" {
				s.failReq(r, "set NAME VALUE: give a name of context.data and its new value")
				return
			}
			v := ParseValue(value)
			if err := st.Set(path, v); err != nil {
				s.failReq(r, fmt.Sprintf("cannot set it: %v", err))
				return
			}
			reply(fmt.Sprintf("context.data.%s = %s (set by a person; the record says so)", strings.TrimPrefix(path, "context.data."), compact(v, maxSummary)), nil)
		case "skip":
			if arg == "" {
				s.failReq(r, "skip VALUE: give the value the call returns instead")
				return
			}
			v := ParseValue(arg)
			if err := st.Skip(v); err != nil {
				s.failReq(r, fmt.Sprintf("cannot skip it: %v", err))
				return
			}
			reply(fmt.Sprintf("%s answered with %s instead of running", st.Target, compact(v, maxSummary)), nil)
			s.sess.Next()
		}
		return
	}
	if expr == "" {
		s.failReq(r, "give an expression over context, as conditions are written (context.data.report)")
		return
	}
	v, err := st.Eval(expr)
	if err != nil {
		s.failReq(r, fmt.Sprintf("cannot evaluate it: %v", err))
		return
	}
	reply(summary(v), v)
}

func (s *dapServer) setVariable(r *dap.SetVariableRequest) {
	stop := s.current(r)
	if stop == nil {
		return
	}
	s.mu.Lock()
	n, ok := s.vars[r.Arguments.VariablesReference]
	s.mu.Unlock()
	if !ok || !n.data {
		s.failReq(r, "only the entries of context.data can be set, at a stop before a stage")
		return
	}
	v := ParseValue(r.Arguments.Value)
	if err := stop.Step.Set(r.Arguments.Name, v); err != nil {
		s.failReq(r, fmt.Sprintf("cannot set it: %v", err))
		return
	}
	s.send(&dap.SetVariableResponse{Response: response(r), Body: dap.SetVariableResponseBody{Value: summary(v), Type: kindOf(v), VariablesReference: s.handleOf(v, false)}})
}
