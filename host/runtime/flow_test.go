package runtime_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// inFlight counts calls running at once and remembers the most seen.
type inFlight struct {
	now, peak atomic.Int32
	calls     atomic.Int32
}

func (f *inFlight) enter() {
	f.calls.Add(1)
	n := f.now.Add(1)
	for {
		p := f.peak.Load()
		if n <= p || f.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (f *inFlight) leave() { f.now.Add(-1) }

func numbers(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = float64(i)
	}
	return out
}

// TestEachOrderUnderRandomDelays: results come back in the items' order whatever order the
// calls finish in, and no more than @limit (default 8) run at once.
func TestEachOrderUnderRandomDelays(t *testing.T) {
	var fl inFlight
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"work": func(ctx context.Context, a map[string]any) (any, error) {
			fl.enter()
			defer fl.leave()
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			return a["input"].(float64) * 10, nil
		},
	}}
	rt := load(t, `
tool T : Fake()
pipeline Default(xs: List) -> Result:
  xs |* each T.work()
pipeline Three(xs: List) -> Result:
  xs |* each T.work() @limit(3)
`, runtime.Config{Tools: registry(t, p, nil)})
	for _, tc := range []struct {
		pipeline string
		limit    int32
	}{{"Default", 8}, {"Three", 3}} {
		fl = inFlight{}
		res := run(t, rt, tc.pipeline, map[string]any{"xs": numbers(60)})
		wantCompleted(t, res)
		out := res.Output.([]any)
		if len(out) != 60 {
			t.Fatalf("%s: %d results", tc.pipeline, len(out))
		}
		for i, v := range out {
			if v != float64(i*10) {
				t.Fatalf("%s: result %d is %v, want %d: out of order", tc.pipeline, i, v, i*10)
			}
		}
		if fl.peak.Load() != tc.limit {
			t.Errorf("%s: %d calls at once at most, want exactly %d", tc.pipeline, fl.peak.Load(), tc.limit)
		}
	}
}

// TestEachFirstFailureCancels: one failing item cancels the items running and starts no
// more; the stage fails with the item's code, saying which item.
func TestEachFirstFailureCancels(t *testing.T) {
	var fl inFlight
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"work": func(ctx context.Context, a map[string]any) (any, error) {
			fl.enter()
			defer fl.leave()
			if a["input"] == 3.0 {
				return nil, tool.Errorf(tool.CodeToolArgument, "three is bad")
			}
			<-ctx.Done() // every other item waits to be cancelled
			return nil, ctx.Err()
		},
	}}
	rt := load(t, `
tool T : Fake()
pipeline P(xs: List) -> Result:
  xs |* each T.work() @limit(5)
`, runtime.Config{Tools: registry(t, p, nil)})
	done := make(chan *runtime.Result)
	go func() {
		res, _ := rt.Run(context.Background(), "P", map[string]any{"xs": numbers(1000)})
		done <- res
	}()
	var res *runtime.Result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a failed item did not cancel the others")
	}
	if res.Status != runtime.Failed || res.Error.Code != tool.CodeToolArgument || !strings.Contains(res.Error.Message, "item 3: T.work: three is bad") {
		t.Errorf("%s %+v", res.Status, res.Error)
	}
	if !strings.HasPrefix(res.Error.At, "test.halo:4:6") {
		t.Errorf("at %q, want the each stage", res.Error.At)
	}
	if n := fl.calls.Load(); n > 5 {
		t.Errorf("%d items started after the failure; want at most the 5 running", n)
	}
	if fl.now.Load() != 0 {
		t.Errorf("%d calls still running after the stage returned", fl.now.Load())
	}
}

