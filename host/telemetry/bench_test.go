package telemetry_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/telemetry"
)

const benchSrc = `
tool Files : Fake()
agent Writer [openai/gpt-4o-mini]
pipeline P(x: String) -> Result:
  x |> Files.read(path: x) |> Files.read(path: x) |> Writer.sum("Sum up.")
`

// discard is an exporter that drops what it is given: the cost of building and batching
// spans without the network's.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkRun runs a three-stage pipeline (two tool calls, one model request) with
// telemetry never installed (the floor), installed but off (no endpoint: must cost what the
// floor costs), and on with an exporter that drops the spans.
func BenchmarkRun(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  *telemetry.Config
	}{
		{"floor", nil},
		{"off", &telemetry.Config{}},
		{"on", &telemetry.Config{Exporter: discard{}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := runtime.Config{Tools: registry(b), Models: fakeModel("done")}
			var tr *telemetry.Tracer
			if bc.cfg != nil {
				var err error
				if tr, err = telemetry.Open(context.Background(), *bc.cfg); err != nil {
					b.Fatal(err)
				}
				tr.Install(&cfg)
				defer tr.Shutdown(context.Background())
			}
			rt, err := runtime.Load("bench.halo", benchSrc, cfg)
			if err != nil {
				b.Fatal(err)
			}
			in := map[string]any{"x": "a"}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := rt.Run(context.Background(), "P", in)
				if err != nil || res.Status != runtime.Completed {
					b.Fatalf("%v %v", res, err)
				}
			}
		})
	}
}
