package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
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
	store := newStore()
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
	store := newStore()
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

const listenSrc = `
pipeline Order(id: String) -> Result:
  id
    |> System.Value({ id: id }) as order
    ~> listen("payment") as paid
    |! yield("Ship {{order.id}}?") as ok
    |> System.Value({ order: order, paid: paid, ok: ok })
pipeline Nested(id: String) -> Result:
  id |> branch { else: ~> listen("payment") }
`

// TestListenAndSignal: ~> listen pauses the run waiting on its channel; Signal on that
// channel continues it with the payload as the stage's value, and a signal on another
// channel is refused with the record untouched.
func TestListenAndSignal(t *testing.T) {
	store := newStore()
	rt := load(t, listenSrc, runtime.Config{Store: store})
	res := run(t, rt, "Order", map[string]any{"id": "o1"})
	if res.Status != runtime.Paused || res.Meta.Paused == nil || res.Meta.Paused.WaitingFor != "payment" || res.Meta.Paused.Question != nil {
		t.Fatalf("%s %+v", res.Status, res.Meta.Paused)
	}
	ctx := context.Background()
	before := store.bytes(t, res.RunID)
	for _, ch := range []string{"yield", "approval", "paymnet"} {
		_, err := rt.Signal(ctx, res.RunID, ch, "x")
		if errcode.Code(err) != runtime.CodeRun || !strings.Contains(err.Error(), `waits on channel "payment", not "`+ch+`"`) {
			t.Errorf("signal on %s: %v", ch, err)
		}
	}
	if _, err := rt.Signal(ctx, res.RunID, "", "x"); errcode.Code(err) != runtime.CodeRun {
		t.Errorf("signal without a channel: %v", err)
	}
	if after := store.bytes(t, res.RunID); after != before {
		t.Fatalf("a refused signal changed the record")
	}
	res, err := rt.Signal(ctx, res.RunID, "payment", map[string]any{"amount": 12.0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runtime.Paused || res.Meta.Paused.WaitingFor != "yield" || res.Meta.Paused.Question != "Ship o1?" {
		t.Fatalf("after the payment: %s %+v", res.Status, res.Meta.Paused)
	}
	if _, err := rt.Signal(ctx, res.RunID, "payment", "again"); errcode.Code(err) != runtime.CodeRun {
		t.Errorf("payment twice: %v", err)
	}
	res, err = rt.Signal(ctx, res.RunID, "yield", "yes")
	if err != nil {
		t.Fatal(err)
	}
	wantCompleted(t, res)
	got, _ := json.Marshal(res.Output)
	if string(got) != `{"ok":"yes","order":{"id":"o1"},"paid":{"amount":12}}` {
		t.Errorf("output %s", got)
	}
	before = store.bytes(t, res.RunID)
	if _, err := rt.Signal(ctx, res.RunID, "yield", "more"); errcode.Code(err) != runtime.CodeRun || !strings.Contains(err.Error(), "is completed, not paused") {
		t.Errorf("a finished run: %v", err)
	}
	if after := store.bytes(t, res.RunID); after != before {
		t.Errorf("signalling a finished run changed its record")
	}
}

// TestListenOnInterrupt: the interrupt handler is asked with the channel's name; inside a
// branch arm, a listen without an answer fails with NOT_PAUSABLE.
func TestListenOnInterrupt(t *testing.T) {
	var got runtime.Interrupt
	rt := load(t, listenSrc, runtime.Config{OnInterrupt: func(_ context.Context, in runtime.Interrupt) (any, bool, error) {
		if in.Channel == "payment" {
			got = in
			return "paid", true, nil
		}
		return nil, false, nil
	}})
	res := run(t, rt, "Nested", map[string]any{"id": "o1"})
	wantCompleted(t, res)
	if res.Output != "paid" || got.Named["channel"] != "payment" || !strings.Contains(got.Message, `"payment"`) {
		t.Errorf("output %v, request %+v", res.Output, got)
	}
	rt = load(t, listenSrc, runtime.Config{})
	res = run(t, rt, "Nested", map[string]any{"id": "o1"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeNotPausable || !strings.Contains(res.Error.Message, "~> listen inside the branch arm") {
		t.Errorf("%s %+v", res.Status, res.Error)
	}
}

// TestSignalBadRecords: an unknown, unreadable, forged or mismatched record is a RUN_RECORD
// error, and no record is written or changed.
func TestSignalBadRecords(t *testing.T) {
	store := newStore()
	rt := load(t, listenSrc, runtime.Config{Store: store})
	paused := run(t, rt, "Order", map[string]any{"id": "o1"})
	good := store.bytes(t, paused.RunID)
	var rec map[string]any
	if err := json.Unmarshal([]byte(good), &rec); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(map[string]any)) string {
		var r map[string]any
		json.Unmarshal([]byte(good), &r)
		f(r)
		b, _ := json.Marshal(r)
		return string(b)
	}
	cases := map[string]string{
		"notjson":   `{"runId": "notjson", "status": "paused"`,
		"empty":     ``,
		"otherid":   edit(func(r map[string]any) { r["runId"] = "someone-else" }),
		"nopause":   edit(func(r map[string]any) { r["runId"] = "nopause"; r["meta"].(map[string]any)["paused"] = nil }),
		"stage":     edit(func(r map[string]any) { r["runId"] = "stage"; r["resume"].(map[string]any)["stage"] = 7 }),
		"negative":  edit(func(r map[string]any) { r["runId"] = "negative"; r["resume"].(map[string]any)["stage"] = -1 }),
		"wrongstop": edit(func(r map[string]any) { r["runId"] = "wrongstop"; r["resume"].(map[string]any)["stage"] = 0 }),
		"pipeline":  edit(func(r map[string]any) { r["runId"] = "pipeline"; r["pipeline"] = "Gone" }),
		"inputs":    edit(func(r map[string]any) { r["runId"] = "inputs"; r["inputs"] = map[string]any{"id": 3} }),
		"noresume":  edit(func(r map[string]any) { r["runId"] = "noresume"; delete(r, "resume") }),
		"status":    edit(func(r map[string]any) { r["runId"] = "status"; r["status"] = "failed" }),
		"loopsbad": edit(func(r map[string]any) {
			r["runId"] = "loopsbad"
			r["resume"].(map[string]any)["loops"] = map[string]any{"x": 1}
		}),
	}
	for id, body := range cases {
		// Sealed again, as a record that verifies: what is checked is that it fits.
		store.put(t, id, []byte(body), true)
	}
	list := store.dump
	before := list()
	ids := []string{"unknown", "../escape", "a/b", ""}
	for id := range cases {
		ids = append(ids, id)
	}
	for _, id := range ids {
		for _, ch := range []string{"payment", ""} {
			var err error
			if ch == "" {
				_, err = rt.Resume(context.Background(), id, "x")
			} else {
				_, err = rt.Signal(context.Background(), id, ch, "x")
			}
			if errcode.Code(err) != runtime.CodeRun {
				t.Errorf("%q on %q: %v, want RUN_RECORD", id, ch, err)
			}
		}
	}
	if after := list(); after != before {
		t.Errorf("the records folder changed")
	}
}

// TestSignalTwiceAtOnce: while a signal is continuing a run, a second one for the same run
// is refused (RUN_RECORD) instead of running the rest of the run twice.
func TestSignalTwiceAtOnce(t *testing.T) {
	store := newStore()
	started, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"ship": func(ctx context.Context, a map[string]any) (any, error) {
			if calls.Add(1) == 1 {
				close(started)
			}
			<-release
			return "shipped", nil
		},
	}}
	rt := load(t, `
tool T : Fake()
pipeline Order(id: String) -> Result:
  id ~> listen("payment") |> T.ship()
`, runtime.Config{Store: store, Tools: registry(t, p, nil)})
	res := run(t, rt, "Order", map[string]any{"id": "o1"})
	if res.Status != runtime.Paused {
		t.Fatalf("%s", res.Status)
	}
	first := make(chan error, 1)
	go func() {
		res, err := rt.Signal(context.Background(), res.RunID, "payment", 1)
		if err == nil && res.Status != runtime.Completed {
			err = fmt.Errorf("first signal: %s %+v", res.Status, res.Error)
		}
		first <- err
	}()
	<-started
	if _, err := rt.Signal(context.Background(), res.RunID, "payment", 2); errcode.Code(err) != runtime.CodeRun || !strings.Contains(err.Error(), "being resumed") {
		t.Errorf("second signal: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("ship ran %d times", calls.Load())
	}
}
