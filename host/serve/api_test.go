package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
)

func TestPipelines(t *testing.T) {
	e := newEnv(t, opts{})
	m := e.do("GET", "/api/pipelines", nil, 200)
	ps := m["pipelines"].([]any)
	if len(ps) != 4 {
		t.Fatalf("%d pipelines: %v", len(ps), m)
	}
	c := ps[3].(map[string]any)
	if c["name"] != "Count" || fmt.Sprint(c["params"]) != "[map[name:n type:Number] map[name:flag type:Boolean]]" || c["result"] != "Result" {
		t.Errorf("Count: %v", c)
	}
}

// POST /api/runs starts a run and answers 202 at once; ?wait answers with the result; the
// run is then listed and can be read back, with its events.
func TestStartWaitGet(t *testing.T) {
	e := newEnv(t, opts{})
	m := e.do("POST", "/api/runs?wait=30s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "go"}}, 200)
	if m["status"] != "completed" || m["output"] != "answer of A.three" || len(m["runId"].(string)) != 32 {
		t.Fatalf("waited run: %v", m)
	}
	id := m["runId"].(string)
	got := e.do("GET", "/api/runs/"+id, nil, 200)
	if got["status"] != "completed" || got["pipeline"] != "Three" || got["inputs"].(map[string]any)["x"] != "go" || got["output"] != "answer of A.three" {
		t.Errorf("GET run: %v", got)
	}
	evs := e.do("GET", "/api/runs/"+id+"/events", nil, 200)["events"].([]any)
	if len(evs) < 4 {
		t.Fatalf("events: %v", evs)
	}
	last := evs[len(evs)-1].(map[string]any)
	if last["type"] != "run" || last["status"] != "completed" || int(last["seq"].(float64)) != len(evs) {
		t.Errorf("last event %v", last)
	}
	after := e.do("GET", "/api/runs/"+id+"/events?after=2", nil, 200)["events"].([]any)
	if len(after) != len(evs)-2 || after[0].(map[string]any)["seq"].(float64) != 3 {
		t.Errorf("events after 2: %v", after)
	}

	// Without ?wait: 202 and the run id; it completes in the background.
	m = e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "b"}}, 202)
	id2 := m["runId"].(string)
	e.waitStatus(id2, runtime.Completed)

	list := e.do("GET", "/api/runs", nil, 200)["runs"].([]any)
	if len(list) != 2 || list[0].(map[string]any)["runId"] != id2 {
		t.Errorf("list (newest first): %v", list)
	}
}

// ?wait that runs out answers 202 with the run still running; the run goes on.
func TestWaitRunsOut(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	m := e.do("POST", "/api/runs?wait=50ms", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)
	if m["status"] != "running" {
		t.Fatalf("%v", m)
	}
	id := m["runId"].(string)
	e.waitStatus(id, runtime.Running)
	e.gate <- struct{}{}
	e.waitStatus(id, runtime.Completed)
}

// Inputs are checked before a run starts: 400 naming the parameter, and no run exists.
func TestInputsChecked(t *testing.T) {
	e := newEnv(t, opts{})
	cases := []struct {
		inputs map[string]any
		want   string
	}{
		{map[string]any{"n": 1}, "needs input flag"},
		{map[string]any{"n": "x", "flag": true}, "input n: want a number"},
		{map[string]any{"n": 1, "flag": "maybe"}, "input flag"},
		{map[string]any{"n": 1, "flag": true, "extra": 1}, "no parameter extra"},
	}
	for _, c := range cases {
		m := e.do("POST", "/api/runs", map[string]any{"pipeline": "Count", "inputs": c.inputs}, 400)
		if errCode(m) != runtime.CodeInput || !strings.Contains(fmt.Sprint(m), c.want) {
			t.Errorf("inputs %v: %v, want BAD_INPUT naming %q", c.inputs, m, c.want)
		}
	}
	if list := e.do("GET", "/api/runs", nil, 200)["runs"].([]any); len(list) != 0 {
		t.Errorf("refused runs were recorded: %v", list)
	}
}