// TestEachOwnFallback: a |? after a |* each handles each failed item on its own, with the
// item as its flowing value and the failure in context.data.error; the others go on.
func TestEachOwnFallback(t *testing.T) {
	var fl inFlight
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"work": func(ctx context.Context, a map[string]any) (any, error) {
			fl.enter()
			defer fl.leave()
			if int(a["input"].(float64))%2 == 1 {
				return nil, tool.Errorf(tool.CodeToolError, "odd")
			}
			return "ok", nil
		},
	}}
	rt := load(t, `
tool T : Fake()
pipeline P(xs: List) -> Result:
  xs |* each n: T.work() |? System.Value({ n: n, code: context.data.error.code }) as got
    |> System.Value({ list: got })
pipeline Fails(xs: List) -> Result:
  xs |* each T.work() |? System.Fail("handler for {{item}} failed too")
`, runtime.Config{Tools: registry(t, p, nil)})
	res := run(t, rt, "P", map[string]any{"xs": numbers(6)})
	wantCompleted(t, res)
	got, _ := json.Marshal(res.Output)
	want := `{"list":["ok",{"code":"TOOL_ERROR","n":1},"ok",{"code":"TOOL_ERROR","n":3},"ok",{"code":"TOOL_ERROR","n":5}]}`
	if string(got) != want {
		t.Errorf("output\n%s\nwant\n%s", got, want)
	}
	if fl.calls.Load() != 6 {
		t.Errorf("%d calls, want every item called", fl.calls.Load())
	}

	res = run(t, rt, "Fails", map[string]any{"xs": []any{1.0}})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeFail || !strings.Contains(res.Error.Message, "handler for 1 failed too") || !strings.HasPrefix(res.Error.At, "test.halo:7:23") {
		t.Errorf("failing handler: %s %+v", res.Status, res.Error)
	}
}

// TestEachRetryAndTimeoutPerItem: @retry and @timeout apply to each item's call on its own.
func TestEachRetryAndTimeoutPerItem(t *testing.T) {
	var mu sync.Mutex
	attempts := map[float64]int{}
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"flaky": func(ctx context.Context, a map[string]any) (any, error) {
			mu.Lock()
			attempts[a["input"].(float64)]++
			n := attempts[a["input"].(float64)]
			mu.Unlock()
			if a["input"] == 1.0 && n < 3 {
				return nil, &tool.Error{Code: tool.CodeHTTPError, Status: 503, Message: "busy", Retryable: true}
			}
			return n, nil
		},
		"slow": func(ctx context.Context, a map[string]any) (any, error) {
			if a["input"] == 2.0 {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return "fast", nil
		},
	}}
	rt := load(t, `
tool T : Fake()
pipeline Flaky(xs: List) -> Result:
  xs |* each T.flaky() @retry(2)
pipeline Slow(xs: List) -> Result:
  xs |* each T.slow() @timeout(30) |? System.Value(context.data.error.code)
`, runtime.Config{Tools: registry(t, p, nil), Sleep: func(context.Context, time.Duration) error { return nil }})
	res := run(t, rt, "Flaky", map[string]any{"xs": numbers(3)})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `[1,3,1]` {
		t.Errorf("flaky: %s; want item 1 on its third attempt, the others on their first", got)
	}
	res = run(t, rt, "Slow", map[string]any{"xs": numbers(4)})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `["fast","fast","TIMEOUT","fast"]` {
		t.Errorf("slow: %s", got)
	}
}

