package runtime_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
)

// hooks is a Hooks that writes down every step and does what at says at a step it names
// ("stage@3" for the stage on line 3, "tool:Files.write" for a call).
type hooks struct {
	mu    sync.Mutex
	seen  []string
	steps []*runtime.Step
	at    map[string]func(*runtime.Step) error
}

func (h *hooks) Before(_ context.Context, s *runtime.Step) error {
	_, line := lineOf(s.At)
	desc := fmt.Sprintf("%s %s@%d depth=%d", s.Kind, s.Target, line, len(s.Frames))
	if s.Decision != nil {
		desc += " " + s.Decision.Verdict.String()
	}
	if s.Violation != nil {
		desc += " " + s.Violation.Rule
	}
	h.mu.Lock()
	h.seen = append(h.seen, desc)
	h.steps = append(h.steps, s)
	h.mu.Unlock()
	for _, k := range []string{fmt.Sprintf("%s@%d", s.Kind, line), string(s.Kind) + ":" + s.Target} {
		if f := h.at[k]; f != nil {
			return f(s)
		}
	}
	return nil
}

func lineOf(at string) (string, int) {
	parts := strings.Split(at, ":")
	n := 0
	if len(parts) >= 2 {
		fmt.Sscan(parts[len(parts)-2], &n)
	}
	return parts[0], n
}

const hookedSrc = `
policy Careful : AllowTools("Files.*") & ApproveEffects(write) & DenyArgs("Files.delete", "path", "keep")
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful
pipeline Inner(x: String) -> Result:
  x |> Files.read(path: "notes.md") as note
    |> System.Value(note)
pipeline Tidy(task: String) -> Result:
  task |> Inner() as inner
    |> branch {
      "task == 'merge'": Clerk.work(tools: [Files]) as report
      else: System.Value("no")
    }
    |> System.Value({ inner: inner, report: context.data.report, limit: context.data.limit })
`

// TestHooksAreToldEveryStep: a stage of the pipeline, of a called pipeline and of a branch
// arm, each model request and each tool call (with the policies' decision), and a violation,
// each with where it is nested.
func TestHooksAreToldEveryStep(t *testing.T) {
	c := newClerk(
		asks(tc("c1", "Files__write", `{"path":"out.md","text":"x"}`), tc("c2", "Files__delete", `{"path":"keep.md"}`)),
		says("Merged."))
	h := &hooks{}
	cfg := c.config(nil, nil)
	cfg.Tools = c.registry(t)
	cfg.Hooks = h
	rt := load(t, hookedSrc, cfg)
	rt.Mock("approval", "approve")
	wantCompleted(t, run(t, rt, "Tidy", map[string]any{"task": "merge"}))
	want := []string{
		"stage Inner@11 depth=0",
		"stage Files.read@8 depth=1",
		"tool Files.read@8 depth=1",
		"stage System.Value@9 depth=1",
		"stage @12 depth=0",
		"stage Clerk.work@13 depth=1",
		"request Clerk.work@13 depth=1",
		"tool Files.write@13 depth=1 needs approval",
		"tool Files.delete@13 depth=1 refused",
		"violation Files.delete@13 depth=1 DenyArgs",
		"request Clerk.work@13 depth=1",
		"stage System.Value@16 depth=0",
	}
	if !reflect.DeepEqual(h.seen, want) {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(h.seen, "\n"), strings.Join(want, "\n"))
	}
	// The called pipeline's stage is nested in the calling stage; the arm's in the branch.
	if f := h.steps[1].Frames; len(f) != 1 || f[0].Called != "Inner" || f[0].Pipeline != "Tidy" {
		t.Errorf("a called pipeline's frames: %+v", f)
	}
	if f := h.steps[5].Frames; len(f) != 1 || f[0].Arm != "task == 'merge'" {
		t.Errorf("a branch arm's frames: %+v", f)
	}
	if r := h.steps[6]; r.Request != 1 || r.Model != "openai/gpt-4o" || len(r.Messages) != 1 || len(r.Offered) != 4 {
		t.Errorf("the request step: %+v", r)
	}
	if r := h.steps[10]; r.Request != 2 || len(r.Messages) != 3 {
		t.Errorf("the second request sees the conversation so far: %d messages", len(r.Messages))
	}
}

