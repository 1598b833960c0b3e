package serve_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/halo-lang/halo/host/runstore/postgres"
	"github.com/halo-lang/halo/host/runtime"
	"github.com/halo-lang/halo/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// pgStore opens a PostgreSQL store on url for one replica.
func pgStore(t *testing.T, url, owner string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, postgres.Options{Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// replicas starts two servers on one database.
func replicas(t *testing.T, gate bool) (*env, *env) {
	url := pgtest.DB(t)
	a := newEnv(t, opts{store: pgStore(t, url, "a"), gate: gate})
	b := newEnv(t, opts{store: pgStore(t, url, "b"), gate: gate})
	return a, b
}

// The API works the same on PostgreSQL: run, wait, list, events, pause, signal.
func TestPostgresAPI(t *testing.T) {
	a, _ := replicas(t, false)
	m := a.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "go"}}, 200)
	if m["status"] != "completed" {
		t.Fatalf("%v", m)
	}
	id := m["runId"].(string)
	if evs := a.do("GET", "/api/runs/"+id+"/events", nil, 200)["events"].([]any); len(evs) < 4 {
		t.Errorf("events %v", evs)
	}
	p := a.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Shop", "inputs": map[string]any{"id": "o1"}}, 200)
	done := a.do("POST", "/api/runs/"+p["runId"].(string)+"/signal?wait=10s", map[string]any{"channel": "payment", "payload": 1}, 200)
	if done["status"] != "completed" {
		t.Errorf("%v", done)
	}
	if list := a.do("GET", "/api/runs", nil, 200)["runs"].([]any); len(list) != 2 {
		t.Errorf("list %v", list)
	}
}

// A run paused on replica A, signalled on A and B at once, many times: exactly one signal
// continues it; the others are refused. B lists A's runs and reads them.
func TestReplicasSignalOnce(t *testing.T) {
	a, b := replicas(t, false)
	for round := range 3 {
		id, _ := a.pausedAsk()
		if got := b.do("GET", "/api/runs/"+id, nil, 200); got["status"] != "paused" {
			t.Fatalf("B reads %v", got)
		}
		var wg sync.WaitGroup
		var ok, refused atomic.Int32
		for i := range 10 {
			e := []*env{a, b}[i%2]
			wg.Go(func() {
				resp := e.req("POST", "/api/runs/"+id+"/signal", map[string]any{"channel": "yield", "payload": i})
				resp.Body.Close()
				switch resp.StatusCode {
				case 202:
					ok.Add(1)
				case 409:
					refused.Add(1)
				default:
					t.Errorf("signal: %d", resp.StatusCode)
				}
			})
		}
		wg.Wait()
		if ok.Load() != 1 || refused.Load() != 9 {
			t.Fatalf("round %d: %d signals continued the run, %d refused; want 1 and 9", round, ok.Load(), refused.Load())
		}
		done := b.waitStatus(id, runtime.Completed)
		rec, err := b.store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		runs := 0
		for _, e := range rec.Events {
			if e.Type == "run" && e.Status == runtime.Completed {
				runs++
			}
		}
		if runs != 1 {
			t.Errorf("the record has %d completions: %v", runs, done)
		}
	}
}

// Events of a run on A stream live from B (through NOTIFY), resumable with Last-Event-ID;
// a cancel sent to B stops the run on A.
func TestReplicasStreamAndCancel(t *testing.T) {
	a, b := replicas(t, true)
	id := a.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	resp, ch := b.sse(id, "")
	a.gate <- struct{}{}
	first := next(t, ch)
	if first.id != 1 || first.name != "llm" {
		t.Fatalf("first event on B: %+v", first)
	}
	resp.Body.Close()
	_, ch2 := b.sse(id, "1")
	rest := drain(t, ch2)
	if len(rest) < 3 || rest[0].id != 2 || rest[len(rest)-1].name != "run" {
		t.Fatalf("rest on B: %+v", rest)
	}

	id2 := a.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "b"}}, 202)["runId"].(string)
	a.waitStatus(id2, runtime.Running)
	b.do("POST", "/api/runs/"+id2+"/cancel", "{}", 202)
	// The run on A sees its context cancelled when the note (or its next lease renewal)
	// arrives, and fails at its next stage once the held agent call returns.
	time.Sleep(500 * time.Millisecond)
	a.gate <- struct{}{}
	m := b.waitStatus(id2, runtime.Failed)
	if m["error"].(map[string]any)["code"] != runtime.CodeCancelled {
		t.Errorf("cancelled on B: %v", m)
	}
}
