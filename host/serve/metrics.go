package serve

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"halolang.dev/halo/host/runtime"
)

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	handler  http.Handler
	runs     *prometheus.CounterVec
	running  prometheus.Gauge
	stage    *prometheus.HistogramVec
	model    *prometheus.HistogramVec
	tool     *prometheus.HistogramVec
	tokens   *prometheus.CounterVec
	cost     *prometheus.CounterVec
	requests *prometheus.CounterVec
}

func newMetrics() *metrics {
	reg := prometheus.NewRegistry()
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "halo_runs_total", Help: "Runs that stopped, by pipeline and status (completed, failed, paused; a run that pauses twice counts twice).",
		}, []string{"pipeline", "status"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "halo_runs_running", Help: "Runs running in this process now.",
		}),
		stage: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "halo_stage_duration_seconds", Help: "How long each stage of a pipeline took.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"pipeline"}),
		model: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "halo_model_call_duration_seconds", Help: "How long each model request took, by model.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2.5, 10),
		}, []string{"model"}),
		tool: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "halo_tool_call_duration_seconds", Help: "How long each tool call took, by target.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"target"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "halo_model_tokens_total", Help: "Tokens of model requests, by model and kind (input, output).",
		}, []string{"model", "kind"}),
		cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "halo_model_cost_dollars_total", Help: "What model requests cost, in dollars from the price table, by model.",
		}, []string{"model"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "halo_http_requests_total", Help: "HTTP requests answered, by status code.",
		}, []string{"code"}),
	}
	reg.MustRegister(m.runs, m.running, m.stage, m.model, m.tool, m.tokens, m.cost, m.requests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

func (m *metrics) stopped(pipeline string, st runtime.Status) {
	if st == runtime.Running {
		return
	}
	m.runs.WithLabelValues(pipeline, string(st)).Inc()
}

func (m *metrics) event(pipeline string, e runtime.Event, stage time.Duration) {
	switch e.Type {
	case "stage":
		m.stage.WithLabelValues(pipeline).Observe(stage.Seconds())
	case "llm":
		name := e.Model
		if name == "" {
			name = e.Target
		}
		m.model.WithLabelValues(name).Observe(float64(e.DurationMs) / 1000)
		if e.Usage != nil {
			m.tokens.WithLabelValues(name, "input").Add(float64(e.Usage.InputTokens))
			m.tokens.WithLabelValues(name, "output").Add(float64(e.Usage.OutputTokens))
		}
		if e.Cost > 0 {
			m.cost.WithLabelValues(name).Add(e.Cost)
		}
	case "tool":
		m.tool.WithLabelValues(e.Target).Observe(float64(e.DurationMs) / 1000)
	}
}

func (m *metrics) request(status int) { m.requests.WithLabelValues(strconv.Itoa(status)).Inc() }