// TestSetAndSkipAreSetByAPerson: a value set before a stage, a pipeline's tool call and an
// agent's tool call answered instead of running are what the run goes on with; the record's
// events and recording mark them set by a person, and a replay sets and answers them again.
func TestSetAndSkipAreSetByAPerson(t *testing.T) {
	store := newStore()
	c := newClerk(asks(tc("c1", "Files__write", `{"path":"out.md","text":"x"}`)), says("Merged."))
	h := &hooks{at: map[string]func(*runtime.Step) error{
		"tool:Files.read":  func(s *runtime.Step) error { return s.Skip("typed by a person") },
		"tool:Files.write": func(s *runtime.Step) error { return s.Skip(map[string]any{"written": 99}) },
		"stage@16": func(s *runtime.Step) error {
			if err := s.Set("limit", 5.0); err != nil {
				return err
			}
			return s.Set("context.data.report", "changed")
		},
	}}
	cfg := c.config(nil, nil)
	cfg.Store = store
	cfg.Tools = c.registry(t)
	cfg.Hooks = h
	rt := load(t, hookedSrc, cfg)
	res := run(t, rt, "Tidy", map[string]any{"task": "merge"})
	wantCompleted(t, res)
	want := map[string]any{"inner": "typed by a person", "report": "changed", "limit": 5.0}
	if !reflect.DeepEqual(res.Output, want) {
		t.Errorf("output %v, want %v", res.Output, want)
	}
	if len(c.w.calls) != 0 {
		t.Errorf("skipped calls ran: %v", c.w.calls)
	}
	// No one was asked about the write: the person answered it.
	if len(c.asked) != 0 {
		t.Errorf("asked %v", c.asked)
	}
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var set []string
	for _, e := range rec.Events {
		if e.SetBy != "" {
			set = append(set, e.Type+" "+e.Target+" "+e.SetBy)
		}
	}
	if got := strings.Join(set, ", "); got != "tool Files.read person, tool Files.write person, set limit person, set report person" {
		t.Errorf("events set by a person: %s", got)
	}
	var rs []string
	for _, r := range rec.Recording.Calls {
		if r.SetBy != "" {
			rs = append(rs, r.Kind+" "+r.Target)
		}
	}
	if got := strings.Join(rs, ", "); got != "tool Files.read, approval Files.write, tool Files.write, set limit, set report" {
		t.Errorf("recording set by a person: %s", got)
	}
	for _, e := range eventsOf(rec.Events, "agent_tool") {
		if e.Target == "Files.write" && e.Decision != "skipped" {
			t.Errorf("the agent_tool event of the skipped write: %+v", e)
		}
	}
	// A replay asks no one, opens nothing and comes to the same output.
	reg, models := noServers(t)
	again := load(t, hookedSrc, runtime.Config{Tools: reg, Models: models})
	rep, err := again.Replay(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, rep)
	if !reflect.DeepEqual(rep.Output, want) {
		t.Errorf("replayed output %v, want %v", rep.Output, want)
	}
}

// TestStepRefusals: what a step cannot do says why, and changes nothing.
func TestStepRefusals(t *testing.T) {
	c := newClerk(asks(tc("c1", "Files__delete", `{"path":"keep.md"}`)), says("ok"))
	var errs []string
	note := func(err error) {
		if err == nil {
			errs = append(errs, "nil")
			return
		}
		errs = append(errs, errcode.Code(err))
	}
	h := &hooks{at: map[string]func(*runtime.Step) error{
		"tool:Files.delete": func(s *runtime.Step) error { note(s.Skip("x")); note(s.Set("a", 1)); return nil },
		"request:Clerk.work": func(s *runtime.Step) error {
			note(s.Skip("x"))
			_, err := s.Eval("((")
			note(err)
			return nil
		},
		"stage@13": func(s *runtime.Step) error {
			note(s.Set("a..b", 1))
			note(s.Set("task.sub", 1)) // task is a string
			v, err := s.Eval("task + '!'")
			if v != "merge!" || err != nil {
				t.Errorf("Eval: %v, %v", v, err)
			}
			return nil
		},
	}}
	cfg := c.config(nil, nil)
	cfg.Tools = c.registry(t)
	cfg.Hooks = h
	wantCompleted(t, run(t, load(t, hookedSrc, cfg), "Tidy", map[string]any{"task": "merge"}))
	if got := strings.Join(errs, " "); got != "RUN_RECORD RUN_RECORD RUN_RECORD BAD_CONDITION RUN_RECORD RUN_RECORD RUN_RECORD BAD_CONDITION" {
		t.Errorf("refusals: %s", got)
	}
}

