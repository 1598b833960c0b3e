package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-dap"

	"halolang.dev/halo/host/debug/daptest"
)

const dapFlow = `policy Careful : AllowTools("Files.*") & ApproveEffects(write)

tool Files : Workspace("./notes", write: true)

agent Clerk [openai/gpt-4o-mini, max_steps: 5]
  equips Files
  requires Careful

pipeline Tidy(task: String) -> Result:
  task |> Clerk.work("Merge the duplicate notes.", tools: [Files]) as report

    |> Files.read(path: "notes.md") as notes
    |> System.Value({ report: report, notes: notes })
`

const dapMocks = `{
  "Clerk.work": [
    { "$useTool": "Files.read", "args": { "path": "notes.md" } },
    "Merged 2 notes."
  ]
}`

// dapProject writes a project and starts `halo debug --dap` in it, its stdin and stdout
// the protocol; it returns the client, the process and its stderr.
func dapProject(t *testing.T) (string, *daptest.Client, *exec.Cmd, io.WriteCloser, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"flow.halo": dapFlow, "mocks.json": dapMocks, "notes/notes.md": "a\nb\na\n"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("halo", "debug", "--dap")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("halo debug --dap's stderr:\n%s", stderr.String())
		}
	})
	return dir, daptest.New(t, out, in), cmd, in, &stderr
}

// waitExit waits for the adapter to exit and returns its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		t.Fatal("halo debug --dap did not exit")
	}
	return -1
}

// TestDAPDebugsARun drives the real `halo debug --dap` as an editor does: a breakpoint on
// a line (moved to the next stage, saying so), a stop there, the flowing value and
// context.data read as variables, a step into the agent call (its model request on the stack
// below the stage and the pipeline, the conversation as a variable), an evaluation, a
// malformed message answered with an error response while the session goes on, and a
// continue to the end.
func TestDAPDebugsARun(t *testing.T) {
	dir, c, cmd, _, _ := dapProject(t)
	flow := filepath.Join(dir, "flow.halo")
	init := c.Call("initialize", map[string]any{"adapterID": "halo", "linesStartAt1": true, "columnsStartAt1": true}).(*dap.InitializeResponse)
	if !init.Body.SupportsConfigurationDoneRequest || !init.Body.SupportsFunctionBreakpoints || len(init.Body.ExceptionBreakpointFilters) != 1 {
		t.Errorf("capabilities %+v", init.Body)
	}
	c.Call("launch", map[string]any{"program": flow, "pipeline": "Tidy", "inputs": map[string]any{"task": "merge"}, "mocks": "mocks.json"})
	c.Event("initialized")
	bps := c.Call("setBreakpoints", map[string]any{"source": map[string]any{"path": flow}, "breakpoints": []any{map[string]any{"line": 9}}}).(*dap.SetBreakpointsResponse)
	if b := bps.Body.Breakpoints; len(b) != 1 || !b[0].Verified || b[0].Line != 10 || !strings.Contains(b[0].Message, "line 9 has no stage; the next stage is on line 10") {
		t.Fatalf("breakpoints %+v", bps.Body.Breakpoints)
	}
	c.Call("setExceptionBreakpoints", map[string]any{"filters": []string{"violation"}})
	c.Call("configurationDone", nil)

	st := c.Event("stopped").(*dap.StoppedEvent)
	if st.Body.Reason != "breakpoint" || len(st.Body.HitBreakpointIds) != 1 {
		t.Fatalf("stopped %+v", st.Body)
	}
	threads := c.Call("threads", nil).(*dap.ThreadsResponse)
	if len(threads.Body.Threads) != 1 || threads.Body.Threads[0].Name != "pipeline Tidy" {
		t.Errorf("threads %+v", threads.Body)
	}
	frames := c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if names := frameNames(frames); names != "stage Clerk.work < pipeline Tidy" {
		t.Errorf("stack: %s", names)
	}
	if f := frames[0]; f.Line != 10 || f.Source == nil || f.Source.Path != flow {
		t.Errorf("the stage's frame: %+v %+v", f, f.Source)
	}
	vars := c.Scope(frames[0].Id, "context.data")
	if v := vars["task"]; v.Value != `"merge"` || v.Type != "string" {
		t.Errorf("context.data.task: %+v", v)
	}
	if v := c.Scope(frames[0].Id, "Stage")["value"]; v.Value != `"merge"` {
		t.Errorf("the flowing value: %+v", v)
	}

	// A malformed message gets an error response, and the session goes on.
	c.Raw("Content-Length: 3\r\n\r\n{{{")
	if er := c.ErrorResponse(0); !strings.Contains(er.Message, "cannot decode the message") {
		t.Errorf("malformed: %q", er.Message)
	}

	c.Call("stepIn", map[string]any{"threadId": 1})
	if st := c.Event("stopped").(*dap.StoppedEvent); st.Body.Reason != "step" {
		t.Fatalf("stopped %+v", st.Body)
	}
	frames = c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if names := frameNames(frames); names != "Clerk.work request 1 < stage Clerk.work < pipeline Tidy" {
		t.Errorf("stack in the agent call: %s", names)
	}
	conv := c.Scope(frames[0].Id, "Conversation")
	if len(conv) != 1 || !strings.Contains(conv["0"].Value, "Merge the duplicate notes.") {
		t.Errorf("the conversation: %+v", conv)
	}
	ev := c.Call("evaluate", map[string]any{"expression": "context.data.task + '!'", "frameId": frames[0].Id, "context": "watch"}).(*dap.EvaluateResponse)
	if ev.Body.Result != `"merge!"` {
		t.Errorf("evaluate: %+v", ev.Body)
	}
	c.Call("next", map[string]any{"threadId": 1})
	c.Event("stopped")
	frames = c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if names := frameNames(frames); names != "Files.read (for Clerk) < stage Clerk.work < pipeline Tidy" {
		t.Errorf("stack at the tool call: %s", names)
	}
	if v := c.Scope(frames[0].Id, "Call")["policies"]; v.Value != `"allowed"` {
		t.Errorf("the call's decision: %+v", v)
	}
	c.Call("stepOut", map[string]any{"threadId": 1})
	c.Event("stopped")
	frames = c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if names := frameNames(frames); names != "stage Files.read < pipeline Tidy" || frames[0].Line != 12 {
		t.Errorf("stack after step out: %s", names)
	}

	c.Call("continue", map[string]any{"threadId": 1})
	out := c.Event("output").(*dap.OutputEvent)
	if out.Body.Category != "stdout" || !strings.Contains(out.Body.Output, `"report": "Merged 2 notes."`) {
		t.Errorf("output %+v", out.Body)
	}
	if ex := c.Event("exited").(*dap.ExitedEvent); ex.Body.ExitCode != 0 {
		t.Errorf("exit code %d", ex.Body.ExitCode)
	}
	c.Event("terminated")
	c.Call("disconnect", nil)
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("halo debug --dap exited %d", code)
	}
	// The run was saved as any run is: halo replay finds it.
	replay := exec.Command("halo", "replay", "flow.halo", "last")
	replay.Dir = dir
	if b, err := replay.CombinedOutput(); err != nil || !strings.Contains(string(b), "Merged 2 notes.") {
		t.Errorf("halo replay: %v\n%s", err, b)
	}
}