// TestEachValues: an empty list gives an empty list; a value that is not a list is a TYPE
// failure naming the stage; the item is readable by its name in templates and values.
func TestEachValues(t *testing.T) {
	rt := load(t, `
pipeline P(xs: Any) -> Result:
  xs |* each System.Value({ t: "({{item}})", v: item, f: item.name }) as out |> System.Value(out)
pipeline Named(xs: List, item: String) -> Result:
  xs |* each u: System.Value("{{item}}:{{u}}")
pipeline Flow(xs: List) -> Result:
  xs |* each Inner()
pipeline Inner(x: Any) -> Result:
  x |> System.Value({ inner: x })
`, runtime.Config{})
	res := run(t, rt, "P", map[string]any{"xs": []any{}})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `[]` {
		t.Errorf("empty: %s", got)
	}
	res = run(t, rt, "P", map[string]any{"xs": []any{"a", map[string]any{"name": "b"}}})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `[{"f":null,"t":"(a)","v":"a"},{"f":"b","t":"({\"name\":\"b\"})","v":{"name":"b"}}]` {
		t.Errorf("templates: %s", got)
	}
	for _, v := range []any{"text", map[string]any{"a": 1.0}, nil, 3.0} {
		res = run(t, rt, "P", map[string]any{"xs": v})
		if res.Status != runtime.Failed || res.Error.Code != runtime.CodeType || !strings.Contains(res.Error.Message, "|* each System.Value(...) goes over a list") || !strings.HasPrefix(res.Error.At, "test.halo:3:6") {
			t.Errorf("%v: %s %+v", v, res.Status, res.Error)
		}
	}
	res = run(t, rt, "Named", map[string]any{"xs": []any{"a", "b"}, "item": "it"})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `["it:a","it:b"]` {
		t.Errorf("named: %s", got)
	}
	res = run(t, rt, "Flow", map[string]any{"xs": []any{1.0, 2.0}})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `[{"inner":1},{"inner":2}]` {
		t.Errorf("called pipeline per item: %s", got)
	}
}

// TestEachEventsSayWhichItem: every event made for an item carries its index.
func TestEachEventsSayWhichItem(t *testing.T) {
	var mu sync.Mutex
	byItem := map[int]string{}
	rt := load(t, `
tool T : Fake()
pipeline P(xs: List) -> Result:
  xs |* each T.work()
`, runtime.Config{Tools: registry(t, &fakeProvider{}, nil), OnEvent: func(e runtime.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Type == "tool" {
			if e.Item == nil {
				t.Errorf("tool event without item: %+v", e)
				return
			}
			b, _ := json.Marshal(e.Output)
			byItem[*e.Item] = string(b)
		}
	}})
	rt.MockFunc("T.work", func(r runtime.MockRequest) (any, error) { return r.Input, nil })
	res := run(t, rt, "P", map[string]any{"xs": []any{"a", "b", "c"}})
	wantCompleted(t, res)
	if byItem[0] != `"a"` || byItem[1] != `"b"` || byItem[2] != `"c"` {
		t.Errorf("events by item: %v", byItem)
	}
	line, _ := json.Marshal(runtime.Event{Type: "tool", Item: new(int)})
	if !strings.Contains(string(line), `"item":0`) {
		t.Errorf("item 0 is left out of the JSON: %s", line)
	}
}

// TestEachManyItems: 100,000 items run on the 8 workers, not a goroutine each, and the
// memory the run holds grows with the results only.
func TestEachManyItems(t *testing.T) {
	rt := load(t, `
pipeline P(xs: List) -> Result:
  xs |* each System.Value({ n: item }) as out |> System.Value(out)
`, runtime.Config{})
	in := map[string]any{"xs": numbers(100_000)}
	goruntime.GC()
	base := goruntime.NumGoroutine()
	var before goruntime.MemStats
	goruntime.ReadMemStats(&before)
	stop := make(chan struct{})
	sampled := make(chan [2]uint64)
	go func() {
		var peakG, peakStack uint64
		var ms goruntime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := uint64(goruntime.NumGoroutine()); n > peakG {
				peakG = n
			}
			select {
			case <-stop:
				goruntime.ReadMemStats(&ms)
				sampled <- [2]uint64{peakG, max(peakStack, ms.StackInuse)}
				return
			case <-tick.C:
				goruntime.ReadMemStats(&ms)
				peakStack = max(peakStack, ms.StackInuse)
			}
		}
	}()
	res := run(t, rt, "P", in)
	close(stop)
	peak := <-sampled
	wantCompleted(t, res)
	if out := res.Output.([]any); len(out) != 100_000 || out[99_999].(map[string]any)["n"] != 99_999.0 {
		t.Fatalf("%d results", len(out))
	}
	// base counts this test's goroutine; the sampler is one more.
	if extra := int(peak[0]) - base - 1; extra > 8 {
		t.Errorf("%d goroutines beyond those before the run; want at most the 8 workers", extra)
	}
	if grew := int64(peak[1]) - int64(before.StackInuse); grew > 4<<20 {
		t.Errorf("goroutine stacks grew by %d bytes during the run", grew)
	}
	if len(res.Meta.Calls) != 0 {
		t.Errorf("%d calls recorded for System.Value", len(res.Meta.Calls))
	}
}

