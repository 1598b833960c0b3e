package runtime_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// reportingProvider reports progress on index and fails refuse with a domain failure whose
// detail says more than its message, as sdk.FailWith does.
type reportingProvider struct{}

func (reportingProvider) Methods(context.Context) ([]tool.Method, error) {
	obj := json.RawMessage(`{"type":"object","properties":{}}`)
	return []tool.Method{{Name: "index", Params: obj}, {Name: "refuse", Params: obj}}, nil
}

func (reportingProvider) Call(_ context.Context, req tool.Request) (json.RawMessage, error) {
	switch req.Method {
	case "index":
		if req.Progress == nil {
			return nil, tool.Errorf(tool.CodeToolError, "the runtime passed no progress handler")
		}
		req.Progress(tool.Progress{Filled: 1, Total: 2, Message: "reading the index"})
		req.Progress(tool.Progress{Filled: 2, Total: 2, Message: "writing the summary"})
		return json.RawMessage(`"indexed"`), nil
	}
	return nil, &tool.Error{Code: tool.CodeToolError, Message: "no zone Europe/Pari",
		Detail: json.RawMessage(`{"error":"no zone Europe/Pari","candidates":["Europe/Paris"]}`)}
}

func (reportingProvider) Close() error { return nil }

const progressSrc = `
tool Docs : Reporting()

pipeline Index() -> String:
  "x" |> Docs.index()

pipeline Refuse() -> String:
  "x" |> Docs.refuse()
`

func reportingRegistry(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry()
	if err := reg.Add(tool.Type{Name: "Reporting", Kind: tool.KindModule, Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
		return reportingProvider{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	return reg
}

// A tool's progress reaches the event stream as progress events, in order and before the
// call's tool event; the run record keeps the tool event and not the progress.
func TestProgressEvents(t *testing.T) {
	var mu sync.Mutex
	var events []runtime.Event
	store := newStore()
	rt := load(t, progressSrc, runtime.Config{Tools: reportingRegistry(t), Store: store,
		OnEvent: func(e runtime.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	res := run(t, rt, "Index", nil)
	if res.Status != runtime.Completed || res.Output != "indexed" {
		t.Fatalf("run: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	var types []string
	var reports []tool.Progress
	for _, e := range events {
		types = append(types, e.Type)
		if e.Type == "progress" {
			if e.Target != "Docs.index" || e.At == "" || e.RunID != res.RunID || e.Progress == nil {
				t.Errorf("progress event %+v", e)
				continue
			}
			reports = append(reports, *e.Progress)
		}
	}
	if len(reports) != 2 || reports[0].Message != "reading the index" || reports[1].Filled != 2 || reports[1].Total != 2 {
		t.Errorf("progress reports %+v", reports)
	}
	if len(types) < 3 || types[0] != "progress" || types[1] != "progress" || types[2] != "tool" {
		t.Errorf("event order %v: want the progress before the tool event", types)
	}
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rec.Events {
		if e.Type == "progress" {
			t.Errorf("the run record holds a progress event: %+v", e)
		}
	}
}

// A domain failure's detail stays with the error: in the result, the tool event and the
// run record.
func TestFailureDetail(t *testing.T) {
	var mu sync.Mutex
	var toolErr *runtime.ErrorInfo
	store := newStore()
	rt := load(t, progressSrc, runtime.Config{Tools: reportingRegistry(t), Store: store,
		OnEvent: func(e runtime.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Type == "tool" {
				toolErr = e.Error
			}
		}})
	res := run(t, rt, "Refuse", nil)
	want := `{"error":"no zone Europe/Pari","candidates":["Europe/Paris"]}`
	if res.Status != runtime.Failed || res.Error == nil || string(res.Error.Detail) != want {
		t.Fatalf("result error %+v, want the detail %s", res.Error, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if toolErr == nil || string(toolErr.Detail) != want {
		t.Errorf("tool event error %+v", toolErr)
	}
	rec, err := store.Load(res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Error == nil || compact(rec.Error.Detail) != want {
		t.Errorf("record error %+v", rec.Error)
	}
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}
