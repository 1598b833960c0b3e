package debug_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/host/debug"
	"halolang.dev/halo/host/runtime"
)

const flowSrc = `policy Careful : AllowTools("Files.*") & ApproveEffects(write) & DenyArgs("Files.delete", "path", "keep")

tool Files : Work()

agent Clerk [openai/gpt-4o-mini, max_steps: 5]
  equips Files
  requires Careful

pipeline Count(text: String) -> Result:
  text |> Files.count(text: text) as n
    |> System.Value(n)

pipeline Tidy(task: String) -> Result:
  task |> Clerk.work("Merge the notes.", tools: [Files]) as report

    |> Count(report) as size
    |> System.Value({ report: report, size: size, limit: context.data.limit })
`

const flowMocks = `{
  "Clerk.work": [
    { "$useTool": "Files.read", "args": { "path": "notes.md" } },
    { "$useTool": "Files.write", "args": { "path": "merged.md", "text": "a" } },
    "Merged."
  ],
  "Files.read": "a\nb\na\n",
  "Files.write": { "written": 1 },
  "Files.count": 7,
  "Files.delete": "deleted"
}`

// a debugging world: one program, its session, its store.
type world struct {
	sess  *debug.Session
	rt    *runtime.Runtime
	store *memStore
}

func newWorld(t *testing.T, src, mocks string) *world {
	t.Helper()
	w := buildWorld(t, src, mocks, debug.New(debug.Config{Source: func(name string) ([]byte, error) {
		if name != "flow.halo" {
			return nil, errors.New("no such file")
		}
		return []byte(src), nil
	}}))
	w.sess.Load(w.rt)
	return w
}

// buildWorld loads src with mocks into a runtime with sess's hooks.
func buildWorld(t *testing.T, src, mocks string, sess *debug.Session) *world {
	t.Helper()
	store := newMemStore()
	cfg := runtime.Config{Store: store}
	if mocks != "" {
		m, err := runtime.ParseMocks([]byte(mocks))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Mocks = m
	}
	sess.Configure(&cfg)
	rt, err := runtime.Load("flow.halo", src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &world{sess: sess, rt: rt, store: store}
}

// console runs the console with lines as what the person types, and returns the transcript
// and how the run ended. Past the last line, the input ends.
func (w *world) console(t *testing.T, pipeline string, inputs map[string]any, lines ...string) (string, *debug.End) {
	t.Helper()
	var out bytes.Buffer
	next := 0
	con := &debug.Console{Session: w.sess, Out: &out, ReadLine: func(prompt string) (string, error) {
		out.WriteString(prompt)
		if next == len(lines) {
			return "", errors.New("the test's lines ended")
		}
		l := lines[next]
		next++
		out.WriteString(l + "\n")
		return l, nil
	}}
	w.sess.Start(context.Background(), pipeline, inputs, true)
	end := con.Run()
	t.Logf("transcript:\n%s", out.String())
	if next != len(lines) {
		t.Errorf("the console read %d of %d lines", next, len(lines))
	}
	return out.String(), end
}

func wantIn(t *testing.T, out string, wants ...string) {
	t.Helper()
	rest := out
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("the transcript lacks %q (in this order)", w)
			return
		}
		rest = rest[i+len(w):]
	}
}

