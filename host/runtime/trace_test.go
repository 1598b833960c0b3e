package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// TestTraceAndStageEvents: a run started with a Trace sends its events there as well as to
// Config.OnEvent; two runs at once each see only their own. Every stage of the pipeline the
// run started with emits a "stage" event when it finishes (a fallback that ran too; a called
// pipeline's stages do not), and a resumed yield stage emits one.
func TestTraceAndStageEvents(t *testing.T) {
	var mu sync.Mutex
	var all []runtime.Event
	var ids atomic.Int32
	rt := load(t, `
pipeline Inner(x: String) -> Result:
  x |> System.Value() |> System.Value()
pipeline P(x: String) -> Result:
  x
    |> Inner()
    |> System.Fail("no")
    |? System.Value("fallback")
    |* { System.Value(), System.Value() }
    |! yield("go on?") as answer
    |> System.Value(answer)
`, runtime.Config{Store: newStore(), NewID: func() string { return fmt.Sprintf("run%d", ids.Add(1)) }, OnEvent: func(e runtime.Event) {
		mu.Lock()
		all = append(all, e)
		mu.Unlock()
	}})
	collect := func() (*runtime.Trace, *[]runtime.Event) {
		var evs []runtime.Event
		return &runtime.Trace{OnEvent: func(e runtime.Event) { evs = append(evs, e) }}, &evs
	}
	t1, evs1 := collect()
	t2, evs2 := collect()
	var wg sync.WaitGroup
	var res1, res2 *runtime.Result
	wg.Go(func() { res1, _ = rt.Run(runtime.WithTrace(context.Background(), t1), "P", map[string]any{"x": "a"}) })
	wg.Go(func() { res2, _ = rt.Run(runtime.WithTrace(context.Background(), t2), "P", map[string]any{"x": "b"}) })
	wg.Wait()
	if res1 == nil || res2 == nil || res1.Status != runtime.Paused || res2.Status != runtime.Paused {
		t.Fatalf("want both runs paused, got %+v %+v", res1, res2)
	}
	stages := func(evs []runtime.Event, id string) []string {
		var out []string
		for _, e := range evs {
			if e.RunID != id {
				t.Errorf("trace of run %s got an event of run %s", id, e.RunID)
			}
			if e.Type == "stage" {
				out = append(out, e.Target)
			}
		}
		return out
	}
	want := "Inner System.Value System.Value, System.Value"
	if got := strings.Join(stages(*evs1, res1.RunID), " "); got != want {
		t.Errorf("stage events %q, want %q", got, want)
	}
	if got := strings.Join(stages(*evs2, res2.RunID), " "); got != want {
		t.Errorf("stage events %q, want %q", got, want)
	}
	if len(all) != len(*evs1)+len(*evs2) {
		t.Errorf("Config.OnEvent got %d events, the traces %d and %d", len(all), len(*evs1), len(*evs2))
	}

	t3, evs3 := collect()
	res, err := rt.Resume(runtime.WithTrace(context.Background(), t3), res1.RunID, "yes")
	if err != nil || res.Status != runtime.Completed {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if got := strings.Join(stages(*evs3, res1.RunID), " "); got != "yield System.Value" {
		t.Errorf("resumed stage events %q, want %q", got, "yield System.Value")
	}
}
