package serve_test

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/telemetry/otlptest"
)

// GET /api/runs/{id}/trace is the run's trace as OTLP JSON, made from its record: the run,
// its stages and their model requests.
func TestTraceOfRecord(t *testing.T) {
	e := newEnv(t, opts{token: "s3cret"})
	m := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "go"}}, 200)
	id := m["runId"].(string)
	resp := e.req("GET", "/api/runs/"+id+"/trace", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	spans, err := otlptest.ParseJSON(b)
	if err != nil {
		t.Fatalf("not OTLP JSON: %v\n%s", err, b)
	}
	want := "run Three\n  stage A.one\n    chat gpt-4o\n  stage A.two\n    chat gpt-4o\n  stage A.three\n    chat gpt-4o\n"
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if run, _ := otlptest.Find(spans, "run Three"); run.Attrs["halo.run.id"] != id || run.Resource["service.version"] != "test" {
		t.Errorf("run span %+v", run)
	}
	if c := errCode(e.do("GET", "/api/runs/nope/trace", nil, 404)); c != "RUN_NOT_FOUND" {
		t.Errorf("unknown run: %s", c)
	}
	e.token = ""
	if c := errCode(e.do("GET", "/api/runs/"+id+"/trace", nil, 401)); c != "UNAUTHORIZED" {
		t.Errorf("without the token: %s", c)
	}
}

// GET /api/source gives the text of the files the server serves, and of no other file.
func TestSource(t *testing.T) {
	e := newEnv(t, opts{})
	m := e.do("GET", "/api/source?file=flows.halo", nil, 200)
	if m["file"] != "flows.halo" || m["text"] != src {
		t.Errorf("%v", m)
	}
	for _, name := range []string{"", "../flows.halo", "/etc/passwd", "go.mod", "flows.halo/"} {
		if c := errCode(e.do("GET", "/api/source?file="+name, nil, 404)); c != "NOT_FOUND" {
			t.Errorf("file %q: %s", name, c)
		}
	}
}

// tidyV1 is clerkSrc without the approval: the clerk reads and writes freely.
var tidyV1 = strings.Replace(clerkSrc, ` & ApproveTools("Files.write")`, "", 1)

// POST /api/runs/{id}/replay runs the run again on the files as they are now, answered from
// its recording: unchanged, it matches the run event for event; under a policy added since,
// it says where it diverged (the call the new policy refuses) and what each side did there.
func TestReplayDiverges(t *testing.T) {
	files := tidyV1
	e := newEnv(t, opts{src: tidyV1, reload: func() (*lang.Program, error) {
		f, diags := lang.Parse("flows.halo", []byte(files))
		if err := diags.Err(); err != nil {
			return nil, err
		}
		prog := &lang.Program{Files: []*lang.File{f}}
		return prog, runtime.Validate(prog, nil).Err()
	}})
	e.mocks.SetFunc("Clerk.work", func(req runtime.MockRequest) (any, error) {
		switch req.Step {
		case 1:
			return runtime.UseTool("Files.read", map[string]any{"path": "a.md"}), nil
		case 2:
			return runtime.UseTool("Files.write", map[string]any{"path": "a.md", "text": "tidy"}), nil
		}
		return "done", nil
	})
	e.mocks.SetFunc("Files.read", func(runtime.MockRequest) (any, error) { return "messy", nil })
	e.mocks.SetFunc("Files.write", func(runtime.MockRequest) (any, error) { return "written", nil })
	m := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Tidy", "inputs": map[string]any{"task": "t"}}, 200)
	id := m["runId"].(string)
	recorded := e.do("GET", "/api/runs/"+id+"/events", nil, 200)["events"].([]any)

	same := e.do("POST", "/api/runs/"+id+"/replay", map[string]any{}, 200)
	if same["status"] != "completed" || same["output"] != "done" || same["diverged"] != nil {
		t.Errorf("the unchanged replay: %v", same)
	}
	if n := len(same["events"].([]any)); n != len(recorded) {
		t.Errorf("the replay has %d events, the run %d", n, len(recorded))
	}

	files = strings.Replace(tidyV1, `AllowTools("Files.*")`, `AllowTools("Files.*") & DenyArgs("Files.write", "text", "tidy")`, 1)
	changed := e.do("POST", "/api/runs/"+id+"/replay", map[string]any{}, 200)
	d, ok := changed["diverged"].(map[string]any)
	if !ok {
		t.Fatalf("no divergence: %v", changed)
	}
	rec, _ := d["recorded"].(map[string]any)
	rep, _ := d["replayed"].(map[string]any)
	if rec["type"] != "tool" || rec["target"] != "Files.write" || rep["type"] != "violation" || rep["rule"] != "DenyArgs" {
		t.Errorf("diverged at %v: recorded %v, replayed %v", d["seq"], rec, rep)
	}
	if fmt.Sprint(d["seq"]) != fmt.Sprint(rec["seq"]) || fmt.Sprint(d["seq"]) != fmt.Sprint(rep["seq"]) {
		t.Errorf("seq %v, recorded %v, replayed %v", d["seq"], rec["seq"], rep["seq"])
	}
	// The run itself is as it was.
	if after := e.do("GET", "/api/runs/"+id+"/events", nil, 200)["events"].([]any); len(after) != len(recorded) {
		t.Errorf("the replay changed the run's events: %d, were %d", len(after), len(recorded))
	}

	files = "pipeline Broken("
	if c := errCode(e.do("POST", "/api/runs/"+id+"/replay", map[string]any{}, 409)); c != "SYNTAX" {
		t.Errorf("files that do not parse: %s", c)
	}
	if c := errCode(e.do("POST", "/api/runs/nope/replay", map[string]any{}, 404)); c != "RUN_NOT_FOUND" {
		t.Errorf("unknown run: %s", c)
	}
	if c := errCode(e.do("POST", "/api/runs/"+id+"/replay", `{"x": 1}`, 400)); c != "BAD_JSON" {
		t.Errorf("a body with fields: %s", c)
	}
}

// A run that is still running is not replayed; a replay without a reload runs on the
// program the server serves.
func TestReplayRunning(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	m := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "go"}}, 202)
	id := m["runId"].(string)
	if c := errCode(e.do("POST", "/api/runs/"+id+"/replay", map[string]any{}, 409)); c != "RUN_RECORD" {
		t.Errorf("running: %s", c)
	}
	e.gate <- struct{}{}
	e.waitStatus(id, runtime.Completed)
	r := e.do("POST", "/api/runs/"+id+"/replay", map[string]any{}, 200)
	if r["status"] != "completed" || r["diverged"] != nil {
		t.Errorf("%v", r)
	}
}