// The list filters by status, pipeline, words, run id, time, violations and cost, and pages
// by cursor; bad filters are refused with a code.
func TestListFilters(t *testing.T) {
	e := newEnv(t, opts{})
	for i := range 5 {
		e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": fmt.Sprint(i)}}, 200)
	}
	e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Ask", "inputs": map[string]any{"x": "a"}}, 200)
	paused := e.do("GET", "/api/runs?status=paused", nil, 200)["runs"].([]any)
	if len(paused) != 1 || paused[0].(map[string]any)["waitingFor"] != "yield" {
		t.Errorf("paused runs: %v", paused)
	}
	if three := e.do("GET", "/api/runs?pipeline=Three", nil, 200)["runs"].([]any); len(three) != 5 {
		t.Errorf("runs of Three: %d", len(three))
	}
	seen := map[string]bool{}
	cursor := ""
	for range 10 {
		page := e.do("GET", "/api/runs?limit=2&cursor="+cursor, nil, 200)
		for _, r := range page["runs"].([]any) {
			seen[r.(map[string]any)["runId"].(string)] = true
		}
		next, _ := page["next"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 6 {
		t.Errorf("paging saw %d runs, want 6", len(seen))
	}
	// Search: words of the inputs, a run id's beginning; a time window; a cost above.
	ids := func(q string) []string {
		t.Helper()
		var out []string
		for _, r := range e.do("GET", "/api/runs"+q, nil, 200)["runs"].([]any) {
			out = append(out, r.(map[string]any)["runId"].(string))
		}
		return out
	}
	if got := ids("?q=" + url.QueryEscape(`"x":"3"`)); len(got) != 1 {
		t.Errorf("?q= an input: %v", got)
	}
	first := ids("?limit=1")[0]
	if got := ids("?q=" + first[:6]); len(got) != 1 || got[0] != first {
		t.Errorf("?q= a run id's beginning: %v, want [%s]", got, first)
	}
	if got := ids("?q=" + first[:6] + "&pipeline=Three"); len(got) != 0 { // the newest run is Ask's
		t.Errorf("a run id's beginning and another pipeline: %v", got)
	}
	future := url.QueryEscape(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	if got := ids("?since=" + future); len(got) != 0 {
		t.Errorf("?since= an hour ahead: %v", got)
	}
	if got := ids("?until=" + future + "&violations=false&minCost=0"); len(got) != 6 {
		t.Errorf("?until= an hour ahead: %d runs, want 6", len(got))
	}
	if got := ids("?violations=true"); len(got) != 0 {
		t.Errorf("?violations=true: %v", got)
	}
	if got := ids("?minCost=1000"); len(got) != 0 {
		t.Errorf("?minCost=1000: %v", got)
	}
	// Each run's tokens in and out, and whether a price was unknown: a run of a model the
	// price table does not know says unpriced; one without model calls has 0 tokens.
	rec := runstoretest.NewRecord("usage1", runtime.Completed)
	rec.Started, rec.Updated = time.Now().Add(time.Minute), time.Now().Add(time.Minute)
	rec.Meta.Calls = runstoretest.UsageCalls()
	if err := e.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	runs := e.do("GET", "/api/runs?limit=2", nil, 200)["runs"].([]any)
	if r := runs[0].(map[string]any); r["runId"] != "usage1" || r["tokensIn"] != 1200.0 || r["tokensOut"] != 345.0 || r["unpriced"] != true {
		t.Errorf("a run with model calls: %v, want 1200 tokens in, 345 out, unpriced", r)
	}
	if r := runs[1].(map[string]any); r["tokensIn"] != 0.0 || r["tokensOut"] != 0.0 || r["unpriced"] != nil {
		t.Errorf("a run without model calls: %v, want 0 tokens and no unpriced", r)
	}
	for _, q := range []string{"?status=nope", "?limit=0", "?limit=x", "?cursor=forged", "?since=yesterday", "?until=2026-13-01T00:00:00Z",
		"?violations=yes", "?minCost=-1", "?minCost=NaN", "?minCost=Inf", "?q=" + strings.Repeat("w+", 17), "?q=" + strings.Repeat("x", 1001)} {
		m := e.do("GET", "/api/runs"+q, nil, 400)
		if errCode(m) == "" {
			t.Errorf("%s: %v", q, m)
		}
	}
}

// A paused run shows what it waits for and its link; a signal on its channel continues it
// (?wait answers with the result); a signal on another channel, for a run that does not
// wait, or for no run, is refused with a code and changes nothing.
func TestSignal(t *testing.T) {
	e := newEnv(t, opts{})
	m := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Shop", "inputs": map[string]any{"id": "o1"}}, 200)
	id := m["runId"].(string)
	p := m["paused"].(map[string]any)
	if m["status"] != "paused" || p["waitingFor"] != "payment" || !strings.Contains(p["link"].(string), "/approve/") {
		t.Fatalf("paused: %v", m)
	}
	before := e.do("GET", "/api/runs/"+id, nil, 200)
	refusals := []struct {
		path string
		body any
		code int
		want string
	}{
		{"/api/runs/" + id + "/signal", map[string]any{"channel": "refund", "payload": 1}, 409, "NOT_WAITING"},
		{"/api/runs/" + id + "/signal", map[string]any{"payload": 1}, 400, "BAD_REQUEST"},
		{"/api/runs/nope/signal", map[string]any{"channel": "payment"}, 404, "RUN_NOT_FOUND"},
		{"/api/runs/..%2F..%2Fetc%2Fpasswd/signal", map[string]any{"channel": "payment"}, 404, "RUN_NOT_FOUND"},
		{"/api/runs/" + id + "/signal", `{"channel": "payment", "payload": 1} {"x": 1}`, 400, "BAD_JSON"},
		{"/api/runs/" + id + "/signal", `{"channel": "payment", "payload": `, 400, "BAD_JSON"},
		{"/api/runs/" + id + "/signal", `{"channel": "payment", "extra": 1}`, 400, "BAD_JSON"},
		{"/api/runs/" + id + "/signal?wait=forever", map[string]any{"channel": "payment"}, 400, "BAD_REQUEST"},
	}
	for _, r := range refusals {
		if got := errCode(e.do("POST", r.path, r.body, r.code)); got != r.want {
			t.Errorf("POST %s %v: %s, want %s", r.path, r.body, got, r.want)
		}
	}
	after := e.do("GET", "/api/runs/"+id, nil, 200)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("a refused signal changed the run:\n%v\n%v", before, after)
	}
	done := e.do("POST", "/api/runs/"+id+"/signal?wait=10s", map[string]any{"channel": "payment", "payload": map[string]any{"amount": 12}}, 200)
	if done["status"] != "completed" || fmt.Sprint(done["output"]) != "map[id:o1 paid:map[amount:12]]" {
		t.Fatalf("signalled: %v", done)
	}
	if got := errCode(e.do("POST", "/api/runs/"+id+"/signal", map[string]any{"channel": "payment"}, 409)); got != "NOT_WAITING" {
		t.Errorf("a second signal: %s", got)
	}
}

// Cancel: a running run fails CANCELLED; a paused one fails at once; a finished one is 409.
func TestCancel(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	id := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	e.waitStatus(id, runtime.Running)
	e.do("POST", "/api/runs/"+id+"/cancel", "{}", 202)
	e.gate <- struct{}{}
	m := e.waitStatus(id, runtime.Failed)
	if m["error"].(map[string]any)["code"] != runtime.CodeCancelled || e.count("A.two") != 0 {
		t.Errorf("cancelled run: %v, A.two ran %d times", m, e.count("A.two"))
	}
	if errCode(e.do("POST", "/api/runs/"+id+"/cancel", "{}", 409)) != "NOT_RUNNING" {
		t.Errorf("cancel of a finished run")
	}
	p := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Shop", "inputs": map[string]any{"id": "o1"}}, 200)["runId"].(string)
	c := e.do("POST", "/api/runs/"+p+"/cancel", "{}", 200)
	if c["status"] != "failed" {
		t.Errorf("cancelled paused run: %v", c)
	}
	if errCode(e.do("POST", "/api/runs/"+p+"/signal", map[string]any{"channel": "payment"}, 409)) != "NOT_WAITING" {
		t.Errorf("a cancelled run took a signal")
	}
	if errCode(e.do("POST", "/api/runs/nope/cancel", "{}", 404)) != "RUN_NOT_FOUND" {
		t.Errorf("cancel of no run")
	}
}

// holdSave is a store that holds the save of a stopped run's record, once written, until
// release is closed: the moment between the record saying the run stopped and the run
// leaving the server's live runs.
type holdSave struct {
	runstore.Store
	saved, release chan struct{}
}

func (h holdSave) Save(rec *runtime.Record) error {
	err := h.Store.Save(rec)
	if rec.Status == runtime.Completed {
		close(h.saved)
		<-h.release
	}
	return err
}

// A cancel that comes once a run's record says it completed, while the server is still
// ending the run, is 409 NOT_RUNNING: it never answers 202 for a run already seen stopped.
func TestCancelAsRunStops(t *testing.T) {
	f, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := holdSave{Store: f, saved: make(chan struct{}), release: make(chan struct{})}
	e := newEnv(t, opts{store: h})
	id := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	<-h.saved
	if got := e.do("GET", "/api/runs/"+id, nil, 200)["status"]; got != "completed" {
		t.Fatalf("the saved run is %v", got)
	}
	answer := make(chan map[string]any, 1)
	go func() {
		m := map[string]any{}
		resp, err := http.Post(e.http.URL+"/api/runs/"+id+"/cancel", "application/json", strings.NewReader("{}"))
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&m)
			resp.Body.Close()
			m["status code"] = resp.StatusCode
		}
		answer <- m
	}()
	close(h.release) // whether the cancel comes before or after this, the run has stopped
	if m := <-answer; m["status code"] != 409 || errCode(m) != "NOT_RUNNING" {
		t.Errorf("cancel of a run saved as completed: %v", m)
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t, opts{})
	for _, p := range []string{"/api/runs/nope", "/api/runs/nope/events", "/api/runs/%2e%2e", "/api/nothing"} {
		m := e.do("GET", p, nil, 404)
		if c := errCode(m); c != "RUN_NOT_FOUND" && c != "NOT_FOUND" {
			t.Errorf("GET %s: %v", p, m)
		}
	}
	for _, name := range []string{"../../etc/passwd", "Three/../Ask", "", "three"} {
		m := e.do("POST", "/api/runs", map[string]any{"pipeline": name, "inputs": map[string]any{}}, 404)
		if errCode(m) != "UNKNOWN_PIPELINE" {
			t.Errorf("pipeline %q: %v", name, m)
		}
	}
	resp := e.req("DELETE", "/api/runs", nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE /api/runs: %d", resp.StatusCode)
	}
	if m := e.do("GET", "/healthz", nil, 200); m["status"] != "ok" {
		t.Errorf("healthz %v", m)
	}
}
