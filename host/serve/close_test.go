package serve_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// Stopping: new runs and signals are refused; a run that finishes within the grace
// finishes; one that does not is saved as interrupted; a paused run stays paused.
func TestCloseGrace(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	paused, _ := e.pausedAsk()
	finishing := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	stuck := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "b"}}, 202)["runId"].(string)
	e.waitStatus(finishing, runtime.Running)
	e.waitStatus(stuck, runtime.Running)

	closed := make(chan struct{})
	go func() { e.srv.Close(500 * time.Millisecond); close(closed) }()
	time.Sleep(50 * time.Millisecond)
	if m := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "c"}}, 503); errCode(m) != "SHUTTING_DOWN" {
		t.Errorf("a run during shutdown: %v", m)
	}
	if m := e.do("POST", "/api/runs/"+paused+"/signal", map[string]any{"channel": "yield", "payload": "y"}, 503); errCode(m) != "SHUTTING_DOWN" {
		t.Errorf("a signal during shutdown: %v", m)
	}
	e.do("GET", "/healthz", nil, 503)
	e.gate <- struct{}{} // one of the two finishes within the grace
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return")
	}
	var done, interrupted int
	for _, id := range []string{finishing, stuck} {
		rec, err := e.store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Status == runtime.Completed:
			done++
		case rec.Status == runtime.Failed && rec.Error.Code == "INTERRUPTED":
			interrupted++
			if last := rec.Events[len(rec.Events)-1]; last.Type != "run" || last.Error == nil || last.Error.Code != "INTERRUPTED" {
				t.Errorf("last event of the interrupted run: %+v", last)
			}
		default:
			t.Errorf("run %s: %s %+v", id, rec.Status, rec.Error)
		}
	}
	if done != 1 || interrupted != 1 {
		t.Errorf("%d completed, %d interrupted; want 1 and 1", done, interrupted)
	}
	if rec, _ := e.store.Load(paused); rec.Status != runtime.Paused {
		t.Errorf("the paused run is %s", rec.Status)
	}
}

// keepFails is a store whose leases cannot be renewed (the database is unreachable).
type keepFails struct{ runstore.Store }

func (k keepFails) Keep(ctx context.Context) ([]string, error) {
	return nil, errors.New("connection refused")
}

// A server that cannot renew its runs' leases for about a lease stops them: another
// replica may already have failed them, and they must not run on twice.
func TestLeaseLostCancels(t *testing.T) {
	f, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := newEnv(t, opts{gate: true, store: keepFails{f}})
	id := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	time.Sleep(400 * time.Millisecond) // 8 intervals without a renewal
	e.gate <- struct{}{}
	m := e.waitStatus(id, runtime.Failed)
	if m["error"].(map[string]any)["code"] != runtime.CodeCancelled || e.count("A.two") != 0 {
		t.Errorf("%v; A.two ran %d times", m, e.count("A.two"))
	}
}
