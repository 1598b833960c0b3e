package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/internal/cputime"
)

// twenty offers twenty methods, as a Workspace, a Bash and an MCP server together might.
func twenty() []Tool {
	var ms []Method
	for i := 0; i < 20; i++ {
		ms = append(ms, Method{Tool: fmt.Sprintf("T%d", i/5), Method: tool.Method{
			Name: fmt.Sprintf("m%d", i), Description: "Does one thing to a file in the project.", Effect: tool.Read,
			Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path"]}`)}})
	}
	return Offer(ms)
}

// result16K is a 16 KB tool result: source text with no detector matches in it.
var result16K = strings.Repeat("export function parseDate(s: string): Date { return new Date(s); }\n", 16<<10/60)[:16<<10]

// realistic is a policy set like the seed's FixerTools plus content rules on results.
var realistic = policy.Set{
	policy.MustCompile("FixerTools", []policy.RuleSpec{
		{Name: "AllowTools", Args: []any{"T0.*", "T1.*", "T2.*", "T3.*"}},
		{Name: "DenyTools", Args: []any{"T0.delete"}},
		{Name: "DenyArgs", Args: []any{"T1.*", "path", "\\.test\\."}},
	}),
	policy.MustCompile("Safe", []policy.RuleSpec{
		{Name: "Redact", Args: []any{policy.Ident("PII")}},
		{Name: "Block", Args: []any{policy.Ident("APIKey")}},
	}),
}

// stepper is a model that asks for one call until it has asked steps times, then answers;
// its replies are built once, so the model's own cost is not measured.
type stepper struct {
	n, steps int
	ask, end model.Response
}

func newStepper(steps int) *stepper {
	c := model.ToolCall{ID: "c", Name: "T1__m7", Args: json.RawMessage(`{"path":"src/date.ts"}`)}
	return &stepper{steps: steps,
		ask: model.Response{ToolCalls: []model.ToolCall{c}, Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{c}}},
		end: model.Response{Text: "done", Message: model.Message{Role: model.Assistant, Text: "done"}}}
}

func (s *stepper) Complete(context.Context, model.Request) (model.Response, error) {
	s.n++
	if s.n > s.steps {
		return s.end, nil
	}
	return s.ask, nil
}

func conversation(b testing.TB, steps int, set policy.Set) *Conversation {
	c, err := New(Config{
		Model: newStepper(steps), Prompt: "Fix the project.", Tools: twenty(), Policies: set, MaxSteps: steps,
		Run: func(context.Context, Call) (any, error) { return result16K, nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkLoopStep is the loop's own cost per step (a request that asked for a tool call,
// the call decided, run and fed back) with 20 tools offered and a 16 KB result; model and
// tool are excluded (they answer prebuilt values). The floor beside it is what the step
// cannot avoid: the agent's input policies reading the 16 KB result once. cpu-µs/step is the
// process's CPU time per step (garbage collection included), steadier than µs/step on a
// busy machine.
func BenchmarkLoopStep(b *testing.B) {
	const steps = 10
	for _, bc := range []struct {
		name string
		set  policy.Set
	}{{"no-policies", nil}, {"policies", realistic}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := cputime.Self()
			for i := 0; i < b.N; i++ {
				c := conversation(b, steps, bc.set)
				if _, err := c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cputime.Self()-cpu).Nanoseconds())/float64(b.N*steps)/1e3, "cpu-µs/step")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps)/1e3, "µs/step")
		})
	}
	b.Run("floor-input-policies-16KB", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cputime.Self()
		for i := 0; i < b.N; i++ {
			if _, err := realistic.Input(result16K[:DefaultResultChars]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cputime.Self()-cpu).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/step")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "µs/step")
	})
}

// BenchmarkLoopGrowth runs conversations of 10 and 100 steps of 16 KB results: the bytes
// and allocations per step stay flat when nothing copies the conversation per step.
func BenchmarkLoopGrowth(b *testing.B) {
	for _, steps := range []int{10, 100} {
		b.Run(fmt.Sprintf("steps=%d", steps), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for i := 0; i < b.N; i++ {
				c := conversation(b, steps, nil)
				if _, err := c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			n := float64(b.N * steps)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/step")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/step")
		})
	}
}