// TestHooksStopTheRun: a hook's error fails the run with its code at the stage it stopped;
// a run whose context is cancelled with a coded cause fails with that cause, whatever the
// call that was running made of the cancellation.
func TestHooksStopTheRun(t *testing.T) {
	stopped := errcode.New("DEBUG_STOPPED", "stopped by the test")
	t.Run("error", func(t *testing.T) {
		store := newStore()
		c := newClerk(says("Merged."))
		h := &hooks{at: map[string]func(*runtime.Step) error{"stage@16": func(*runtime.Step) error { return stopped }}}
		cfg := c.config(nil, nil)
		cfg.Store = store
		cfg.Tools = c.registry(t)
		cfg.Hooks = h
		res := run(t, load(t, hookedSrc, cfg), "Tidy", map[string]any{"task": "merge"})
		if res.Status != runtime.Failed || res.Error.Code != "DEBUG_STOPPED" || !strings.HasSuffix(res.Error.At, ":16:5") {
			t.Fatalf("result %s %+v", res.Status, res.Error)
		}
		rec, err := store.Load(res.RunID)
		if err != nil || rec.Error == nil || rec.Error.Code != "DEBUG_STOPPED" {
			t.Fatalf("record %+v, %v", rec, err)
		}
	})
	t.Run("cause", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		c := newClerk(says("Merged."))
		h := &hooks{at: map[string]func(*runtime.Step) error{"request:Clerk.work": func(*runtime.Step) error {
			cancel(stopped)
			return nil
		}}}
		cfg := c.config(nil, nil)
		cfg.Tools = c.registry(t)
		cfg.Hooks = h
		res, err := load(t, hookedSrc, cfg).Run(ctx, "Tidy", map[string]any{"task": "merge"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != runtime.Failed || res.Error.Code != "DEBUG_STOPPED" || res.Error.Message != "stopped by the test" {
			t.Fatalf("result %s %+v", res.Status, res.Error)
		}
	})
	t.Run("plain cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		c := newClerk(says("Merged."))
		h := &hooks{at: map[string]func(*runtime.Step) error{"request:Clerk.work": func(*runtime.Step) error {
			cancel()
			return nil
		}}}
		cfg := c.config(nil, nil)
		cfg.Tools = c.registry(t)
		cfg.Hooks = h
		res, _ := load(t, hookedSrc, cfg).Run(ctx, "Tidy", map[string]any{"task": "merge"})
		if res.Status != runtime.Failed || res.Error.Code != runtime.CodeCancelled {
			t.Fatalf("result %s %+v", res.Status, res.Error)
		}
	})
}

// TestHooksAtConcurrentSteps: the items of a |* each reach their steps at once; every one is
// told, with its own value.
func TestHooksAtConcurrentSteps(t *testing.T) {
	c := newClerk()
	h := &hooks{}
	cfg := c.config(nil, nil)
	cfg.Tools = c.registry(t)
	cfg.Hooks = h
	rt := load(t, `
tool Files : Work()
pipeline Each(items: List) -> Result:
  items |* each Files.run(command: item)
`, cfg)
	res := run(t, rt, "Each", map[string]any{"items": []any{"a", "b", "c"}})
	wantCompleted(t, res)
	var cmds []string
	for _, s := range h.steps {
		if s.Kind == runtime.StepTool {
			cmds = append(cmds, string(s.Args))
		}
	}
	if len(cmds) != 3 {
		t.Fatalf("tool steps %v", h.seen)
	}
}