// TestConsoleSteps: n goes stage by stage; s steps into an agent call's model requests and
// tool calls, and into a called pipeline's stages; o steps out of them; c runs to the end.
func TestConsoleSteps(t *testing.T) {
	w := newWorld(t, flowSrc, flowMocks)
	out, end := w.console(t, "Tidy", map[string]any{"task": "merge"},
		"s", "s", "n", "o", "s", "s", "c")
	if end.Err != nil || end.Result.Status != runtime.Completed {
		t.Fatalf("end %+v %+v", end.Err, end.Result)
	}
	wantIn(t, out,
		"stopped before stage 1 of pipeline Tidy at flow.halo:14:8",
		`   14 |   task |> Clerk.work("Merge the notes.", tools: [Files]) as report`,
		`value: "merge"`, `context.data: {"task":"merge"}`,
		"(halo) s", "stopped before model request 1 of Clerk.work (openai/gpt-4o-mini) at flow.halo:14:8",
		"(halo) s", "stopped before the call of Files.read, asked for by Clerk's model at flow.halo:14:8",
		`arguments: {"path":"notes.md"}`, "policies: allowed",
		"(halo) n", "stopped before model request 2 of Clerk.work",
		"(halo) o", "stopped before stage 2 of pipeline Tidy at flow.halo:16:5",
		"(halo) s", "stopped before stage 1 of pipeline Count (pipeline Count, called at flow.halo:16:8) at flow.halo:10:8",
		"(halo) s", "stopped before the call of Files.count (pipeline Count, called at flow.halo:16:8) at flow.halo:10:8",
		"(halo) c")
	if strings.Contains(out, "stopped before the call of Files.write") {
		t.Error("c stopped where no breakpoint is")
	}
	// The blank line after stage 1 is not its source.
	if strings.Contains(out, "   15 |") {
		t.Error("a blank line was shown as a stage's source")
	}
}

// TestConsoleBreakpoints: b LINE (moved to the next stage, and saying so), b Tool.method,
// b violation; b lists them and d deletes one.
func TestConsoleBreakpoints(t *testing.T) {
	src := strings.Replace(flowSrc, `"Merged."`, `"Merged."`, 1)
	mocks := strings.Replace(flowMocks, `"Merged."`, `{ "$useTool": "Files.delete", "args": { "path": "keep.md" } }, "Merged."`, 1)
	w := newWorld(t, src, mocks)
	out, end := w.console(t, "Tidy", map[string]any{"task": "merge"},
		"b 15", "b 11", "b Files.write", "b violation", "b", "d 2", "c", "c", "c", "c")
	if end.Result.Status != runtime.Completed {
		t.Fatalf("end %+v", end.Result)
	}
	wantIn(t, out,
		"breakpoint 1 at flow.halo:16 (line 15 has no stage; the next stage is on line 16)",
		"breakpoint 2 at flow.halo:11",
		"breakpoint 3 before every call of Files.write",
		"breakpoint 4 at every policy violation",
		"(halo) b\nbreakpoint 1 at flow.halo:16", "breakpoint 4 at every policy violation",
		"deleted breakpoint 2",
		"(halo) c", "stopped before the call of Files.write, asked for by Clerk's model at flow.halo:14:8 (breakpoint 3)",
		"(halo) c", "stopped at a policy violation at flow.halo:14:8: policy Careful (DenyArgs, phase tool) on Files.delete",
		"(halo) c", "stopped before stage 2 of pipeline Tidy at flow.halo:16:5 (breakpoint 1)",
		"(halo) c")
}