// TestLoopGrowsLinearly: a 100-step conversation allocates per step about what a 10-step one
// does (no quadratic copying of the conversation).
func TestLoopGrowsLinearly(t *testing.T) {
	perStep := func(steps int) float64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		c := conversation(t, steps, nil)
		if _, err := c.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(steps)
	}
	small, large := perStep(10), perStep(100)
	if large > 1.5*small {
		t.Errorf("bytes per step: %.0f at 10 steps, %.0f at 100: the conversation is copied per step", small, large)
	}
}

// httpReplies are each provider's answer asking for one more tool call, and its last answer,
// in the shape of its API documentation (testdata/wire has the fuller ones).
var httpReplies = map[string][2]string{
	"openai/m": {
		`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"T1__m7","arguments":"{\"path\":\"src/date.ts\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`,
		`{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`},
	"anthropic/m": {
		`{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"T1__m7","input":{"path":"src/date.ts"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`,
		`{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}`},
	"google/m": {
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"T1__m7","args":{"path":"src/date.ts"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5},"modelVersion":"m"}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"done"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5},"modelVersion":"m"}`},
	"ollama/m": {
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"T1__m7","arguments":{"path":"src/date.ts"}}}]},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":5}`,
		`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"done"},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":5}`},
}

// stepServer answers the requests of conversations of steps steps: a tool call until the
// conversation has had steps answers, then the end. It reads every body, as a model server
// does, and keeps the bodies of the first conversation when keep is set.
type stepServer struct {
	steps   int
	replies [2][]byte
	keep    bool
	mu      sync.Mutex
	n       int
	bodies  [][]byte
}

func (s *stepServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.n++
	last := s.n%(s.steps+1) == 0
	if s.keep && len(s.bodies) <= s.steps {
		s.bodies = append(s.bodies, b)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if last {
		w.Write(s.replies[1])
	} else {
		w.Write(s.replies[0])
	}
}

// BenchmarkHTTPSteps is a 40-step conversation with a model over loopback HTTP, per provider
// wire format: 20 tools offered, the model asks for one call per step and reads its 16 KB
// result, so the last request carries 640 KB. µs/step is the whole loop per step; the floor
// beside it (floor-http) posts the very bodies the conversation sent, recorded by the fake
// server, with net/http alone and reads the same answers, so the loop's own cost per step
// is µs/step less the floor's. B/step is what the loop allocates per step (the floor
// allocates what net/http does).
func BenchmarkHTTPSteps(b *testing.B) {
	const steps = 40
	for _, ref := range []string{"openai/m", "anthropic/m", "google/m", "ollama/m"} {
		provider, _, _ := strings.Cut(ref, "/")
		replies := httpReplies[ref]
		fake := &stepServer{steps: steps, replies: [2][]byte{[]byte(replies[0]), []byte(replies[1])}, keep: true}
		srv := httptest.NewServer(fake)
		env := map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL + "/v1", "ANTHROPIC_API_KEY": "k",
			"ANTHROPIC_BASE_URL": srv.URL, "GEMINI_API_KEY": "k", "GEMINI_BASE_URL": srv.URL, "OLLAMA_HOST": srv.URL}
		prov, id, err := model.Open(ref, model.Config{Env: env, MaxAttempts: 1})
		if err != nil {
			b.Fatal(err)
		}
		run := func(b *testing.B) {
			c, err := New(Config{Model: prov, Request: model.Request{Model: id, System: "You fix the project."},
				Prompt: "Fix the project.", Tools: twenty(), MaxSteps: steps,
				Run: func(context.Context, Call) (any, error) { return result16K, nil }})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(provider, func(b *testing.B) {
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu := cputime.Self()
			for b.Loop() {
				run(b)
			}
			b.ReportMetric(float64((cputime.Self()-cpu).Microseconds())/float64(b.N*(steps+1)), "cpu-µs/step")
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*(steps+1)), "µs/step")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*(steps+1)), "B/step")
		})
		bodies := fake.bodies
		b.Run(provider+"/floor-http", func(b *testing.B) {
			b.ReportAllocs()
			client := srv.Client()
			cpu := cputime.Self()
			for b.Loop() {
				for _, body := range bodies {
					resp, err := client.Post(srv.URL+"/floor", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			b.ReportMetric(float64((cputime.Self()-cpu).Microseconds())/float64(b.N*len(bodies)), "cpu-µs/step")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(bodies)), "µs/step")
		})
		srv.Close()
	}
}
