package telemetry

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"halolang.dev/halo/host/runtime"
)

// ExportConfig says what TraceJSON puts in a trace.
type ExportConfig struct {
	// ServiceName and ServiceVersion describe the process, as Config's do: "halo" and its
	// version.
	ServiceName, ServiceVersion string
	// Content puts prompts, answers, tool arguments and results into spans, as the record's
	// events hold them (after Redact; withheld where a Block rule matched).
	Content bool
}

// TraceJSON returns the trace of the run rec records, as OTLP JSON: the body of an OTLP/HTTP
// export (an ExportTraceServiceRequest) that a collector, or a file receiver, takes as it is.
// The spans are those a Tracer makes of the run while it runs (run, stages, model requests,
// tool calls with their decisions, violations and pauses as span events), made from the
// record's events: a stage begins where the one before it ended. The trace id is derived from
// the run id, and span ids count up from 1, so one record always gives the same trace.
//
// The JSON is written by the OTLP exporter itself (its JSON encoding), through a transport
// that keeps the body rather than sending it: nothing leaves the process.
func TraceJSON(ctx context.Context, rec *runtime.Record, cfg ExportConfig) ([]byte, error) {
	if cfg.ServiceName == "" {
		cfg.ServiceName = "halo"
	}
	mem := tracetest.NewInMemoryExporter()
	attrs := []attribute.KeyValue{semconv.ServiceName(cfg.ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	res := resource.NewWithAttributes(semconv.SchemaURL, attrs...)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(mem),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithRawSpanLimits(limits),
		sdktrace.WithIDGenerator(newRecordIDs(rec.RunID)),
	)
	t := &Tracer{cfg: Config{Content: cfg.Content}, provider: tp, runs: map[string]*runSpans{},
		tracer: tp.Tracer("halolang.dev/halo/host/telemetry", trace.WithSchemaURL(semconv.SchemaURL))}
	replayRecord(ctx, t, rec)
	// The syncer has every span once each ended; the exporter's Shutdown (with the
	// provider's) forgets them.
	spans := mem.GetSpans().Snapshots()
	if err := tp.Shutdown(ctx); err != nil {
		return nil, fmt.Errorf("trace of run %s: %w", rec.RunID, err)
	}

	keep := &keepBody{}
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL("http://trace.invalid/v1/traces"),
		otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON),
		otlptracehttp.WithCompression(otlptracehttp.NoCompression),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}),
		otlptracehttp.WithHTTPClient(&http.Client{Transport: keep}),
	)
	if err != nil {
		return nil, fmt.Errorf("trace of run %s: %w", rec.RunID, err)
	}
	defer exp.Shutdown(context.WithoutCancel(ctx))
	if err := exp.ExportSpans(ctx, spans); err != nil {
		return nil, fmt.Errorf("trace of run %s: %w", rec.RunID, err)
	}
	if keep.body == nil {
		return nil, fmt.Errorf("trace of run %s: the exporter wrote nothing", rec.RunID)
	}
	return keep.body, nil
}

// replayRecord tells t the marks and events of the run rec records, as they came: the run
// begins when it started; each stage begins where the one before ended (or the run began)
// and ends with its "stage" event; the events after the last one are those of a stage that
// did not finish (it failed, or the run waits in it), which ends with the run.
func replayRecord(ctx context.Context, t *Tracer, rec *runtime.Record) {
	id := rec.RunID
	t.Mark(ctx, runtime.Mark{Kind: "run", RunID: id, Pipeline: rec.Pipeline, Time: rec.Started})
	end := rec.Updated
	var group []runtime.Event
	index := 0
	begin := rec.Started
	stage := func(m runtime.Mark, done time.Time, failed *runtime.ErrorInfo) {
		m.Kind, m.RunID, m.Pipeline, m.Index, m.Time = "stage", id, rec.Pipeline, index, begin
		t.Mark(ctx, m)
		for _, e := range group {
			e.RunID = id
			t.Event(e)
		}
		m.End, m.Time, m.Error = true, done, failed
		t.Mark(ctx, m)
		index++
		begin, group = done, group[:0]
	}
	for _, e := range rec.Events {
		switch e.Type {
		case "run":
			if e.Time.After(end) {
				end = e.Time
			}
			continue
		case "stage":
			stage(runtime.Mark{At: e.At, Target: e.Target}, e.Time, nil)
			continue
		}
		group = append(group, e)
	}
	if len(group) > 0 {
		m := runtime.Mark{At: group[0].At}
		for _, e := range group {
			if (e.Type == "llm" || e.Type == "tool") && e.Target != "" {
				m.Target = e.Target // the stage's own call, or its first
				break
			}
			if e.Type == "paused" && e.Channel != runtime.ChannelApproval {
				// A stage that only waits, named as its call is: yield("..."), listen("...").
				m.Target = "listen"
				if e.Channel == runtime.ChannelYield {
					m.Target = "yield"
				}
			}
		}
		last := group[len(group)-1].Time
		if end.After(last) {
			last = end
		}
		var failed *runtime.ErrorInfo
		if rec.Status == runtime.Failed {
			failed = rec.Error
		}
		stage(m, last, failed)
	}
	if begin.After(end) {
		end = begin
	}
	t.Mark(ctx, runtime.Mark{Kind: "run", RunID: id, Pipeline: rec.Pipeline, End: true, Time: end, Status: rec.Status, Error: rec.Error})
}

// recordIDs gives a record's trace the id derived from its run id, and its spans ids that
// count up from 1.
type recordIDs struct {
	mu    sync.Mutex
	trace trace.TraceID
	next  uint64
}

func newRecordIDs(runID string) *recordIDs {
	sum := sha256.Sum256([]byte("halo run " + runID))
	g := &recordIDs{}
	copy(g.trace[:], sum[:16])
	return g
}

func (g *recordIDs) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	return g.trace, g.NewSpanID(ctx, g.trace)
}

func (g *recordIDs) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.next++
	var s trace.SpanID
	binary.BigEndian.PutUint64(s[:], g.next)
	return s
}

// keepBody is an HTTP transport that keeps the body of the one request it gets and answers
// it 200: the OTLP exporter's JSON, without a network.
type keepBody struct {
	body []byte
}

func (k *keepBody) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil {
		return nil, errors.New("an export without a body")
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	k.body = b
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(nil)), Request: req}, nil
}
