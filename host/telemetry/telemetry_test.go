package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/trace"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/telemetry"
	"halolang.dev/halo/host/telemetry/otlptest"
	"halolang.dev/halo/host/tool"
)

// fakeTool answers every method with the arguments it was given, or fails when told to.
type fakeTool struct{}

func (fakeTool) Methods(ctx context.Context) ([]tool.Method, error) {
	return []tool.Method{{Name: "read"}, {Name: "fail"}}, nil
}

func (fakeTool) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	if req.Method == "fail" {
		return nil, &tool.Error{Code: "HTTP_ERROR", Message: "the service said no"}
	}
	return json.RawMessage(`{"text":"green tea, ask ann@example.com","args":` + string(req.Args) + `}`), nil
}

func (fakeTool) Close() error { return nil }

func registry(t testing.TB) *tool.Registry {
	reg := tool.NewRegistry()
	if err := reg.Add(tool.Type{Name: "Fake", Kind: tool.KindBuiltin, Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
		return fakeTool{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(tool.Type{Name: "One", Kind: tool.KindBuiltin, Open: func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
		return oneTool{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// oneTool has one method, get.
type oneTool struct{ fakeTool }

func (oneTool) Methods(ctx context.Context) ([]tool.Method, error) {
	return []tool.Method{{Name: "get"}}, nil
}

// fakeModel answers with a fixed text and usage.
func fakeModel(answer string) runtime.ModelOpener {
	return func(ref string) (model.Provider, string, error) {
		_, id, _ := strings.Cut(ref, "/")
		return model.ProviderFunc(func(ctx context.Context, req model.Request) (model.Response, error) {
			return model.Response{Text: answer, Usage: model.Usage{InputTokens: 12, OutputTokens: 5}, Cost: 0.0001, StopReason: model.StopEnd}, nil
		}), id, nil
	}
}

const notes = `
policy Private : Redact(Email)
tool Files : Fake()
agent Writer [openai/gpt-4o-mini]
  requires Private
pipeline Notes(topic: String) -> String:
  topic
    |> Files.read(path: topic)
    |> Writer.summarise("Summarise. Mail bob@example.com if unsure.")
`

// traced runs pipeline of src with a tracer exporting to rcv, and returns the spans the
// receiver decoded once the tracer shut down.
func traced(t *testing.T, rcv *otlptest.Receiver, cfg telemetry.Config, rcfg runtime.Config, src, pipeline string, in map[string]any) (*runtime.Result, []otlptest.Span) {
	t.Helper()
	if cfg.Endpoint == "" {
		cfg.Endpoint = rcv.URL
	}
	tr, err := telemetry.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rcfg.Tools == nil {
		rcfg.Tools = registry(t)
	}
	tr.Install(&rcfg)
	rt, err := runtime.Load("test.halo", src, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Run(context.Background(), pipeline, in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return res, rcv.Spans()
}

func mustFind(t *testing.T, spans []otlptest.Span, name string) otlptest.Span {
	t.Helper()
	s, ok := otlptest.Find(spans, name)
	if !ok {
		t.Fatalf("no span %q in:\n%s", name, otlptest.Tree(spans))
	}
	return s
}

func wantAttrs(t *testing.T, s otlptest.Span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got, ok := s.Attrs[k]; !ok || fmt.Sprint(got) != fmt.Sprint(v) {
			t.Errorf("span %q: %s = %v (set %v), want %v", s.Name, k, got, ok, v)
		}
	}
}

// A run is a tree: the run, its stages, and in each stage its tool calls and model requests,
// with the GenAI semantic conventions' attributes; no prompt, answer, argument or result
// unless asked for.
func TestTraceTree(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	res, spans := traced(t, rcv, telemetry.Config{ServiceVersion: "1.2.3"},
		runtime.Config{Models: fakeModel("Green tea. Write to ann@example.com.")}, notes, "Notes", map[string]any{"topic": "tea"})
	if res.Status != runtime.Completed {
		t.Fatalf("run %s: %+v", res.Status, res.Error)
	}
	want := `run Notes
  stage Files.read
    execute_tool Files.read
  stage Writer.summarise
    chat gpt-4o-mini
`
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	traceID := spans[0].TraceID
	for _, s := range spans {
		if s.TraceID != traceID {
			t.Errorf("span %q in trace %s, want %s", s.Name, s.TraceID, traceID)
		}
		if s.Resource["service.name"] != "halo" || s.Resource["service.version"] != "1.2.3" {
			t.Errorf("span %q resource %v", s.Name, s.Resource)
		}
		if s.Start.After(s.End) || s.Start.IsZero() {
			t.Errorf("span %q from %v to %v", s.Name, s.Start, s.End)
		}
		for k := range s.Attrs {
			if k == "gen_ai.input.messages" || k == "gen_ai.output.messages" || k == "gen_ai.tool.call.arguments" || k == "gen_ai.tool.call.result" {
				t.Errorf("span %q has %s although content was not asked for", s.Name, k)
			}
		}
	}
	run := mustFind(t, spans, "run Notes")
	wantAttrs(t, run, map[string]any{"halo.run.id": res.RunID, "halo.pipeline": "Notes", "halo.run.status": "completed"})
	if run.ParentID != "" || run.StatusCode == "ERROR" {
		t.Errorf("run span parent %q status %s", run.ParentID, run.StatusCode)
	}
	wantAttrs(t, mustFind(t, spans, "stage Files.read"), map[string]any{"halo.stage.index": 0, "halo.stage.op": "|>", "halo.at": "test.halo:8:5"})
	wantAttrs(t, mustFind(t, spans, "stage Writer.summarise"), map[string]any{"halo.stage.index": 1,
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "Writer"})
	wantAttrs(t, mustFind(t, spans, "execute_tool Files.read"), map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "Files.read"})
	chat := mustFind(t, spans, "chat gpt-4o-mini")
	wantAttrs(t, chat, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
		"gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 12, "gen_ai.usage.output_tokens": 5,
		"gen_ai.agent.name": "Writer", "halo.cost_usd": 0.0001, "halo.model": "openai/gpt-4o-mini"})
	if chat.Kind != "CLIENT" {
		t.Errorf("chat span kind %s", chat.Kind)
	}
}

// Asked for content, spans carry prompts, answers, arguments and results as the events
// hold them: after the agent's Redact rules, and withheld where a Block rule matched.
func TestTraceContentIsRedacted(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	_, spans := traced(t, rcv, telemetry.Config{Content: true},
		runtime.Config{Models: fakeModel("Green tea. Write to ann@example.com.")}, notes, "Notes", map[string]any{"topic": "tea"})
	chat := mustFind(t, spans, "chat gpt-4o-mini")
	in, _ := chat.Attrs["gen_ai.input.messages"].(string)
	out, _ := chat.Attrs["gen_ai.output.messages"].(string)
	if !strings.Contains(in, `"role":"user"`) || !strings.Contains(in, "Summarise.") || !strings.Contains(in, "[REDACTED:Email]") {
		t.Errorf("input messages %s", in)
	}
	if !strings.Contains(out, `"role":"assistant"`) || !strings.Contains(out, "Write to [REDACTED:Email].") {
		t.Errorf("output messages %s", out)
	}
	call := mustFind(t, spans, "execute_tool Files.read")
	if call.Attrs["gen_ai.tool.call.arguments"] != `{"path":"tea"}` || !strings.Contains(fmt.Sprint(call.Attrs["gen_ai.tool.call.result"]), "green tea") {
		t.Errorf("tool call attributes %v", call.Attrs)
	}
	for _, s := range spans {
		b, _ := json.Marshal(s)
		if strings.Contains(string(b), "ann@example.com") && s.Name != "execute_tool Files.read" {
			t.Errorf("span %q shows the address: %s", s.Name, b)
		}
		if strings.Contains(string(b), "bob@example.com") {
			t.Errorf("span %q shows the prompt's address: %s", s.Name, b)
		}
	}

	// A Block match is withheld from the span as from the event.
	rcv2 := otlptest.NewHTTP()
	defer rcv2.Close()
	res, spans := traced(t, rcv2, telemetry.Config{Content: true}, runtime.Config{Models: fakeModel("Her SSN is 123-45-6789.")}, `
policy NoSSN : Block(SSN)
agent A [openai/gpt-4o-mini]
  requires NoSSN
pipeline P(x: String) -> Result:
  x |> A.t("Answer.")
`, "P", map[string]any{"x": "go"})
	if res.Status != runtime.Failed {
		t.Fatalf("status %s", res.Status)
	}
	all, _ := json.Marshal(spans)
	if strings.Contains(string(all), "6789") {
		t.Errorf("the blocked number reaches the trace:\n%s", all)
	}
	stage := mustFind(t, spans, "stage A.t")
	if len(stage.Events) == 0 || stage.Events[0].Name != "halo.violation" || stage.Events[0].Attrs["halo.rule"] != "Block" {
		t.Errorf("stage events %+v; want the violation", stage.Events)
	}
}

// A failed stage and its run are errors, with the code as error.type.
func TestTraceFailure(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	res, spans := traced(t, rcv, telemetry.Config{}, runtime.Config{}, `
tool Files : Fake()
pipeline P(x: String) -> Result:
  x |> Files.read(path: x) |> Files.fail(path: x)
`, "P", map[string]any{"x": "a"})
	if res.Status != runtime.Failed {
		t.Fatalf("status %s", res.Status)
	}
	for _, name := range []string{"run P", "stage Files.fail", "execute_tool Files.fail"} {
		s := mustFind(t, spans, name)
		if s.StatusCode != "ERROR" || s.Attrs["error.type"] != "HTTP_ERROR" || !strings.Contains(s.StatusMessage, "the service said no") {
			t.Errorf("span %q: status %s %q, error.type %v", name, s.StatusCode, s.StatusMessage, s.Attrs["error.type"])
		}
	}
	if s := mustFind(t, spans, "stage Files.read"); s.StatusCode == "ERROR" {
		t.Errorf("the stage that worked is an error")
	}
	wantAttrs(t, mustFind(t, spans, "run P"), map[string]any{"halo.run.status": "failed"})
}

// What a |* each or a fan-out does concurrently happens inside its stage's span, each call
// saying which item it was for.
func TestTraceNested(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	_, spans := traced(t, rcv, telemetry.Config{}, runtime.Config{}, `
tool Files : Fake()
pipeline P(xs: List) -> Result:
  xs |* each Files.read() |> Inner(xs: xs)
pipeline Inner(xs: List) -> Result:
  xs |> Files.read() |> Files.read()
`, "P", map[string]any{"xs": []any{"a", "b", "c"}})
	want := `run P
  stage Files.read
    execute_tool Files.read
    execute_tool Files.read
    execute_tool Files.read
  stage Inner
    execute_tool Files.read
    execute_tool Files.read
`
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	items := map[any]bool{}
	for _, s := range spans {
		if s.Name == "execute_tool Files.read" {
			if it, ok := s.Attrs["halo.item"]; ok {
				items[it] = true
			}
		}
	}
	if len(items) != 3 {
		t.Errorf("items %v; want 0, 1 and 2", items)
	}
}

// A paused run's span ends paused; its resumption is a span of its own, marked resumed.
func TestTracePauseResume(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	tr, err := telemetry.Open(context.Background(), telemetry.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	store, err := runstore.OpenSQLite(t.TempDir(), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cfg := runtime.Config{Tools: registry(t), Store: store}
	tr.Install(&cfg)
	rt, err := runtime.Load("test.halo", `
tool Files : Fake()
pipeline P(x: String) -> Result:
  x |! yield("Go on?") |> Files.read(path: x)
`, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Run(context.Background(), "P", map[string]any{"x": "a"})
	if err != nil || res.Status != runtime.Paused {
		t.Fatalf("%v %v", res, err)
	}
	res2, err := rt.Resume(context.Background(), res.RunID, "yes")
	if err != nil || res2.Status != runtime.Completed {
		t.Fatalf("%v %v", res2, err)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	want := `run P
  stage yield
run P
  stage Files.read
    execute_tool Files.read
`
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	var runs []otlptest.Span
	for _, s := range spans {
		if s.Name == "run P" {
			runs = append(runs, s)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d run spans", len(runs))
	}
	if runs[0].Start.After(runs[1].Start) {
		runs[0], runs[1] = runs[1], runs[0]
	}
	wantAttrs(t, runs[0], map[string]any{"halo.run.status": "paused", "halo.run.id": res.RunID})
	if len(runs[0].Events) != 1 || runs[0].Events[0].Name != "halo.paused" || runs[0].Events[0].Attrs["halo.channel"] != "yield" {
		t.Errorf("paused run events %+v", runs[0].Events)
	}
	wantAttrs(t, runs[1], map[string]any{"halo.run.status": "completed", "halo.run.resumed": true, "halo.run.id": res.RunID})
}

// A run started under a span (a request halo serve traces, say) is that span's child.
func TestTraceParentFromContext(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	tr, err := telemetry.Open(context.Background(), telemetry.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Tools: registry(t)}
	tr.Install(&cfg)
	rt, err := runtime.Load("test.halo", "tool Files : Fake()\npipeline P(x: String) -> Result:\n  x |> Files.read(path: x)\n", cfg)
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	sid, _ := trace.SpanIDFromHex("b7ad6b7169203331")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	if _, err := rt.Run(trace.ContextWithRemoteSpanContext(context.Background(), parent), "P", map[string]any{"x": "a"}); err != nil {
		t.Fatal(err)
	}
	tr.Shutdown(context.Background())
	run := mustFind(t, rcv.Spans(), "run P")
	if run.TraceID != tid.String() || run.ParentID != sid.String() {
		t.Errorf("run span in trace %s under %s; want %s under %s", run.TraceID, run.ParentID, tid, sid)
	}
}

// Over gRPC too, with the headers the environment names.
func TestTraceGRPCAndHeaders(t *testing.T) {
	rcv, err := otlptest.NewGRPC()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	cfg, err := telemetry.ConfigFromEnv(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s%20ecret", "OTEL_SERVICE_NAME": "pipelines",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Headers["x-api-key"] != "s ecret" {
		t.Errorf("headers %v", cfg.Headers)
	}
	_, spans := traced(t, rcv, cfg, runtime.Config{}, "tool Files : Fake()\npipeline P(x: String) -> Result:\n  x |> Files.read(path: x)\n", "P", map[string]any{"x": "a"})
	if len(spans) != 3 || spans[0].Resource["service.name"] != "pipelines" {
		t.Errorf("spans over gRPC:\n%s", otlptest.Tree(spans))
	}

	// Over HTTP, the headers reach the collector.
	hr := otlptest.NewHTTP()
	defer hr.Close()
	traced(t, hr, telemetry.Config{Headers: map[string]string{"x-api-key": "k1"}}, runtime.Config{}, "tool Files : Fake()\npipeline P(x: String) -> Result:\n  x |> Files.read(path: x)\n", "P", map[string]any{"x": "a"})
	if hr.Header("X-Api-Key") != "k1" {
		t.Errorf("header x-api-key = %q", hr.Header("X-Api-Key"))
	}
}

func TestConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		on       bool
		protocol string
		content  bool
		err      string
	}{
		{env: map[string]string{}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://localhost:4318"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://localhost:4318/v1/traces"}, on: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, on: true, protocol: "grpc"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "TRUE"}, on: true, content: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "novalue"}, err: "OTEL_EXPORTER_OTLP_HEADERS"},
	} {
		cfg, err := telemetry.ConfigFromEnv(tc.env)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %s", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.On() != tc.on || cfg.Protocol != tc.protocol || cfg.Content != tc.content {
			t.Errorf("%v: %+v %v", tc.env, cfg, err)
		}
	}
	for _, bad := range []telemetry.Config{
		{Endpoint: "localhost:4318"},
		{Endpoint: "ftp://x"},
		{Endpoint: "http://x", Protocol: "http/json"},
		{TracesEndpoint: "nope"},
	} {
		if tr, err := telemetry.Open(context.Background(), bad); err == nil {
			tr.Shutdown(context.Background())
			t.Errorf("%+v opened", bad)
		}
	}
}

// Off, a Tracer is nil and installs nothing: the runtime's configuration stays as it was.
func TestOffInstallsNothing(t *testing.T) {
	tr, err := telemetry.Open(context.Background(), telemetry.Config{})
	if tr != nil || err != nil {
		t.Fatalf("%v %v", tr, err)
	}
	var cfg runtime.Config
	tr.Install(&cfg)
	if cfg.OnEvent != nil || cfg.OnMark != nil {
		t.Errorf("hooks installed while off")
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// A collector that cannot be reached fails no run: the export failure is a warning, and
// shutting down waits no longer than its context.
func TestUnreachableCollector(t *testing.T) {
	rcv := otlptest.NewHTTP()
	url := rcv.URL
	rcv.Close()
	var logs strings.Builder
	var mu sync.Mutex
	logger := hclog.New(&hclog.LoggerOptions{Output: lockedWriter{&mu, &logs}, Level: hclog.Warn})
	tr, err := telemetry.Open(context.Background(), telemetry.Config{Endpoint: url, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Tools: registry(t)}
	tr.Install(&cfg)
	rt, err := runtime.Load("test.halo", "tool Files : Fake()\npipeline P(x: String) -> Result:\n  x |> Files.read(path: x)\n", cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rt.Run(context.Background(), "P", map[string]any{"x": "a"})
	if err != nil || res.Status != runtime.Completed {
		t.Fatalf("%v %v", res, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	start := time.Now()
	tr.Shutdown(ctx)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "traces not exported") {
		t.Errorf("no warning logged: %q", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// An agent's chosen calls are spans of their own, one per call, with the decision taken on
// it: allowed and run, or declined by the person asked.
func TestTraceAgentToolCalls(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	tr, err := telemetry.Open(context.Background(), telemetry.Config{Endpoint: rcv.URL, Content: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := runtime.Config{Tools: registry(t)}
	tr.Install(&cfg)
	rt, err := runtime.Load("test.halo", `
policy Careful : ApproveTools("Files.fail") & Redact(Email)
tool Files : Fake()
agent Clerk [openai/gpt-4o-mini]
  requires Careful
  equips Files
pipeline P(x: String) -> Result:
  x |> Clerk.work("Work.", tools: [Files])
`, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rt.Mock("Clerk.work", []any{
		map[string]any{"$useTool": "Files.read", "args": map[string]any{"path": "a"}},
		map[string]any{"$useTool": "Files.fail", "args": map[string]any{"path": "b"}},
		"Done.",
	})
	rt.Mock("Files.fail?", "decline")
	res, err := rt.Run(context.Background(), "P", map[string]any{"x": "go"})
	if err != nil || res.Status != runtime.Completed {
		t.Fatalf("%+v %v", res, err)
	}
	tr.Shutdown(context.Background())
	spans := rcv.Spans()
	want := `run P
  stage Clerk.work
    chat gpt-4o-mini
    execute_tool Files.read
    chat gpt-4o-mini
    execute_tool Files.fail
    chat gpt-4o-mini
`
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	read := mustFind(t, spans, "execute_tool Files.read")
	wantAttrs(t, read, map[string]any{"halo.tool.decision": "allowed", "gen_ai.agent.name": "Clerk", "gen_ai.tool.type": "function"})
	if _, ok := read.Attrs["halo.mocked"]; ok {
		t.Errorf("the call ran for real, yet the span says mocked")
	}
	if res := fmt.Sprint(read.Attrs["gen_ai.tool.call.result"]); !strings.Contains(res, "[REDACTED:Email]") || strings.Contains(res, "ann@") {
		t.Errorf("the call's result in the span: %s", res)
	}
	fail := mustFind(t, spans, "execute_tool Files.fail")
	wantAttrs(t, fail, map[string]any{"halo.tool.decision": "declined"})
}

// The call an agent call's tool: T makes for the agent is a span too, though no decision
// follows it.
func TestTraceAgentFeedTool(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	_, spans := traced(t, rcv, telemetry.Config{}, runtime.Config{Models: fakeModel("ok")}, `
tool Db : One()
agent A [openai/gpt-4o-mini]
pipeline P(id: String) -> Result:
  id |> A.explain("Explain the record.", tool: Db)
`, "P", map[string]any{"id": "r1"})
	want := `run P
  stage A.explain
    execute_tool Db.get
    chat gpt-4o-mini
`
	if got := otlptest.Tree(spans); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
}
