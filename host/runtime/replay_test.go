package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

const replaySrc = `
policy Careful : AllowTools("Files.*") & ApproveEffects(write)
policy Private : Redact(Email)
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful, Private
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files]) as report |> Files.run(command: "wc notes.md") as count |> System.Value({ report: report, count: count })
`

// noServers is a tool registry whose providers cannot be opened, and a model opener that
// cannot be used: what a replay must never need.
func noServers(t *testing.T) (*tool.Registry, runtime.ModelOpener) {
	reg := tool.NewRegistry()
	err := reg.Add(tool.Type{Name: "Work", Kind: tool.KindBuiltin, Methods: workspaceMethods,
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
			t.Error("a replay opened a tool provider")
			return nil, errors.New("no servers in a replay")
		}})
	if err != nil {
		t.Fatal(err)
	}
	return reg, func(string) (model.Provider, string, error) {
		t.Error("a replay opened a model")
		return nil, "", errors.New("no models in a replay")
	}
}

// recorded runs replaySrc once for real (a scripted model, the workspace, approvals by a
// mock) and returns its record.
func recorded(t *testing.T, src string, replies ...func(model.Request) (model.Response, error)) (*runtime.Record, *runtime.Result) {
	t.Helper()
	store := newStore()
	c := newClerk(replies...)
	c.w.files["notes.md"] = "mail bob@example.com\n"
	cfg := c.config(store, nil)
	cfg.Tools = c.registry(t)
	rt := load(t, src, cfg)
	rt.Mock("approval", "approve")
	res := run(t, rt, "Tidy", map[string]any{"task": "merge"})
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return rec, res
}

// TestRecordingKeepsWhatWasReturned: a run's record keeps each model answer, each tool
// result as the tool returned it (an email the agent's Redact policy hides from the model
// and the events is there), the approvals given and the tools' methods.
func TestRecordingKeepsWhatWasReturned(t *testing.T) {
	rec, res := recorded(t, replaySrc,
		asks(tc("c1", "Files__read", `{"path":"notes.md"}`), tc("c2", "Files__write", `{"path":"notes.md","text":"x"}`)),
		says("Merged."))
	wantCompleted(t, res)
	r := rec.Recording
	if r == nil {
		t.Fatal("no recording")
	}
	var kinds []string
	for _, c := range r.Calls {
		kinds = append(kinds, c.Kind+":"+c.Target)
	}
	if got := strings.Join(kinds, " "); got != "llm:Clerk.work tool:Files.read approval:Files.write tool:Files.write llm:Clerk.work tool:Files.run" {
		t.Errorf("recorded %s", got)
	}
	if got := string(r.Calls[1].Result); got != `"mail bob@example.com\n"` {
		t.Errorf("the read is recorded as %s, want the tool's result unredacted", got)
	}
	if c := r.Calls[0]; c.Step != 1 || c.Response == nil || len(c.Response.ToolCalls) != 2 || c.Response.ToolCalls[1].ID != "c2" {
		t.Errorf("first answer %+v", c)
	}
	if c := r.Calls[2]; !reflect.DeepEqual(c.Answer, map[string]any{"approved": true, "reason": ""}) {
		t.Errorf("approval %+v", c)
	}
	// Files described the methods its type declares: the record need not keep them (a replay
	// offers the type's, TestReplay...); a tool whose provider alone knows them keeps them
	// (TestRecordingKeepsDescribedMethods).
	if _, kept := r.Methods["Files"]; kept {
		t.Errorf("the record keeps the methods the tool's type declares: %+v", r.Methods)
	}
	for _, e := range rec.Events {
		if e.Type == "tool" && strings.Contains(fmt.Sprint(e.Output), "bob@example.com") {
			t.Errorf("an event shows the email: %+v", e)
		}
	}
}

