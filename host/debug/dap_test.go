package debug_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-dap"

	"halolang.dev/halo/host/debug"
	"halolang.dev/halo/host/debug/daptest"
	"halolang.dev/halo/host/runtime"
)

// serveDAP runs ServeDAP in-process on pipes, launching flowSrc's Tidy with flowMocks; it
// returns the client and a function that waits for ServeDAP's error.
func serveDAP(t *testing.T) (*daptest.Client, func() error, func() *world) {
	t.Helper()
	return serveDAPOf(t, flowSrc, flowMocks, "Tidy")
}

// serveDAPOf is serveDAP launching pipeline of src (as flow.halo) with mocks.
func serveDAPOf(t *testing.T, src, mocks, pipeline string) (*daptest.Client, func() error, func() *world) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var w *world
	errc := make(chan error, 1)
	go func() {
		err := debug.ServeDAP(context.Background(), debug.DAPConfig{In: inR, Out: outW,
			Launch: func(_ context.Context, args debug.LaunchArgs, s *debug.Session) (*debug.Launched, error) {
				if args.Program != "flow.halo" {
					return nil, errors.New("flow.halo:1:1: error: no such program [IO]")
				}
				w = buildWorld(t, src, mocks, s)
				return &debug.Launched{Runtime: w.rt, Pipeline: pipeline, Inputs: args.Inputs}, nil
			}})
		outW.Close()
		errc <- err
	}()
	c := daptest.New(t, outR, inW)
	t.Cleanup(func() { inW.Close() })
	return c, func() error { inW.Close(); c.Wait(); return <-errc }, func() *world { return w }
}

