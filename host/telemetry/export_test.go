package telemetry_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/telemetry"
	"halolang.dev/halo/host/telemetry/otlptest"
)

// memStore keeps the records a runtime saves.
type memStore struct {
	mu   sync.Mutex
	recs map[string]*runtime.Record
	last string
}

func (m *memStore) Save(rec *runtime.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs == nil {
		m.recs = map[string]*runtime.Record{}
	}
	cp := *rec
	m.recs[rec.RunID], m.last = &cp, rec.RunID
	return nil
}

func (m *memStore) Load(id string) (*runtime.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.recs[id]; ok {
		cp := *r
		return &cp, nil
	}
	return nil, fmt.Errorf("no run %s", id)
}

func (m *memStore) Latest() (string, error) { return m.last, nil }

func (m *memStore) SealKey() ([]byte, error) { return []byte("a key of sixteen bytes or more"), nil }

const clerk = `
policy Careful : ApproveTools("Files.fail") & Redact(Email)
tool Files : Fake()
agent Clerk [openai/gpt-4o-mini]
  requires Careful
  equips Files
agent Writer [openai/gpt-4o-mini]
  requires Careful
pipeline P(x: String) -> Result:
  x |> Files.read(path: x) |> Clerk.work("Work.", tools: [Files]) |> Writer.sum("Sum up.")
`

// liveAndRecorded runs P of clerk with a live tracer and returns the spans it exported and
// the run's record.
func liveAndRecorded(t *testing.T) ([]otlptest.Span, *runtime.Record) {
	t.Helper()
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	tr, err := telemetry.Open(context.Background(), telemetry.Config{Endpoint: rcv.URL, Content: true})
	if err != nil {
		t.Fatal(err)
	}
	store := &memStore{}
	cfg := runtime.Config{Tools: registry(t), Store: store, Models: fakeModel("Summed up; ask ann@example.com.")}
	tr.Install(&cfg)
	rt, err := runtime.Load("test.halo", clerk, cfg)
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
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	return rcv.Spans(), rec
}

// attrsOf lists a span's attributes, sorted, for comparing two traces of one run.
func attrsOf(s otlptest.Span) string {
	var out []string
	for k, v := range s.Attrs {
		if k == "halo.stage.op" {
			continue // a record does not keep a stage's operator
		}
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	for _, e := range s.Events {
		out = append(out, fmt.Sprintf("event %s %v", e.Name, e.Attrs))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// The trace made from a run's record is the trace the live tracer sent of the run: the same
// tree of spans with the same attributes (content included, redacted by the agents'
// policies), in OTLP's JSON encoding, which a collector decodes strictly.
func TestTraceJSONIsTheLiveTrace(t *testing.T) {
	live, rec := liveAndRecorded(t)
	b, err := telemetry.TraceJSON(context.Background(), rec, telemetry.ExportConfig{Content: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := otlptest.ParseJSON(b)
	if err != nil {
		t.Fatalf("the export is not OTLP JSON: %v\n%s", err, b)
	}
	if g, w := otlptest.Tree(got), otlptest.Tree(live); g != w {
		t.Fatalf("tree of the record:\n%s\nlive:\n%s", g, w)
	}
	byName := map[string][]otlptest.Span{}
	for _, s := range live {
		byName[s.Name] = append(byName[s.Name], s)
	}
	seen := map[string]int{}
	for _, s := range got {
		i := seen[s.Name]
		seen[s.Name]++
		if i >= len(byName[s.Name]) {
			t.Fatalf("span %q more often than live", s.Name)
		}
		if g, w := attrsOf(s), attrsOf(byName[s.Name][i]); g != w {
			t.Errorf("span %q attributes:\n%s\nlive:\n%s", s.Name, g, w)
		}
		if s.Start.After(s.End) || s.Start.Before(rec.Started) || s.End.After(rec.Updated) {
			t.Errorf("span %q from %v to %v, the run from %v to %v", s.Name, s.Start, s.End, rec.Started, rec.Updated)
		}
		if s.Resource["service.name"] != "halo" {
			t.Errorf("span %q resource %v", s.Name, s.Resource)
		}
		if _, ofAgent := s.Attrs["gen_ai.agent.name"]; ofAgent && strings.Contains(fmt.Sprint(s.Attrs), "ann@") {
			t.Errorf("span %q holds the address Redact removes: %v", s.Name, s.Attrs)
		}
	}
	// One record always gives the same trace.
	again, err := telemetry.TraceJSON(context.Background(), rec, telemetry.ExportConfig{Content: true})
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("a second export differs (%v)", err)
	}
	// Without content, no prompt, answer, argument or result.
	bare, err := telemetry.TraceJSON(context.Background(), rec, telemetry.ExportConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
		if bytes.Contains(bare, []byte(key)) {
			t.Errorf("an export without content has %s", key)
		}
	}
}

// A failed run's trace marks the stage that failed and the run; a paused run's is one trace
// that ends where it waits.
func TestTraceJSONFailedAndPaused(t *testing.T) {
	store := &memStore{}
	rt, err := runtime.Load("test.halo", `
tool Files : Fake()
pipeline P(x: String) -> Result:
  x |> Files.read(path: x) |> Files.fail(path: x)
pipeline Q(x: String) -> Result:
  x |> Files.read(path: x) |! yield("Go on?") |> Files.read(path: x)
`, runtime.Config{Tools: registry(t), Store: store})
	if err != nil {
		t.Fatal(err)
	}
	export := func(pipeline string) []otlptest.Span {
		t.Helper()
		res, err := rt.Run(context.Background(), pipeline, map[string]any{"x": "a"})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := store.Load(res.RunID)
		if err != nil {
			t.Fatal(err)
		}
		b, err := telemetry.TraceJSON(context.Background(), rec, telemetry.ExportConfig{})
		if err != nil {
			t.Fatal(err)
		}
		spans, err := otlptest.ParseJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		return spans
	}
	failed := export("P")
	if got, want := otlptest.Tree(failed), "run P\n  stage Files.read\n    execute_tool Files.read\n  stage Files.fail\n    execute_tool Files.fail\n"; got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	for _, name := range []string{"run P", "stage Files.fail", "execute_tool Files.fail"} {
		s := mustFind(t, failed, name)
		if s.StatusCode != "ERROR" || s.Attrs["error.type"] != "HTTP_ERROR" {
			t.Errorf("span %q: status %s, error.type %v", name, s.StatusCode, s.Attrs["error.type"])
		}
	}
	paused := export("Q")
	if got, want := otlptest.Tree(paused), "run Q\n  stage Files.read\n    execute_tool Files.read\n  stage yield\n"; got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	run := mustFind(t, paused, "run Q")
	wantAttrs(t, run, map[string]any{"halo.run.status": "paused"})
	if len(run.Events) != 1 || run.Events[0].Name != "halo.paused" {
		t.Errorf("paused run events %+v", run.Events)
	}
}