// TestReplaySameRun: a replay answers every model request, tool call and approval from the
// record, starting nothing: same output, same calls, and no record is written.
func TestReplaySameRun(t *testing.T) {
	rec, res := recorded(t, replaySrc,
		asks(tc("c1", "Files__read", `{"path":"notes.md"}`), tc("c2", "Files__write", `{"path":"notes.md","text":"x"}`)),
		says("Merged."))
	wantCompleted(t, res)
	reg, models := noServers(t)
	var events []runtime.Event
	store := newStore()
	rt := load(t, replaySrc, runtime.Config{Tools: reg, Models: models, Store: store,
		OnEvent: func(e runtime.Event) { events = append(events, e) },
		OnInterrupt: func(context.Context, runtime.Interrupt) (any, bool, error) {
			t.Error("a replay asked the interrupt handler")
			return nil, false, nil
		}})
	rt.Mock("approval", "no") // mocks are not used in a replay
	again, err := rt.Replay(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, again)
	if !reflect.DeepEqual(again.Output, res.Output) || again.RunID != rec.RunID {
		t.Errorf("replay: %v (%s), recorded: %v", again.Output, again.RunID, res.Output)
	}
	calls := func(m runtime.Meta) string {
		var out []string
		for _, c := range m.Calls {
			out = append(out, c.Kind+":"+c.Target+":"+c.Error)
		}
		return strings.Join(out, " ")
	}
	if calls(again.Meta) != calls(res.Meta) {
		t.Errorf("calls %s, recorded %s", calls(again.Meta), calls(res.Meta))
	}
	var decisions []string
	for _, e := range eventsOf(events, "agent_tool") {
		decisions = append(decisions, e.Target+"="+e.Decision)
	}
	if got := strings.Join(decisions, " "); got != "Files.read=allowed Files.write=approved" {
		t.Errorf("decisions %s", got)
	}
	if n := store.len(); n != 0 {
		t.Errorf("a replay wrote %d records", n)
	}
}

// TestReplayChangedPolicy: yesterday's run against today's policies. A call the new policy
// refuses is refused (a violation; the model reads the refusal and the recorded run goes
// on); a call the old policy refused and the new one allows was never made, so the replay
// stops there with REPLAY_DIVERGED saying what differed; a call the new policy puts up for
// approval that no one was asked about stops it too.
func TestReplayChangedPolicy(t *testing.T) {
	rec, res := recorded(t, replaySrc,
		asks(tc("c1", "Files__read", `{"path":"notes.md"}`), tc("c2", "Files__write", `{"path":"notes.md","text":"x"}`)),
		says("Merged."))
	wantCompleted(t, res)
	reg, models := noServers(t)
	replay := func(src string) (*runtime.Result, []runtime.Event) {
		t.Helper()
		var events []runtime.Event
		rt := load(t, src, runtime.Config{Tools: reg, Models: models, OnEvent: func(e runtime.Event) { events = append(events, e) }})
		out, err := rt.Replay(context.Background(), rec)
		if err != nil {
			t.Fatal(err)
		}
		return out, events
	}

	refusing := strings.Replace(replaySrc, `ApproveEffects(write)`, `ApproveEffects(write) & DenyArgs("Files.write", "path", "^notes")`, 1)
	out, events := replay(refusing)
	wantCompleted(t, out)
	if len(out.Meta.Violations) != 1 || out.Meta.Violations[0].Rule != "DenyArgs" || out.Meta.Violations[0].Target != "Files.write" {
		t.Errorf("violations %+v", out.Meta.Violations)
	}
	var decisions []string
	for _, e := range eventsOf(events, "agent_tool") {
		decisions = append(decisions, e.Target+"="+e.Decision)
	}
	if got := strings.Join(decisions, " "); got != "Files.read=allowed Files.write=refused" {
		t.Errorf("decisions %s", got)
	}

	// Recorded under the refusing policy, replayed under the first: the write was never made.
	// The message quotes the arguments as they were written (<, > and &, which the record's
	// JSON escapes as \u003c, shown as they are).
	rec2, res2 := recorded(t, refusing,
		asks(tc("c1", "Files__write", `{"path":"notes.md","text":"<x> & y"}`)),
		asks(tc("c2", "Files__write", `{"path":"drafts/n.md","text":"<x> & y"}`)),
		says("Wrote drafts/n.md."))
	wantCompleted(t, res2)
	rec = rec2
	out, _ = replay(strings.Replace(replaySrc, " & ApproveEffects(write)", "", 1))
	if out.Status != runtime.Failed || out.Error.Code != runtime.CodeReplayDiverged {
		t.Fatalf("%s %+v", out.Status, out.Error)
	}
	want := `Files.write: the recorded run made no call with {"path":"notes.md","text":"<x> & y"} (it called Files.write with {"path":"drafts/n.md","text":"<x> & y"})`
	if !strings.Contains(out.Error.Message, want) {
		t.Errorf("message %q\nwant it to say %q", out.Error.Message, want)
	}

	// A new approval rule: the recorded run asked no one about the read.
	asking := strings.Replace(refusing, `ApproveEffects(write)`, `ApproveEffects(write) & ApproveTools("Files.read")`, 1)
	rec3, res3 := recorded(t, refusing,
		asks(tc("c1", "Files__read", `{"path":"notes.md"}`)),
		says("Read it."))
	wantCompleted(t, res3)
	rec = rec3
	out, _ = replay(asking)
	if out.Status != runtime.Failed || out.Error.Code != runtime.CodeReplayDiverged || !strings.Contains(out.Error.Message, `Files.read with {"path":"notes.md"} waits for approval, and no one was asked about such a call in the recorded run`) {
		t.Errorf("%s %+v", out.Status, out.Error)
	}
}

