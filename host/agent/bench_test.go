package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
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
			cpu := cpuTime()
			for i := 0; i < b.N; i++ {
				c := conversation(b, steps, bc.set)
				if _, err := c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N*steps)/1e3, "cpu-µs/step")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps)/1e3, "µs/step")
		})
	}
	b.Run("floor-input-policies-16KB", func(b *testing.B) {
		b.ReportAllocs()
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			if _, err := realistic.Input(result16K[:DefaultResultChars]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N)/1e3, "cpu-µs/step")
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
