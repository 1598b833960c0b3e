package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// BenchmarkTenStages measures the runtime's overhead per stage: a 10-stage pipeline whose
// agent and tool calls are all answered by mock functions. The floor is the same ten mock
// functions called directly, so the difference is what the runtime adds (argument
// evaluation, prompts, policies, events, meta). The target is under 100µs a stage.
func BenchmarkTenStages(b *testing.B) {
	var stages []string
	for i := 0; i < 5; i++ {
		stages = append(stages, fmt.Sprintf(`|> W.step%d("Step %d of {{x}}.") as a%d`, i, i, i))
		stages = append(stages, fmt.Sprintf(`|> T.call%d(n: %d) as t%d`, i, i, i))
	}
	src := `
policy Safe : Block(PromptInjection) & Redact(PII)
tool T : Fake()
agent W [openai/gpt-4o-mini]
  requires Safe
pipeline Ten(x: String) -> Result:
  x
    ` + strings.Join(stages, "\n    ") + "\n"
	answer := func(runtime.MockRequest) (any, error) { return "an answer of a few words", nil }
	result := func(runtime.MockRequest) (any, error) { return map[string]any{"ok": true}, nil }
	rt := load(b, src, runtime.Config{Tools: registry(b, &fakeProvider{}, nil), NewID: func() string { return "bench" }})
	var fns []runtime.MockFunc
	for i := 0; i < 5; i++ {
		rt.MockFunc(fmt.Sprintf("W.step%d", i), answer)
		rt.MockFunc(fmt.Sprintf("T.call%d", i), result)
		fns = append(fns, answer, result)
	}
	in := map[string]any{"x": "the input"}
	b.Run("floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range fns {
				f(runtime.MockRequest{})
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/stage")
	})
	b.Run("pipeline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := rt.Run(context.Background(), "Ten", in)
			if err != nil || res.Status != runtime.Completed {
				b.Fatalf("%v %+v", err, res)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/stage")
	})
}
