package serve

import (
	"net/http"
	"strconv"
	"sync"
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

	// The children of the vectors a run or a request counts in, by their labels: a vector
	// hashes the labels at every lookup, several times a call.
	runsBy   children[prometheus.Counter]
	stageBy  children[prometheus.Observer]
	modelBy  children[prometheus.Observer]
	toolBy   children[prometheus.Observer]
	tokensBy children[prometheus.Counter]
	costBy   children[prometheus.Counter]
	codes    children[prometheus.Counter]
}

// children keeps a vector's metrics by their labels (one or two). The labels are the
// program's pipelines, models and targets, and status codes: a bounded set.
type children[M any] struct {
	mu sync.RWMutex
	m  map[[2]string]M
}

// get returns the metric of labels a and b ("" when the vector has one label), made by with
// the first time.
func (c *children[M]) get(a, b string, with func(...string) M) M {
	k := [2]string{a, b}
	c.mu.RLock()
	m, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return m
	}
	if b == "" {
		m = with(a)
	} else {
		m = with(a, b)
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[2]string]M{}
	}
	c.m[k] = m
	c.mu.Unlock()
	return m
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
	m.runsBy.get(pipeline, string(st), m.runs.WithLabelValues).Inc()
}

func (m *metrics) event(pipeline string, e runtime.Event, stage time.Duration) {
	switch e.Type {
	case "stage":
		m.stageBy.get(pipeline, "", m.stage.WithLabelValues).Observe(stage.Seconds())
	case "llm":
		name := e.Model
		if name == "" {
			name = e.Target
		}
		m.modelBy.get(name, "", m.model.WithLabelValues).Observe(float64(e.DurationMs) / 1000)
		if e.Usage != nil {
			m.tokensBy.get(name, "input", m.tokens.WithLabelValues).Add(float64(e.Usage.InputTokens))
			m.tokensBy.get(name, "output", m.tokens.WithLabelValues).Add(float64(e.Usage.OutputTokens))
		}
		if e.Cost > 0 {
			m.costBy.get(name, "", m.cost.WithLabelValues).Add(e.Cost)
		}
	case "tool":
		m.toolBy.get(e.Target, "", m.tool.WithLabelValues).Observe(float64(e.DurationMs) / 1000)
	}
}

func (m *metrics) request(status int) {
	code := statusText(status)
	m.codes.get(code, "", m.requests.WithLabelValues).Inc()
}

// statusText is status in decimal, without making a string for the usual ones.
func statusText(status int) string {
	switch status {
	case http.StatusOK:
		return "200"
	case http.StatusAccepted:
		return "202"
	}
	return strconv.Itoa(status)
}