// TestBranchArms: conditions in order, the first that holds wins, else catches the rest,
// no arm passes the value through; an arm's stages flow, and its names stay inside it.
func TestBranchArms(t *testing.T) {
	var evs []runtime.Event
	var mu sync.Mutex
	rt := load(t, `
pipeline P(n: Number) -> Result:
  n
    |> System.Value({ n: n }) as v
    |> branch {
         "v.n > 10": System.Value("big") |> System.Value("{{context.data.v.n}} is big")
         "v.n > 5":  System.Value("mid") as label |> System.Value("{{label}} {{n}}")
         "v.n < 0":  System.Fail("negative")
         else: System.Value("small")
       } as word
    |> System.Value({ word: word, label: context.data.label })
pipeline Through(n: Number) -> Result:
  n |> branch { "n > 100": System.Value("huge") } |> System.Value({ passed: n })
`, runtime.Config{OnEvent: func(e runtime.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() }})
	for _, tc := range []struct {
		n    float64
		want string
		arm  string
	}{
		{20, `{"label":null,"word":"20 is big"}`, "v.n > 10"},
		{7, `{"label":null,"word":"mid 7"}`, "v.n > 5"},
		{1, `{"label":null,"word":"small"}`, "else"},
	} {
		evs = nil
		res := run(t, rt, "P", map[string]any{"n": tc.n})
		wantCompleted(t, res)
		if got, _ := json.Marshal(res.Output); string(got) != tc.want {
			t.Errorf("%v: %s, want %s", tc.n, got, tc.want)
		}
		var arm string
		for _, e := range evs {
			if e.Type == "branch" {
				arm = e.Arm
			}
		}
		if arm != tc.arm {
			t.Errorf("%v: branch event arm %q, want %q", tc.n, arm, tc.arm)
		}
	}
	res := run(t, rt, "P", map[string]any{"n": -1.0})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeFail || !strings.HasPrefix(res.Error.At, "test.halo:8:22") {
		t.Errorf("a failure in an arm: %s %+v; want the place of the stage in the arm", res.Status, res.Error)
	}
	res = run(t, rt, "Through", map[string]any{"n": 3.0})
	wantCompleted(t, res)
	if got, _ := json.Marshal(res.Output); string(got) != `{"passed":3}` {
		t.Errorf("no arm taken: %s", got)
	}
}

