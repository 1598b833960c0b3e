package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/halo-lang/halo/host/runtime"
	"github.com/halo-lang/halo/host/tool"
)

const askSrc = `
agent A [openai/gpt-4o]
pipeline Ask(x: String) -> Result:
  x |> A.draft("Draft.") as draft |! yield("Approve {{draft}}?") as answer |> System.Value({ d: draft, a: answer })
pipeline Inner(x: String) -> Result:
  x |! yield("Inner {{x}}?")
pipeline Outer(x: String) -> Result:
  x |> Inner() as got |> System.Value(got)
`

// TestOnInterruptAnswersYield: with a handler that answers, a yield does not pause: the
// answer is the stage's value, the request says what is asked, and an event records it.
func TestOnInterruptAnswersYield(t *testing.T) {
	var (
		mu   sync.Mutex
		reqs []runtime.Interrupt
		evs  []runtime.Event
	)
	store := &runtime.Store{Dir: t.TempDir()}
	rt := load(t, askSrc, runtime.Config{
		Store: store, MockAgents: true,
		OnInterrupt: func(ctx context.Context, in runtime.Interrupt) (any, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			reqs = append(reqs, in)
			return map[string]any{"approved": true}, true, nil
		},
		OnEvent: func(e runtime.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() },
	})
	res := run(t, rt, "Ask", map[string]any{"x": "go"})
	wantCompleted(t, res)
	got, _ := json.Marshal(res.Output)
	if string(got) != `{"a":{"approved":true},"d":"mock answer of A.draft"}` {
		t.Errorf("output %s", got)
	}
	if len(reqs) != 1 {
		t.Fatalf("handler asked %d times", len(reqs))
	}
	in := reqs[0]
	if in.Channel != runtime.ChannelYield || in.Message != "Approve mock answer of A.draft?" || in.RunID != res.RunID ||
		in.Named["question"] != "Approve mock answer of A.draft?" || !strings.HasPrefix(in.At, "test.halo:4:") {
		t.Errorf("request %+v", in)
	}
	var answered *runtime.Event
	for i := range evs {
		if evs[i].Type == "answered" {
			answered = &evs[i]
		}
		if evs[i].Type == "paused" {
			t.Errorf("a paused event although the handler answered")
		}
	}
	if answered == nil || answered.Channel != "yield" || answered.At != in.At {
		t.Errorf("answered event %+v", answered)
	}
	rec, err := store.Load(res.RunID)
	if err != nil || rec.Status != runtime.Completed || rec.Resume != nil {
		t.Errorf("record %+v %v", rec, err)
	}
}

// TestOnInterruptNoAnswerPauses: a handler that gives no answer leaves the run to pause as
// it does without one; resuming it does not ask again.
func TestOnInterruptNoAnswerPauses(t *testing.T) {
	store := &runtime.Store{Dir: t.TempDir()}
	asked := 0
	cfg := runtime.Config{Store: store, MockAgents: true,
		OnInterrupt: func(context.Context, runtime.Interrupt) (any, bool, error) { asked++; return nil, false, nil }}
	rt := load(t, askSrc, cfg)
	res := run(t, rt, "Ask", map[string]any{"x": "go"})
	if res.Status != runtime.Paused || res.Meta.Paused == nil || res.Meta.Paused.WaitingFor != "yield" || asked != 1 {
		t.Fatalf("%s %+v, asked %d", res.Status, res.Meta.Paused, asked)
	}
	done, err := rt.Resume(context.Background(), res.RunID, "yes")
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, done)
	if asked != 1 {
		t.Errorf("the handler was asked again on resume")
	}
}

// TestOnInterruptError: the handler's error fails the stage with the handler's code.
func TestOnInterruptError(t *testing.T) {
	rt := load(t, askSrc, runtime.Config{MockAgents: true,
		OnInterrupt: func(context.Context, runtime.Interrupt) (any, bool, error) {
			return nil, false, tool.Errorf(tool.CodeToolError, "the client went away")
		}})
	res := run(t, rt, "Ask", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != tool.CodeToolError || !strings.Contains(res.Error.Message, "the client went away") {
		t.Errorf("%s %+v", res.Status, res.Error)
	}
	rt = load(t, askSrc, runtime.Config{MockAgents: true,
		OnInterrupt: func(context.Context, runtime.Interrupt) (any, bool, error) { return nil, false, errors.New("boom") }})
	res = run(t, rt, "Ask", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeInternal {
		t.Errorf("%s %+v", res.Status, res.Error)
	}
}

// TestOnInterruptWhereNoPause: a yield in a called pipeline cannot pause; a handler's
// answer lets it go on, and without one it fails with NOT_PAUSABLE.
func TestOnInterruptWhereNoPause(t *testing.T) {
	rt := load(t, askSrc, runtime.Config{})
	res := run(t, rt, "Outer", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeNotPausable || !strings.Contains(res.Error.Message, "in pipeline Inner, called from another pipeline") {
		t.Errorf("without a handler: %s %+v", res.Status, res.Error)
	}
	rt = load(t, askSrc, runtime.Config{OnInterrupt: func(context.Context, runtime.Interrupt) (any, bool, error) { return nil, false, nil }})
	res = run(t, rt, "Outer", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeNotPausable {
		t.Errorf("no answer: %s %+v", res.Status, res.Error)
	}
	rt = load(t, askSrc, runtime.Config{OnInterrupt: func(_ context.Context, in runtime.Interrupt) (any, bool, error) {
		return "answered " + in.Message, true, nil
	}})
	res = run(t, rt, "Outer", map[string]any{"x": "go"})
	wantCompleted(t, res)
	if res.Output != "answered Inner go?" {
		t.Errorf("output %v", res.Output)
	}
}