// TestConsoleBadInput: an unknown command, an expression that does not parse, a breakpoint
// nowhere, a value that cannot be set: each says so and asks again.
func TestConsoleBadInput(t *testing.T) {
	w := newWorld(t, flowSrc, flowMocks)
	out, end := w.console(t, "Tidy", map[string]any{"task": "merge"},
		"frobnicate", "p (((", "p", "b 99", "b Nothing.x", "b Clerk", "b other.halo:3", "d 7", "d x",
		"skip 1", "set", "set task.x 1", "p context.data.task", "", "n", "", "q")
	if end.Result == nil || end.Result.Status != runtime.Failed || end.Result.Error.Code != debug.CodeStopped {
		t.Fatalf("end %+v", end)
	}
	wantIn(t, out,
		`unknown command "frobnicate"; type h for the commands`,
		`cannot evaluate it: expression "(((": unexpected token`,
		"p EXPR: give an expression",
		"no breakpoint: flow.halo has no stage on line 99 or after it",
		"no breakpoint: this program declares no tool or agent Nothing",
		"no breakpoint: Clerk is an agent: name its task, as in Clerk.task",
		"no breakpoint: other.halo is not a file of this program (its files: flow.halo)",
		"there is no breakpoint 7", "d N: N is a breakpoint's number",
		"cannot skip it: only a tool call can be answered instead of run; this step is a stage",
		"set NAME VALUE: give a name of context.data",
		"cannot set it: task is a string, not an object with fields",
		"(halo) p context.data.task\nmerge\n",
		"(halo) \n(halo) n", "stopped before stage 2 of pipeline Tidy",
		"(halo) \n", "stopped before stage 3 of pipeline Tidy",
		"(halo) q")
	rec, err := w.store.Load(end.Result.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != runtime.Failed || rec.Error == nil || rec.Error.Code != debug.CodeStopped || rec.Error.Message != "the run was stopped in the debugger: q" {
		t.Errorf("the record says %s %+v", rec.Status, rec.Error)
	}
}

// TestConsoleSetSkipAndRecord: set changes context.data before a stage, skip answers a tool
// call instead of running it, r shows the record so far; both are marked in the record as set
// by a person, and a replay of the record comes to the same output.
func TestConsoleSetSkipAndRecord(t *testing.T) {
	w := newWorld(t, flowSrc, flowMocks)
	out, end := w.console(t, "Tidy", map[string]any{"task": "merge"},
		"b Files.write", "c", `skip {"written": 42}`, "o", "n", "set limit 3", "set report.x 1", "r", "c")
	if end.Result.Status != runtime.Completed {
		t.Fatalf("end %+v", end.Result)
	}
	wantIn(t, out,
		"(halo) skip {\"written\": 42}", `Files.write answered with {"written":42} instead of running (set by you; the record says so)`,
		"stopped before model request 3 of Clerk.work",
		"(halo) set limit 3", "context.data.limit = 3 (set by you; the record says so)",
		"cannot set it: report is a string, not an object with fields",
		"(halo) r", "tool        flow.halo:14:8  Files.write", "skipped",
		"set         flow.halo:17:5  limit  -> 3  (set by a person)",
		"context.meta: cost $0.000000")
	got := end.Result.Output.(map[string]any)
	if got["limit"] != 3.0 || got["size"] != 7.0 {
		t.Errorf("output %v", got)
	}
	rec, err := w.store.Load(end.Result.RunID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := w.rt.Replay(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != runtime.Completed || rep.Output.(map[string]any)["limit"] != 3.0 {
		t.Errorf("replay %s %v %+v", rep.Status, rep.Output, rep.Error)
	}
}

// TestConsoleAsks: a |! yield, an approval and a ~> listen are asked at the prompt; the
// typed line is the answer.
func TestConsoleAsks(t *testing.T) {
	src := `policy Careful : AllowTools("Files.*") & ApproveTools("Files.write")
tool Files : Work()
agent Clerk [openai/gpt-4o-mini]
  equips Files
  requires Careful
pipeline Ask(topic: String) -> Result:
  topic |! yield("What about {{topic}}?") as answer
    |> Clerk.work(answer, tools: [Files]) as report
    |> System.Value({ answer: answer, report: report })
`
	mocks := `{"Clerk.work": [{ "$useTool": "Files.write", "args": { "path": "a.md", "text": "a" } }, "Done."], "Files.write": {"ok": true}}`
	w := newWorld(t, src, mocks)
	out, end := w.console(t, "Ask", map[string]any{"topic": "cats"}, "c", `{"more": true}`, "no, not there")
	if end.Result.Status != runtime.Completed {
		t.Fatalf("end %+v", end.Result)
	}
	wantIn(t, out,
		"the run asks at flow.halo:7:9 (|! yield): What about cats?", `answer: {"more": true}`,
		`the run asks at flow.halo:8:5: Allow Clerk to call Files.write with {"path":"a.md","text":"a"}? (policy Careful)`,
		"Allow? [y/N, or say why not] no, not there")
	if a := end.Result.Output.(map[string]any)["answer"]; a.(map[string]any)["more"] != true {
		t.Errorf("answer %v", a)
	}
	if evs := eventsOf(end.Result, w, t, "agent_tool"); len(evs) != 1 || evs[0].Decision != "declined" || evs[0].Detail != "no, not there" {
		t.Errorf("the approval: %+v", evs)
	}

	// A ~> listen waits for its payload at the prompt: the typed line is the signal's.
	w = newWorld(t, `pipeline Order(id: String) -> Result:
  id ~> listen("payment") as paid
    |> System.Value({ id: id, paid: paid })
`, `{}`)
	out, end = w.console(t, "Order", map[string]any{"id": "o1"}, "c", `{"amount": 12}`)
	if end.Result.Status != runtime.Completed {
		t.Fatalf("end %+v", end.Result)
	}
	wantIn(t, out, `the run waits at flow.halo:2:6 for a signal on channel "payment": type its payload (JSON or text)`,
		`answer: {"amount": 12}`)
	if paid := end.Result.Output.(map[string]any)["paid"]; paid.(map[string]any)["amount"] != 12.0 {
		t.Errorf("paid %v", paid)
	}
}

func eventsOf(res *runtime.Result, w *world, t *testing.T, typ string) []runtime.Event {
	rec, err := w.store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Event
	for _, e := range rec.Events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestConsoleInputEnds: when the person's input ends at a stop, at a question, or while the
// run goes on, the run is stopped and its record says why.
func TestConsoleInputEnds(t *testing.T) {
	w := newWorld(t, flowSrc, flowMocks)
	out, end := w.console(t, "Tidy", map[string]any{"task": "merge"}, "n")
	if end.Result.Status != runtime.Failed || end.Result.Error.Code != debug.CodeStopped {
		t.Fatalf("end %+v", end.Result)
	}
	wantIn(t, out, "stopping the run: the test's lines ended")
	if !strings.Contains(end.Result.Error.Message, "the test's lines ended") || !strings.HasSuffix(end.Result.Error.At, ":16:5") {
		t.Errorf("error %+v", end.Result.Error)
	}
}

// TestStopWhileRunning: Stop from another goroutine (the terminal closed) while the run is
// in a tool call ends the call and the run; the record says it was stopped.
func TestStopWhileRunning(t *testing.T) {
	w := newWorld(t, flowSrc, flowMocks)
	w.rt.MockFunc("Files.count", func(req runtime.MockRequest) (any, error) {
		w.sess.Stop("the terminal was closed")
		return 1, nil
	})
	var out bytes.Buffer
	con := &debug.Console{Session: w.sess, Out: &out, ReadLine: func(string) (string, error) { return "c", nil }}
	w.sess.Start(context.Background(), "Tidy", map[string]any{"task": "merge"}, true)
	end := con.Run()
	if end.Result.Status != runtime.Failed || end.Result.Error.Code != debug.CodeStopped || end.Result.Error.Message != "the run was stopped in the debugger: the terminal was closed" {
		t.Fatalf("end %+v", end.Result.Error)
	}
}

// TestConcurrentStops: the items of a |* each reach their steps at once; they stop one at a
// time, and the person steps through each.
func TestConcurrentStops(t *testing.T) {
	src := `tool Files : Work()
pipeline Each(items: List) -> Result:
  items |* each Files.count(text: item)
`
	w := newWorld(t, src, `{"Files.count": 1}`)
	var mu sync.Mutex
	stops := 0
	con := &debug.Console{Session: w.sess, Out: &bytes.Buffer{}, ReadLine: func(string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		stops++
		return "s", nil
	}}
	items := []any{"a", "b", "c", "d"}
	w.sess.Start(context.Background(), "Each", map[string]any{"items": items}, true)
	end := con.Run()
	if end.Result.Status != runtime.Completed {
		t.Fatalf("end %+v", end.Result)
	}
	if stops != 1+len(items) {
		t.Errorf("%d stops, want the stage and each item's call", stops)
	}
}

// memStore is a run store in memory: records kept as the JSON a store writes.
type memStore struct {
	mu   sync.Mutex
	recs map[string][]byte
	last string
}

func newMemStore() *memStore { return &memStore{recs: map[string][]byte{}} }

func (s *memStore) Save(rec *runtime.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[rec.RunID], s.last = b, rec.RunID
	return nil
}

func (s *memStore) Load(id string) (*runtime.Record, error) {
	s.mu.Lock()
	b, ok := s.recs[id]
	s.mu.Unlock()
	if !ok {
		return nil, &runtime.Error{Code: runtime.CodeRun, Message: "no run " + id}
	}
	var rec runtime.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// SealKey is the key paused records are sealed with.
func (s *memStore) SealKey() ([]byte, error) { return []byte("debug tests' seal key, 32 bytes."), nil }

func (s *memStore) Latest() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, nil
}