// TestBranchInsideStages: a |? in an arm, a loop that goes back within its arm, a fallback
// after the branch, a bad condition at run time, and events stamped with the arm.
func TestBranchInsideStages(t *testing.T) {
	var mu sync.Mutex
	var toolArms []string
	rt := load(t, `
tool T : Fake()
agent A [openai/gpt-4o]
pipeline P(x: String) -> Result:
  x
    |> branch {
         "x == 'fail'": T.boom() |? System.Value("handled {{context.data.error.code}}")
         "x == 'loop'": A.try() as r |<> loop(A, "r != 'three'", max: 5)
         else: T.boom()
       }
    |? System.Value("outer handled")
pipeline Bad(x: String) -> Result:
  x |> branch { "context.data.missing.x == 1": System.Value(1) }
`, runtime.Config{Tools: registry(t, &fakeProvider{}, nil), OnEvent: func(e runtime.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Type == "tool" {
			toolArms = append(toolArms, e.Arm)
		}
	}})
	rt.MockFunc("T.boom", func(runtime.MockRequest) (any, error) { return nil, tool.Errorf(tool.CodeToolError, "boom") })
	rt.Mock("A.try", []any{"one", "two", "three", "four"})
	res := run(t, rt, "P", map[string]any{"x": "fail"})
	wantCompleted(t, res)
	if res.Output != "handled TOOL_ERROR" {
		t.Errorf("fail: %v", res.Output)
	}
	res = run(t, rt, "P", map[string]any{"x": "loop"})
	wantCompleted(t, res)
	if res.Output != "three" {
		t.Errorf("loop: %v", res.Output)
	}
	res = run(t, rt, "P", map[string]any{"x": "other"})
	wantCompleted(t, res)
	if res.Output != "outer handled" {
		t.Errorf("else: %v", res.Output)
	}
	if strings.Join(toolArms, ",") != "x == 'fail',else" {
		t.Errorf("tool events' arms: %q", toolArms)
	}
	res = run(t, rt, "Bad", map[string]any{"x": "a"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeCondition {
		t.Errorf("bad condition: %s %+v", res.Status, res.Error)
	}
}

// TestNotPausableInside: a yield inside a branch arm, a |* each item or a fan-out branch
// cannot pause: NOT_PAUSABLE without an interrupt handler, the handler's answer with one.
func TestNotPausableInside(t *testing.T) {
	src := `
pipeline Arm(x: String) -> Result:
  x |> branch { else: |! yield("Sure about {{x}}?") }
pipeline Each(xs: List) -> Result:
  xs |* each Ask()
pipeline Fan(x: String) -> Result:
  x |* { Ask(), System.Value(1) }
pipeline Ask(x: Any) -> Result:
  x |! yield("Sure about {{x}}?")
`
	for _, tc := range []struct {
		pipeline string
		in       any
		where    string
		answered string
	}{
		{"Arm", "a", `inside the branch arm "else" at test.halo:3:17`, `"yes to Sure about a?"`},
		{"Each", []any{"a", "b"}, "in pipeline Ask, called from another pipeline", `["yes to Sure about a?","yes to Sure about b?"]`},
		{"Fan", "a", "in pipeline Ask, called from another pipeline", `["yes to Sure about a?",1]`},
	} {
		in := map[string]any{"x": tc.in}
		if tc.pipeline == "Each" {
			in = map[string]any{"xs": tc.in}
		}
		rt := load(t, src, runtime.Config{Store: newStore()})
		res := run(t, rt, tc.pipeline, in)
		if res.Status != runtime.Failed || res.Error.Code != runtime.CodeNotPausable || !strings.Contains(res.Error.Message, tc.where) {
			t.Errorf("%s: %s %+v", tc.pipeline, res.Status, res.Error)
		}
		rt = load(t, src, runtime.Config{OnInterrupt: func(_ context.Context, in runtime.Interrupt) (any, bool, error) {
			return "yes to " + in.Message, true, nil
		}})
		res = run(t, rt, tc.pipeline, in)
		wantCompleted(t, res)
		if got, _ := json.Marshal(res.Output); string(got) != tc.answered {
			t.Errorf("%s answered: %s, want %s", tc.pipeline, got, tc.answered)
		}
	}
}

// TestFanOutLimit: @limit bounds a |* { } fan-out too.
func TestFanOutLimit(t *testing.T) {
	var fl inFlight
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"work": func(ctx context.Context, a map[string]any) (any, error) {
			fl.enter()
			defer fl.leave()
			time.Sleep(2 * time.Millisecond)
			return a["input"], nil
		},
	}}
	rt := load(t, `
tool T : Fake()
pipeline P(x: String) -> Result:
  x |* { T.work(), T.work(), T.work(), T.work(), T.work() } @limit(2)
`, runtime.Config{Tools: registry(t, p, nil)})
	res := run(t, rt, "P", map[string]any{"x": "a"})
	wantCompleted(t, res)
	if fl.peak.Load() != 2 || fl.calls.Load() != 5 {
		t.Errorf("peak %d of %d calls; want 2 of 5", fl.peak.Load(), fl.calls.Load())
	}
}