// TestDAPEditorGoneStopsTheRun: when the editor goes away (its end of stdin closes) while the
// run is stopped at a tool call whose plugin runs, the run is stopped with its plugin, its
// record says so, and the adapter exits.
func TestDAPEditorGoneStopsTheRun(t *testing.T) {
	dir, c, cmd, in, _ := dapProject(t)
	c.Call("initialize", map[string]any{"adapterID": "halo"})
	c.Call("launch", map[string]any{"program": "flow.halo", "inputs": map[string]any{"task": "merge"}, "mocks": "mocks.json", "events": "ev.jsonl", "cwd": dir})
	c.Event("initialized")
	c.Call("setFunctionBreakpoints", map[string]any{"breakpoints": []any{map[string]any{"name": "Files.read"}}})
	c.Call("configurationDone", nil)
	c.Event("stopped") // the agent's Files.read
	c.Call("continue", map[string]any{"threadId": 1})
	c.Event("stopped") // the pipeline's Files.read, its plugin started
	frames := c.Call("stackTrace", map[string]any{"threadId": 1}).(*dap.StackTraceResponse).Body.StackFrames
	if names := frameNames(frames); names != "Files.read < stage Files.read < pipeline Tidy" {
		t.Fatalf("stack: %s", names)
	}
	kids := descendants(cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("halo started no plugin for Files")
	}
	in.Close()
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("halo debug --dap exited %d", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range kids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d that halo started outlived it", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ev, err := os.ReadFile(filepath.Join(dir, "ev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ev, []byte(`"status":"failed","error":{"code":"DEBUG_STOPPED","message":"the run was stopped in the debugger: the editor went away"`)) {
		t.Errorf("the run's events do not say it was stopped:\n%s", ev)
	}
	// Its record says so.
	show := exec.Command("halo", "runs", "show", "last", "--json")
	show.Dir = dir
	if b, err := show.CombinedOutput(); err != nil || !strings.Contains(string(b), `"message": "the run was stopped in the debugger: the editor went away"`) {
		t.Errorf("halo runs show: %v\n%s", err, b)
	}
	// halo replay finds it, with the calls it made.
	replay := exec.Command("halo", "replay", "flow.halo", "last", "--json")
	replay.Dir = dir
	b, _ := replay.CombinedOutput()
	if !strings.Contains(string(b), `"target": "Files.read"`) {
		t.Errorf("halo replay of the stopped run:\n%s", b)
	}
}

func frameNames(frames []dap.StackFrame) string {
	names := make([]string, len(frames))
	for i, f := range frames {
		names[i] = f.Name
	}
	return strings.Join(names, " < ")
}
