package serve_test

import (
	"testing"
	"time"

	"halolang.dev/halo/host/telemetry/otlptest"
)

// halo serve exports each run it serves as a trace when OTEL_EXPORTER_OTLP_ENDPOINT is set,
// as halo run does.
func TestServeTraces(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	p := startServe(t, project(t), []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL})
	status, m := p.do("POST", "/api/runs?wait=20s", `{"pipeline": "Three", "inputs": {"x": "a"}}`)
	if status != 200 || m["status"] != "completed" {
		t.Fatalf("%d %v", status, m)
	}
	// The batch goes out within its two-second timeout while the server runs.
	spans := rcv.Wait(7, 20*time.Second)
	want := "run Three\n  stage A.one\n    chat gpt-4o\n  stage A.two\n    chat gpt-4o\n  stage A.three\n    chat gpt-4o\n"
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("trace:\n%s\nwant:\n%s\n%s", got, want, p.stderr())
	}
	if run, ok := otlptest.Find(spans, "run Three"); !ok || run.Attrs["halo.run.id"] != m["runId"] {
		t.Errorf("run span %+v", run)
	}
}
