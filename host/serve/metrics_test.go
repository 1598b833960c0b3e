package serve

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
)

// TestMetricsByLabel: each label set counts on its own (the metrics keep each label's
// counter after its first use), and what was counted first keeps counting.
func TestMetricsByLabel(t *testing.T) {
	m := newMetrics()
	for _, status := range []int{200, 200, 202, 404, 200} {
		m.request(status)
	}
	m.stopped("A", runtime.Completed)
	m.stopped("B", runtime.Completed)
	m.stopped("A", runtime.Failed)
	m.stopped("A", runtime.Completed)
	m.stopped("A", runtime.Running) // not a stop
	llm := runtime.Event{Type: "llm", Model: "openai/gpt-4o", DurationMs: 20, Usage: &model.Usage{InputTokens: 7, OutputTokens: 3}, Cost: 0.5}
	m.event("A", llm, 0)
	m.event("A", llm, 0)
	m.event("A", runtime.Event{Type: "llm", Target: "W.step", DurationMs: 10}, 0)
	m.event("A", runtime.Event{Type: "stage"}, time.Millisecond)
	m.event("B", runtime.Event{Type: "stage"}, time.Millisecond)
	m.event("A", runtime.Event{Type: "tool", Target: "T.call", DurationMs: 5}, 0)
	rec := httptest.NewRecorder()
	m.handler.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	text := string(b)
	for _, want := range []string{
		`halo_http_requests_total{code="200"} 3`,
		`halo_http_requests_total{code="202"} 1`,
		`halo_http_requests_total{code="404"} 1`,
		`halo_runs_total{pipeline="A",status="completed"} 2`,
		`halo_runs_total{pipeline="A",status="failed"} 1`,
		`halo_runs_total{pipeline="B",status="completed"} 1`,
		`halo_model_call_duration_seconds_count{model="openai/gpt-4o"} 2`,
		`halo_model_call_duration_seconds_count{model="W.step"} 1`,
		`halo_model_tokens_total{kind="input",model="openai/gpt-4o"} 14`,
		`halo_model_tokens_total{kind="output",model="openai/gpt-4o"} 6`,
		`halo_model_cost_dollars_total{model="openai/gpt-4o"} 1`,
		`halo_stage_duration_seconds_count{pipeline="A"} 1`,
		`halo_stage_duration_seconds_count{pipeline="B"} 1`,
		`halo_tool_call_duration_seconds_count{target="T.call"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in the metrics", want)
		}
	}
	if strings.Contains(text, `status="running"`) {
		t.Errorf("a running run counted as stopped")
	}
}
