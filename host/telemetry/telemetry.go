// Package telemetry exports a run's marks and events as OpenTelemetry traces over OTLP: a
// span per run, per stage of the pipeline the run started with, per model request (with the
// GenAI semantic conventions' attributes) and per tool call, an agent's chosen calls with
// their decision. Prompts, answers, tool arguments and results go into spans only when
// Config.Content asks for them, and then as the events hold them: after the agent's Redact
// and Block rules.
//
// Telemetry is off unless an endpoint is configured, and costs nothing then: Open returns a
// nil *Tracer, whose Install leaves the runtime's configuration untouched. cmd/halo's run,
// resume, mcp and serve commands open one from the environment (ConfigFromEnv) and the
// --otel flag.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"halolang.dev/halo/host/runtime"
)

// Protocols an OTLP endpoint can speak.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Config says whether and where traces go.
type Config struct {
	// Endpoint is the collector's base URL (OTEL_EXPORTER_OTLP_ENDPOINT): over HTTP, traces
	// go to its path /v1/traces. "" (with TracesEndpoint "") means telemetry is off.
	Endpoint string
	// TracesEndpoint is the full URL traces go to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); it
	// wins over Endpoint.
	TracesEndpoint string
	// Protocol is ProtocolHTTP (the default) or ProtocolGRPC.
	Protocol string
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS), e.g. an API key.
	Headers map[string]string
	// ServiceName and ServiceVersion describe the process: "halo" and its version.
	ServiceName, ServiceVersion string
	// Content puts prompts, answers, tool arguments and results into spans, as events hold
	// them (after Redact; withheld where a Block rule matched).
	Content bool
	// Logger gets export failures; nil means none.
	Logger hclog.Logger
	// Exporter, when set, receives the spans instead of an OTLP exporter (tests); it turns
	// telemetry on by itself.
	Exporter sdktrace.SpanExporter
	// Sync exports each span as it ends instead of in batches (tests).
	Sync bool
	// Disabled turns telemetry off whatever else is set (OTEL_SDK_DISABLED=true,
	// OTEL_TRACES_EXPORTER=none).
	Disabled bool
}

// On reports whether cfg turns telemetry on.
func (cfg Config) On() bool {
	return !cfg.Disabled && (cfg.Endpoint != "" || cfg.TracesEndpoint != "" || cfg.Exporter != nil)
}

// The environment variables ConfigFromEnv reads: the OpenTelemetry SDKs' standard ones.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvHeaders        = "OTEL_EXPORTER_OTLP_HEADERS"
	EnvTracesHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
	EnvServiceName    = "OTEL_SERVICE_NAME"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
	// EnvContent is the GenAI instrumentations' switch for recording message content.
	EnvContent = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)

// ConfigFromEnv reads the standard OpenTelemetry variables from env (the environment
// cmd/halo read at start-up). OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn
// telemetry off whatever else is set. A header list that does not parse is an error.
func ConfigFromEnv(env map[string]string) (Config, error) {
	cfg := Config{
		Endpoint:       strings.TrimSpace(env[EnvEndpoint]),
		TracesEndpoint: strings.TrimSpace(env[EnvTracesEndpoint]),
		Protocol:       strings.TrimSpace(env[EnvProtocol]),
		ServiceName:    env[EnvServiceName],
		Content:        strings.EqualFold(strings.TrimSpace(env[EnvContent]), "true"),
	}
	if p := strings.TrimSpace(env[EnvTracesProtocol]); p != "" {
		cfg.Protocol = p
	}
	h, err := parseHeaders(env[EnvHeaders])
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", EnvHeaders, err)
	}
	th, err := parseHeaders(env[EnvTracesHeaders])
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", EnvTracesHeaders, err)
	}
	for k, v := range th {
		if h == nil {
			h = map[string]string{}
		}
		h[k] = v
	}
	cfg.Headers = h
	cfg.Disabled = strings.EqualFold(strings.TrimSpace(env[EnvSDKDisabled]), "true") || strings.EqualFold(strings.TrimSpace(env[EnvTracesExporter]), "none")
	return cfg, nil
}

// parseHeaders reads the W3C-baggage-like list OTLP exporters take: key=value pairs
// separated by commas, values percent-encoded.
func parseHeaders(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(part, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, errors.New("want key=value pairs separated by commas")
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[k] = dv
	}
	return out, nil
}

