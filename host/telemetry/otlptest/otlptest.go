// Package otlptest is an in-process OTLP trace receiver for tests: it accepts exports over
// HTTP (protobuf or JSON, gzip or not) or gRPC, decodes them, and lets a test read back the spans
// and the tree they make.
package otlptest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// A Span is one decoded span.
type Span struct {
	Name                      string
	TraceID, SpanID, ParentID string
	Kind                      string
	Start, End                time.Time
	Attrs                     map[string]any
	Events                    []Event
	StatusCode, StatusMessage string
	Resource                  map[string]any
	Scope                     string
}

// An Event is one span event.
type Event struct {
	Name  string
	Attrs map[string]any
}

// A Receiver keeps every span sent to it.
type Receiver struct {
	// URL is the base endpoint to give an exporter (OTEL_EXPORTER_OTLP_ENDPOINT).
	URL string
	// Headers are the last export's request headers (HTTP) or metadata (gRPC).
	mu      sync.Mutex
	spans   []Span
	headers map[string][]string
	changed chan struct{}
	close   func()
}

func newReceiver() *Receiver { return &Receiver{changed: make(chan struct{}, 1)} }

// NewHTTP starts a receiver of OTLP over HTTP on a loopback port; traces go to URL+"/v1/traces".
func NewHTTP() *Receiver {
	r := newReceiver()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		var body io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(io.LimitReader(body, 64<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg coltracepb.ExportTraceServiceRequest
		switch req.Header.Get("Content-Type") {
		case "application/x-protobuf":
			err = proto.Unmarshal(b, &msg)
		case "application/json":
			err = UnmarshalJSON(b, &msg)
		default:
			http.Error(w, "want application/x-protobuf or application/json", http.StatusUnsupportedMediaType)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg, req.Header)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	})
	srv := httptest.NewServer(mux)
	r.URL = srv.URL
	r.close = srv.Close
	return r
}

// NewGRPC starts a receiver of OTLP over gRPC on a loopback port; URL is http://host:port.
func NewGRPC() (*Receiver, error) {
	r := newReceiver()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, &grpcService{r: r})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	r.URL = "http://" + ln.Addr().String()
	r.close = func() { srv.Stop(); <-done }
	return r, nil
}

type grpcService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (g *grpcService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.r.add(req, nil)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Close stops the receiver.
func (r *Receiver) Close() { r.close() }

// UnmarshalJSON decodes an export in OTLP's JSON encoding, strictly: a field the protocol
// does not have is an error. OTLP JSON is protobuf's JSON mapping except that trace and span
// ids are hex, not base64.
func UnmarshalJSON(b []byte, msg *coltracepb.ExportTraceServiceRequest) error {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return err
	}
	if err := hexIDs(doc); err != nil {
		return err
	}
	fixed, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return protojson.Unmarshal(fixed, msg)
}

// hexIDs turns the hex ids of an OTLP JSON document into the base64 protojson reads.
func hexIDs(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				raw, err := hex.DecodeString(s)
				if err != nil {
					return fmt.Errorf("%s %q is not hex: %w", k, s, err)
				}
				x[k] = base64.StdEncoding.EncodeToString(raw)
				continue
			}
			if err := hexIDs(val); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := hexIDs(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// ParseJSON returns the spans of an export in OTLP's JSON encoding.
func ParseJSON(b []byte) ([]Span, error) {
	var msg coltracepb.ExportTraceServiceRequest
	if err := UnmarshalJSON(b, &msg); err != nil {
		return nil, err
	}
	return spansOf(&msg), nil
}

func (r *Receiver) add(msg *coltracepb.ExportTraceServiceRequest, h http.Header) {
	got := spansOf(msg)
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	if h != nil {
		r.headers = h.Clone()
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func spansOf(msg *coltracepb.ExportTraceServiceRequest) []Span {
	var got []Span
	for _, rs := range msg.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{
					Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentID: hex.EncodeToString(s.ParentSpanId), Kind: strings.TrimPrefix(s.Kind.String(), "SPAN_KIND_"),
					Start: time.Unix(0, int64(s.StartTimeUnixNano)).UTC(), End: time.Unix(0, int64(s.EndTimeUnixNano)).UTC(),
					Attrs: attrs(s.Attributes), Resource: res, Scope: ss.GetScope().GetName(),
					StatusCode: strings.TrimPrefix(s.GetStatus().GetCode().String(), "STATUS_CODE_"), StatusMessage: s.GetStatus().GetMessage(),
				}
				for _, e := range s.Events {
					sp.Events = append(sp.Events, Event{Name: e.Name, Attrs: attrs(e.Attributes)})
				}
				got = append(got, sp)
			}
		}
	}
	return got
}

func attrs(kvs []*commonpb.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, value(e))
		}
		return out
	}
	return nil
}

// Spans returns the spans received so far, in the order they arrived.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Header returns a request header of the last export over HTTP.
func (r *Receiver) Header(name string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return http.Header(r.headers).Get(name)
}

// Wait waits until the receiver holds at least n spans, or the timeout passes, and returns
// the spans it has.
func (r *Receiver) Wait(n int, timeout time.Duration) []Span {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if s := r.Spans(); len(s) >= n {
			return s
		}
		select {
		case <-r.changed:
		case <-deadline.C:
			return r.Spans()
		}
	}
}

// Tree prints spans as an indented tree of names, children in start order, one per line:
// the shape of a trace, for a test to compare.
func Tree(spans []Span) string {
	children := map[string][]Span{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	var roots []Span
	for _, s := range spans {
		if s.ParentID == "" || !ids[s.ParentID] {
			roots = append(roots, s)
			continue
		}
		children[s.ParentID] = append(children[s.ParentID], s)
	}
	var b strings.Builder
	var walk func(list []Span, depth int)
	walk = func(list []Span, depth int) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].Start.Before(list[j].Start) })
		for _, s := range list {
			fmt.Fprintf(&b, "%s%s\n", strings.Repeat("  ", depth), s.Name)
			walk(children[s.SpanID], depth+1)
		}
	}
	walk(roots, 0)
	return b.String()
}

// Find returns the first span named name, and whether there is one.
func Find(spans []Span, name string) (Span, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return Span{}, false
}
