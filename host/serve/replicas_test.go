package serve_test

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/postgres"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/pgtest"
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

// noteGaps is replica A's store in the tests of cancels asked while A cannot hear them: its
// Listen starts listening only once listen is closed, and says when it does (listening);
// cancelled is closed once A's lease loop has cancelled a run; with cancelAtStart, each Start is followed, before it returns, by a cancel asked by
// replica B, whose note A has taken in (or its Listen has ended) when Start returns.
type noteGaps struct {
	runstore.Store
	peer          runstore.Store
	cancelAtStart bool
	listen        chan struct{}
	listening     chan struct{}
	cancelled     chan struct{}
	mu            sync.Mutex
	heard         map[string]chan struct{}
	kept          bool
	once          sync.Once
}

func newNoteGaps(a, b runstore.Store) *noteGaps {
	return &noteGaps{Store: a, peer: b, listen: make(chan struct{}), listening: make(chan struct{}), cancelled: make(chan struct{}), heard: map[string]chan struct{}{}}
}

func (g *noteGaps) heardCancel(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.heard[id] == nil {
		g.heard[id] = make(chan struct{})
	}
	return g.heard[id]
}

func (g *noteGaps) Listen(ctx context.Context, fn func(runstore.Note)) error {
	select {
	case <-g.listen:
	case <-ctx.Done():
		return nil
	}
	var once sync.Once
	return g.Store.Listen(ctx, func(n runstore.Note) {
		fn(n)
		if n.RunID == "" {
			once.Do(func() { close(g.listening) })
		}
		if n.Kind == runstore.NoteCancel {
			close(g.heardCancel(n.RunID))
		}
	})
}

// Keep and Expire: the lease loop calls Expire once it has cancelled the runs Keep found,
// so cancelled is closed once the loop has cancelled a run.
func (g *noteGaps) Keep(ctx context.Context) ([]string, error) {
	ids, err := g.Store.Keep(ctx)
	if len(ids) > 0 {
		g.mu.Lock()
		g.kept = true
		g.mu.Unlock()
	}
	return ids, err
}

func (g *noteGaps) Expire(ctx context.Context) ([]string, error) {
	g.mu.Lock()
	if g.kept {
		g.once.Do(func() { close(g.cancelled) })
	}
	g.mu.Unlock()
	return g.Store.Expire(ctx)
}

func (g *noteGaps) Start(ctx context.Context, rec *runtime.Record) error {
	if err := g.Store.Start(ctx, rec); err != nil || !g.cancelAtStart {
		return err
	}
	if err := g.peer.RequestCancel(ctx, rec.RunID); err != nil {
		return err
	}
	select {
	case <-g.heardCancel(rec.RunID):
	case <-ctx.Done():
	}
	return nil
}

// The lease loop, which also finds cancels, ticks once an hour in these tests: only the
// notes (and what the server does when it starts listening) can cancel in time.
const hour = time.Hour

// A cancel asked (on replica B) while replica A does not listen yet reaches A's run as
// soon as A listens, not at its next lease renewal.
func TestCancelBeforeListening(t *testing.T) {
	url := pgtest.DB(t)
	b := newEnv(t, opts{store: pgStore(t, url, "b")})
	g := newNoteGaps(pgStore(t, url, "a"), b.store)
	a := newEnv(t, opts{store: g, gate: true, interval: hour})
	id := a.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	b.do("POST", "/api/runs/"+id+"/cancel", "{}", 202)
	close(g.listen)
	select {
	case <-g.cancelled:
	case <-time.After(20 * time.Second):
		t.Fatal("A listens, and its run is not cancelled")
	}
	a.gate <- struct{}{}
	m := b.waitStatus(id, runtime.Failed)
	if m["error"].(map[string]any)["code"] != runtime.CodeCancelled || a.count("A.two") != 0 {
		t.Errorf("cancelled before A listened: %v; A.two ran %d times", m, a.count("A.two"))
	}
}

// A cancel whose note reaches replica A after the store holds A's new run but before the
// run is live on A is not lost: the run is cancelled as it goes live.
func TestCancelWhileBeginning(t *testing.T) {
	url := pgtest.DB(t)
	b := newEnv(t, opts{store: pgStore(t, url, "b")})
	g := newNoteGaps(pgStore(t, url, "a"), b.store)
	g.cancelAtStart = true
	close(g.listen)
	a := newEnv(t, opts{store: g, gate: true, interval: hour})
	<-g.listening
	id := a.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	a.gate <- struct{}{}
	m := b.waitStatus(id, runtime.Failed)
	if m["error"].(map[string]any)["code"] != runtime.CodeCancelled || a.count("A.two") != 0 {
		t.Errorf("cancelled as it began: %v; A.two ran %d times", m, a.count("A.two"))
	}
}