// A Tracer turns the marks and events of the runs of the runtimes it is installed in into
// spans. A nil *Tracer is off: its methods do nothing.
type Tracer struct {
	cfg      Config
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	log      hclog.Logger

	mu   sync.Mutex
	runs map[string]*runSpans
}

// Open starts exporting as cfg says. It returns nil, nil when cfg does not turn telemetry
// on. Nothing is sent until a run starts; a collector that cannot be reached costs failed
// exports (logged as warnings), never a failed run.
func Open(ctx context.Context, cfg Config) (*Tracer, error) {
	if !cfg.On() {
		return nil, nil
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.ServiceName == "" {
		cfg.ServiceName = "halo"
	}
	exp := cfg.Exporter
	if exp == nil {
		var err error
		if exp, err = newExporter(ctx, cfg); err != nil {
			return nil, err
		}
	}
	exp = &quietExporter{inner: exp, log: cfg.Logger}
	var proc sdktrace.SpanProcessor
	if cfg.Sync {
		proc = sdktrace.NewSimpleSpanProcessor(exp)
	} else {
		proc = sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBatchTimeout(2*time.Second))
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(cfg.ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(proc),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, attrs...)),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())),
		sdktrace.WithRawSpanLimits(limits),
	)
	return &Tracer{
		cfg: cfg, provider: tp, log: cfg.Logger, runs: map[string]*runSpans{},
		tracer: tp.Tracer("halolang.dev/halo/host/telemetry", trace.WithSchemaURL(semconv.SchemaURL)),
	}, nil
}

// limits bound what one span holds: a prompt or a tool result is cut at 32 KiB.
var limits = sdktrace.SpanLimits{
	AttributeValueLengthLimit:   32 << 10,
	AttributeCountLimit:         64,
	EventCountLimit:             256,
	LinkCountLimit:              8,
	AttributePerEventCountLimit: 16,
	AttributePerLinkCountLimit:  8,
}

// newExporter makes the OTLP exporter cfg names.
func newExporter(ctx context.Context, cfg Config) (sdktrace.SpanExporter, error) {
	target := cfg.TracesEndpoint
	switch cfg.Protocol {
	case "", ProtocolHTTP:
		if target == "" {
			u, err := url.Parse(cfg.Endpoint)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", cfg.Endpoint)
			}
			u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
			target = u.String()
		} else if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("OTLP traces endpoint %q: want an http:// or https:// URL", target)
		}
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(target), otlptracehttp.WithTimeout(10 * time.Second)}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
		}
		return otlptracehttp.New(ctx, opts...)
	case ProtocolGRPC:
		if target == "" {
			target = cfg.Endpoint
		}
		if u, err := url.Parse(target); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", target)
		}
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(target), otlptracegrpc.WithTimeout(10 * time.Second)}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("OTLP protocol %q: want %s or %s", cfg.Protocol, ProtocolHTTP, ProtocolGRPC)
}

// Install makes the runtime configuration cfg report to t: its OnMark, and its OnEvent
// beside the one it has. On a nil Tracer it does nothing.
func (t *Tracer) Install(cfg *runtime.Config) {
	if t == nil {
		return
	}
	cfg.OnMark = t.Mark
	if prev := cfg.OnEvent; prev != nil {
		cfg.OnEvent = func(e runtime.Event) { prev(e); t.Event(e) }
	} else {
		cfg.OnEvent = t.Event
	}
}

// Shutdown ends the spans of runs still going, exports what is left and stops. It waits
// at most until ctx is done. On a nil Tracer it does nothing.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	for id, rs := range t.runs {
		rs.abandon(t)
		delete(t.runs, id)
	}
	t.mu.Unlock()
	return t.provider.Shutdown(ctx)
}

// quietExporter logs a failed export instead of handing it to OpenTelemetry's global error
// handler (which prints to the process's stderr), and logs one failure in a row only.
type quietExporter struct {
	inner  sdktrace.SpanExporter
	log    hclog.Logger
	mu     sync.Mutex
	failed bool
}

func (q *quietExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := q.inner.ExportSpans(ctx, spans)
	q.mu.Lock()
	defer q.mu.Unlock()
	if err != nil && !q.failed {
		q.log.Warn("traces not exported", "spans", len(spans), "error", err)
	}
	q.failed = err != nil
	return nil
}

func (q *quietExporter) Shutdown(ctx context.Context) error { return q.inner.Shutdown(ctx) }