// BenchmarkEach: a |* each over 1,000 items beside its floor, the same 1,000 calls made by
// 1,000 sequential stages of one pipeline.
func BenchmarkEach(b *testing.B) {
	const n = 1000
	floor := "pipeline Floor(x: Any) -> Result:\n  x" + strings.Repeat(" |> System.Value(x)", n) + "\n"
	rt := load(b, `
pipeline Each(xs: List) -> Result:
  xs |* each System.Value(item)
`+floor, runtime.Config{})
	for _, bc := range []struct {
		name, pipeline string
		in             map[string]any
	}{
		{"each", "Each", map[string]any{"xs": numbers(n)}},
		{"floor", "Floor", map[string]any{"x": 1.0}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				res, err := rt.Run(context.Background(), bc.pipeline, bc.in)
				if err != nil || res.Status != runtime.Completed {
					b.Fatal(err, res.Error)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
		})
	}
}

// TestQuotedMethod: a method whose name is not a name (an MCP tool called files.read) is
// called by writing it quoted; mocks and events know it as Tool.files.read.
func TestQuotedMethod(t *testing.T) {
	var called []string
	var mu sync.Mutex
	p := &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"files.read": func(_ context.Context, a map[string]any) (any, error) {
			mu.Lock()
			called = append(called, "files.read")
			mu.Unlock()
			return map[string]any{"content": "hello from " + a["path"].(string)}, nil
		},
	}}
	var targets []string
	rt := load(t, `
tool F : Fake()
pipeline P(path: String) -> Result:
  path |> F.`+"`files.read`"+`(path: path) as file |> F.`+"`files.stat`"+`() |> System.Value(file.content)
`, runtime.Config{Tools: registry(t, p, nil), OnEvent: func(e runtime.Event) {
		if e.Type == "tool" {
			targets = append(targets, e.Target)
		}
	}})
	rt.Mock("F.files.stat", map[string]any{"size": 3.0})
	res := run(t, rt, "P", map[string]any{"path": "a.txt"})
	wantCompleted(t, res)
	if res.Output != "hello from a.txt" || len(called) != 1 {
		t.Errorf("output %v, calls %v", res.Output, called)
	}
	if strings.Join(targets, ",") != "F.files.read,F.files.stat" {
		t.Errorf("event targets %v", targets)
	}
}

// TestFailurePlaces: a failure inside a branch arm is placed at the arm's stage; one inside
// a called pipeline at the calling stage, its message naming the pipeline.
func TestFailurePlaces(t *testing.T) {
	rt := load(t, `
pipeline Inner(x: String) -> Result:
  x |> System.Fail("inner failed")
pipeline Outer(x: String) -> Result:
  x |> Inner()
pipeline Arm(x: String) -> Result:
  x |> branch { else: Inner() }
`, runtime.Config{})
	res := run(t, rt, "Outer", map[string]any{"x": "a"})
	if res.Status != runtime.Failed || res.Error.At != "test.halo:5:5" || !strings.HasPrefix(res.Error.Message, "pipeline Inner: test.halo:3:5: inner failed") {
		t.Errorf("outer: %+v", res.Error)
	}
	res = run(t, rt, "Arm", map[string]any{"x": "a"})
	if res.Status != runtime.Failed || res.Error.At != "test.halo:7:23" || !strings.HasPrefix(res.Error.Message, "pipeline Inner: ") {
		t.Errorf("arm: %+v", res.Error)
	}
}