// TestDAPMalformedMessages: bytes that are not a message, JSON that does not decode, a
// request nobody knows, a message that is not a request: each gets an error response, and
// the session goes on.
func TestDAPMalformedMessages(t *testing.T) {
	c, wait, _ := serveDAP(t)
	c.Call("initialize", map[string]any{"adapterID": "halo"})
	c.Raw("Content-Type: text\r\n\r\n")
	if er := c.ErrorResponse(0); !strings.Contains(er.Message, "malformed message") {
		t.Errorf("bad header: %q", er.Message)
	}
	c.Frame(`{"seq": 4`)
	if er := c.ErrorResponse(0); !strings.Contains(er.Message, "cannot decode the message") {
		t.Errorf("bad JSON: %q", er.Message)
	}
	er := c.Fail("frobnicate", nil)
	if er.Command != "frobnicate" || !strings.Contains(er.Message, "cannot decode the message") {
		t.Errorf("unknown request: %+v", er.Response)
	}
	c.Frame(`{"seq": 9, "type": "event", "event": "stopped", "body": {}}`)
	if er := c.ErrorResponse(9); !strings.Contains(er.Message, "expects requests") {
		t.Errorf("an event: %q", er.Message)
	}
	if er := c.Fail("setBreakpoints", map[string]any{"source": "not an object"}); !strings.Contains(er.Message, "cannot decode") {
		t.Errorf("arguments of the wrong type: %q", er.Message)
	}
	if er := c.Fail("launch", map[string]any{}); !strings.Contains(er.Message, `set "program"`) {
		t.Errorf("launch without a program: %q", er.Message)
	}
	if er := c.Fail("launch", map[string]any{"program": "other.halo"}); !strings.Contains(er.Message, "no such program") {
		t.Errorf("a program that does not load: %q", er.Message)
	}
	if er := c.Fail("continue", map[string]any{"threadId": 1}); !strings.Contains(er.Message, "launch a program first") {
		t.Errorf("continue before launch: %q", er.Message)
	}
	// The session went on through all of it.
	c.Call("threads", nil)
	c.Call("disconnect", nil)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestDAPSession: breakpoints set through the protocol stop the run; evaluate, setVariable
// and a skip from the debug console work at the stops; the run's output and exit code end
// the session.
func TestDAPSession(t *testing.T) {
	c, wait, _ := serveDAP(t)
	c.Call("initialize", map[string]any{"adapterID": "halo"})
	c.Call("launch", map[string]any{"program": "flow.halo", "inputs": map[string]any{"task": "merge"}})
	c.Event("initialized")
	bps := c.Call("setBreakpoints", map[string]any{"source": map[string]any{"path": "flow.halo"}, "breakpoints": []any{map[string]any{"line": 15}, map[string]any{"line": 40}}}).(*dap.SetBreakpointsResponse)
	if b := bps.Body.Breakpoints; len(b) != 2 || !b[0].Verified || b[0].Line != 16 || !strings.Contains(b[0].Message, "line 15 has no stage") || b[1].Verified {
		t.Errorf("breakpoints %+v", b)
	}
	fbs := c.Call("setFunctionBreakpoints", map[string]any{"breakpoints": []any{map[string]any{"name": "Files.write"}, map[string]any{"name": "Nope.x"}}}).(*dap.SetFunctionBreakpointsResponse)
	if b := fbs.Body.Breakpoints; len(b) != 2 || !b[0].Verified || b[1].Verified || !strings.Contains(b[1].Message, "no tool or agent Nope") {
		t.Errorf("function breakpoints %+v", b)
	}
	c.Call("configurationDone", nil)
	st := c.Event("stopped").(*dap.StoppedEvent)
	if st.Body.Reason != "function breakpoint" {
		t.Fatalf("stopped %+v", st.Body)
	}
	if er := c.Fail("evaluate", map[string]any{"expression": "set limit 1", "context": "repl"}); !strings.Contains(er.Message, "values are set before a stage") {
		t.Errorf("set at a tool call: %q", er.Message)
	}
	ev := c.Call("evaluate", map[string]any{"expression": `skip {"written": 7}`, "context": "repl"}).(*dap.EvaluateResponse)
	if !strings.Contains(ev.Body.Result, `answered with {"written":7}`) {
		t.Errorf("skip: %q", ev.Body.Result)
	}
	c.Event("stopped") // the next request of the same agent call
	c.Call("continue", map[string]any{"threadId": 1})
	st = c.Event("stopped").(*dap.StoppedEvent)
	if st.Body.Reason != "breakpoint" {
		t.Fatalf("stopped %+v", st.Body)
	}
	tr := c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse)
	sc := c.Call("scopes", map[string]any{"frameId": tr.Body.StackFrames[0].Id}).(*dap.ScopesResponse)
	data := 0
	for _, s := range sc.Body.Scopes {
		if s.Name == "context.data" {
			data = s.VariablesReference
		}
	}
	if data == 0 {
		t.Fatalf("scopes %+v", sc.Body.Scopes)
	}
	c.Call("setVariable", map[string]any{"variablesReference": data, "name": "limit", "value": "12"})
	if er := c.Fail("evaluate", map[string]any{"expression": "((", "context": "watch"}); !strings.Contains(er.Message, "cannot evaluate it") {
		t.Errorf("bad expression: %q", er.Message)
	}
	c.Call("continue", map[string]any{"threadId": 1})
	out := c.Event("output").(*dap.OutputEvent)
	if out.Body.Category != "stdout" || !strings.Contains(out.Body.Output, `"limit": 12`) {
		t.Errorf("output %+v", out.Body)
	}
	if ex := c.Event("exited").(*dap.ExitedEvent); ex.Body.ExitCode != 0 {
		t.Errorf("exit code %d", ex.Body.ExitCode)
	}
	c.Event("terminated")
	c.Call("disconnect", nil)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestDAPEditorGone: the input ending while the run is stopped stops the run; ServeDAP
// returns once it has ended, and the record says it was stopped.
func TestDAPEditorGone(t *testing.T) {
	c, wait, w := serveDAP(t)
	c.Call("initialize", map[string]any{"adapterID": "halo"})
	c.Call("launch", map[string]any{"program": "flow.halo", "inputs": map[string]any{"task": "merge"}, "stopOnEntry": true})
	c.Event("initialized")
	c.Call("configurationDone", nil)
	if st := c.Event("stopped").(*dap.StoppedEvent); st.Body.Reason != "entry" {
		t.Fatalf("stopped %+v", st.Body)
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	store := w().store
	id, _ := store.Latest()
	rec, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != runtime.Failed || rec.Error.Code != debug.CodeStopped || rec.Error.Message != "the run was stopped in the debugger: the editor went away" {
		t.Errorf("the record says %s %+v", rec.Status, rec.Error)
	}
}

// TestDAPQuestionsMetaAndPause: context.meta and context.inputs are variables; a |! yield
// stops with reason pause ("waits for an answer"), and the line typed in the debug console
// answers it (a watch cannot); a pause request stops the run at its next step; continuing
// past a question unanswered pauses the run, and the session ends with exit code 3.
func TestDAPQuestionsMetaAndPause(t *testing.T) {
	const src = `pipeline Ask(topic: String) -> Result:
  topic |! yield("What about {{topic}}?") as answer
    |> System.Value({ answer: answer })
    |! yield("And then?") as more
    |> System.Value({ answer: answer, more: more })
`
	c, wait, _ := serveDAPOf(t, src, "", "Ask")
	c.Call("initialize", map[string]any{"adapterID": "halo"})
	c.Call("launch", map[string]any{"program": "flow.halo", "inputs": map[string]any{"topic": "cats"}, "stopOnEntry": true})
	c.Event("initialized")
	c.Call("configurationDone", nil)
	if st := c.Event("stopped").(*dap.StoppedEvent); st.Body.Reason != "entry" {
		t.Fatalf("stopped %+v", st.Body)
	}
	frames := c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if v := c.Scope(frames[0].Id, "context.inputs")["topic"]; v.Value != `"cats"` {
		t.Errorf("context.inputs.topic: %+v", v)
	}
	if meta := c.Scope(frames[0].Id, "context.meta"); len(meta) == 0 {
		t.Error("context.meta has no variables")
	}

	c.Call("continue", map[string]any{"threadId": 1})
	st := c.Event("stopped").(*dap.StoppedEvent)
	if st.Body.Reason != "pause" || st.Body.Description != "waits for an answer" {
		t.Fatalf("stopped at the yield %+v", st.Body)
	}
	if out := c.Event("output").(*dap.OutputEvent); !strings.Contains(out.Body.Output, "the run asks at flow.halo:2:9: What about cats?") {
		t.Errorf("the question in the console: %+v", out.Body)
	}
	if er := c.Fail("evaluate", map[string]any{"expression": "1", "context": "watch"}); !strings.Contains(er.Message, "type it in the debug console") {
		t.Errorf("a watch at a question: %q", er.Message)
	}
	c.Call("pause", map[string]any{"threadId": 1})
	ev := c.Call("evaluate", map[string]any{"expression": `{"more": 2}`, "context": "repl"}).(*dap.EvaluateResponse)
	if ev.Body.Result != `answered: {"more":2}` {
		t.Errorf("the answer: %q", ev.Body.Result)
	}
	// Paused: the run stops at its next step, stage 2.
	if st := c.Event("stopped").(*dap.StoppedEvent); st.Body.Reason != "pause" || st.Body.Description == "waits for an answer" {
		t.Fatalf("stopped after the pause request %+v", st.Body)
	}
	frames = c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if v := c.Scope(frames[0].Id, "context.data")["answer"]; !strings.Contains(v.Value, "more") {
		t.Errorf("context.data.answer after the answer: %+v", v)
	}

	c.Call("continue", map[string]any{"threadId": 1})
	if st := c.Event("stopped").(*dap.StoppedEvent); st.Body.Description != "waits for an answer" {
		t.Fatalf("stopped at the second yield %+v", st.Body)
	}
	c.Event("output") // the second question
	c.Call("continue", map[string]any{"threadId": 1})
	if out := c.Event("output").(*dap.OutputEvent); !strings.Contains(out.Body.Output, "paused, waiting for") || !strings.Contains(out.Body.Output, "halo resume flow.halo") {
		t.Errorf("output %+v", out.Body)
	}
	if ex := c.Event("exited").(*dap.ExitedEvent); ex.Body.ExitCode != 3 {
		t.Errorf("exit code %d, want 3 (paused)", ex.Body.ExitCode)
	}
	c.Event("terminated")
	c.Call("disconnect", nil)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}

// TestDAPViolationFilter: with the exception filter violation on, a policy violation stops
// the run (reason exception, the policy and rule in its text); without it, it does not.
func TestDAPViolationFilter(t *testing.T) {
	mocks := strings.Replace(flowMocks, `"Merged."`, `{ "$useTool": "Files.delete", "args": { "path": "keep.md" } }, "Merged."`, 1)
	for _, on := range []bool{true, false} {
		c, wait, _ := serveDAPOf(t, flowSrc, mocks, "Tidy")
		c.Call("initialize", map[string]any{"adapterID": "halo"})
		c.Call("launch", map[string]any{"program": "flow.halo", "inputs": map[string]any{"task": "merge"}})
		c.Event("initialized")
		if on {
			c.Call("setExceptionBreakpoints", map[string]any{"filters": []string{"violation"}})
		}
		c.Call("configurationDone", nil)
		if on {
			st := c.Event("stopped").(*dap.StoppedEvent)
			if st.Body.Reason != "exception" || !strings.Contains(st.Body.Text, "policy Careful (DenyArgs, phase tool)") {
				t.Fatalf("stopped %+v", st.Body)
			}
			c.Call("continue", map[string]any{"threadId": 1})
		}
		if ex := c.Event("exited").(*dap.ExitedEvent); ex.Body.ExitCode != 0 {
			t.Errorf("exit code %d", ex.Body.ExitCode)
		}
		c.Call("disconnect", nil)
		if err := wait(); err != nil {
			t.Fatal(err)
		}
	}
}