// TestReplayMoreStepsThanRecorded: a conversation that goes on past the recorded answers
// (here the recorded answer is refused by a new output policy and @correct asks again)
// stops with REPLAY_DIVERGED naming the agent call and the step.
func TestReplayMoreStepsThanRecorded(t *testing.T) {
	src := `
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files]) @correct(1) as report |> Files.run(command: "wc notes.md") as count |> System.Value({ report: report, count: count })
`
	rec, res := recorded(t, src, says("Merged."))
	wantCompleted(t, res)
	reg, models := noServers(t)
	changed := strings.Replace(src, "agent Clerk [openai/gpt-4o]\n  equips Files", "policy Json : Require(JSON)\nagent Clerk [openai/gpt-4o]\n  equips Files\n  requires Json", 1)
	out, err := load(t, changed, runtime.Config{Tools: reg, Models: models}).Replay(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != runtime.Failed || out.Error.Code != runtime.CodeReplayDiverged || !strings.Contains(out.Error.Message, "Clerk.work asked its model for step 2 of its conversation, and the recorded run has no more answers of this agent call here (it had 1)") {
		t.Errorf("%s %+v", out.Status, out.Error)
	}
}

// TestReplayAcrossPauses: a run paused for approval and at a yield, answered with halo
// resume, replays from start to end without pausing: the recorded answers are given again.
func TestReplayAcrossPauses(t *testing.T) {
	src := `
policy Careful : ApproveEffects(write)
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files]) as report |! yield("Publish {{report}}?") as ok |> System.Value({ report: report, ok: ok })
`
	store := newStore()
	c := newClerk(threeCalls(), says("Tidied."))
	cfg := c.config(store, nil)
	cfg.Tools = c.registry(t)
	rt := load(t, src, cfg)
	res := run(t, rt, "Tidy", map[string]any{"task": "t"})
	if res.Status != runtime.Paused {
		t.Fatalf("%s %+v", res.Status, res.Error)
	}
	res, err := rt.Resume(context.Background(), res.RunID, "no, not now")
	if err != nil || res.Status != runtime.Paused || res.Meta.Paused.WaitingFor != "yield" {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = rt.Resume(context.Background(), res.RunID, map[string]any{"ship": true})
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, res)
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	reg, models := noServers(t)
	again, err := load(t, src, runtime.Config{Tools: reg, Models: models}).Replay(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, again)
	if !reflect.DeepEqual(again.Output, res.Output) {
		t.Errorf("replay %v, recorded %v", again.Output, res.Output)
	}

	// A run that is still paused replays to the same pause.
	c.m.replies = append(c.m.replies, threeCalls())
	res = run(t, rt, "Tidy", map[string]any{"task": "t2"})
	if res.Status != runtime.Paused {
		t.Fatalf("%s %+v", res.Status, res.Error)
	}
	rec, _ = store.Load(res.RunID)
	again, err = load(t, src, runtime.Config{Tools: reg, Models: models}).Replay(context.Background(), rec)
	if err != nil || again.Status != runtime.Paused {
		t.Fatalf("%v %+v", err, again)
	}
}

// TestReplayEachItems: the calls of |* each items run at once; each item gets its own
// recorded answers, whichever order they come in.
func TestReplayEachItems(t *testing.T) {
	src := `
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
pipeline Tidy(docs: List) -> Result:
  docs |* each doc: Clerk.read("Read {{doc}}.", tools: [Files]) @limit(4)
`
	w := &workspace{files: map[string]string{"a": "A", "b": "B", "c": "C", "d": "D"}}
	store := newStore()
	rt := load(t, src, runtime.Config{Tools: workspaceRegistry(t, w), Store: store})
	var mu sync.Mutex
	rt.MockFunc("Clerk.read", func(r runtime.MockRequest) (any, error) {
		if r.Step == 1 {
			mu.Lock()
			defer mu.Unlock()
			time.Sleep(time.Millisecond)
			return runtime.UseTool("Files.read", map[string]any{"path": r.Input}), nil
		}
		return "read " + r.Messages[len(r.Messages)-1].ToolResults[0].Content, nil
	})
	docs := []any{"a", "b", "c", "d"}
	res := run(t, rt, "Tidy", map[string]any{"docs": docs})
	wantCompleted(t, res)
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	reg, models := noServers(t)
	for i := 0; i < 5; i++ {
		again, err := load(t, src, runtime.Config{Tools: reg, Models: models}).Replay(context.Background(), rec)
		if err != nil {
			t.Fatal(err)
		}
		wantCompleted(t, again)
		if !reflect.DeepEqual(again.Output, res.Output) {
			t.Fatalf("replay %v, recorded %v", again.Output, res.Output)
		}
	}
}

// TestReplayRetriedFailures: a model request that failed and was retried (@retry) and a tool
// that failed are replayed as they happened, without waiting between attempts.
func TestReplayRetriedFailures(t *testing.T) {
	src := `
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files]) @retry(1)
`
	m := &scripted{replies: []func(model.Request) (model.Response, error){
		func(model.Request) (model.Response, error) {
			return model.Response{}, &model.Error{Code: model.CodeRateLimit, Message: "slow down", Retryable: true}
		},
		asks(tc("1", "Files__read", `{"path":"missing"}`)),
		says("No such file."),
	}}
	store := newStore()
	w := &workspace{files: map[string]string{}}
	rt := load(t, src, runtime.Config{Tools: workspaceRegistry(t, w), Store: store, Sleep: func(context.Context, time.Duration) error { return nil },
		Models: func(string) (model.Provider, string, error) { return m, "gpt-4o", nil }})
	res := run(t, rt, "Tidy", map[string]any{"task": "t"})
	wantCompleted(t, res)
	rec, _ := store.Load(res.RunID)
	reg, models := noServers(t)
	slept := 0
	again, err := load(t, src, runtime.Config{Tools: reg, Models: models, Sleep: func(context.Context, time.Duration) error { slept++; return nil }}).Replay(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, again)
	if again.Output != "No such file." || slept != 0 {
		t.Errorf("output %v, slept %d", again.Output, slept)
	}
	var errs []string
	for _, c := range again.Meta.Calls {
		errs = append(errs, c.Kind+":"+c.Error)
	}
	if got := strings.Join(errs, " "); got != "llm:MODEL_RATE_LIMIT llm: tool:TOOL_ERROR llm:" {
		t.Errorf("calls %s", got)
	}
}

// TestReplayBadRecords: a record without a recording, of a pipeline the file no longer
// declares, or with inputs that no longer fit: RUN_RECORD.
func TestReplayBadRecords(t *testing.T) {
	rec, _ := recorded(t, replaySrc, says("Merged."))
	reg, models := noServers(t)
	rt := load(t, replaySrc, runtime.Config{Tools: reg, Models: models})
	for name, edit := range map[string]func(r *runtime.Record){
		"no recording": func(r *runtime.Record) { r.Recording = nil },
		"pipeline":     func(r *runtime.Record) { r.Pipeline = "Gone" },
		"inputs":       func(r *runtime.Record) { r.Inputs = map[string]any{"other": 1} },
	} {
		b, _ := json.Marshal(rec)
		var r runtime.Record
		json.Unmarshal(b, &r)
		edit(&r)
		if _, err := rt.Replay(context.Background(), &r); errcode.Code(err) != runtime.CodeRun {
			t.Errorf("%s: %v, want RUN_RECORD", name, err)
		}
	}
}

// TestRecordingKeepsDescribedMethods: the methods of a tool whose type declares none (they
// are its provider's alone, as an MCP server's or a module's) are kept in the record, for a
// replay to offer without starting anything.
func TestRecordingKeepsDescribedMethods(t *testing.T) {
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"echo": func(_ context.Context, a map[string]any) (any, error) { return a["input"], nil },
	}}
	store := newStore()
	rt := load(t, `
tool T : Fake()
pipeline P(x: String) -> Result:
  x |> T.echo(input: x)
`, runtime.Config{Tools: registry(t, p, nil), Store: store})
	res := run(t, rt, "P", map[string]any{"x": "a"})
	wantCompleted(t, res)
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if ms := rec.Recording.Methods["T"]; len(ms) != 1 || ms[0].Name != "echo" {
		t.Errorf("the record keeps %+v for T, want its described method", rec.Recording.Methods)
	}
}
