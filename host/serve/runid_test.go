package serve_test

import (
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
)

// A run id drawn twice (forced here by an id source that repeats itself) never replaces
// the run saved under it: a run that starts while the first is held or queued is refused
// with RUN_TAKEN; one that starts after it was committed is refused by the store's commit,
// which keeps the first.
func TestRepeatedRunID(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	e := newEnv(t, opts{newID: func() string { return id }})
	first := e.do("POST", "/api/runs?wait=30s", map[string]any{"pipeline": "Count", "inputs": map[string]any{"n": 1, "flag": true}}, 200)
	if first["runId"] != id || first["status"] != "completed" {
		t.Fatalf("the first run: %v", first)
	}
	// Queued, not yet committed: the store refuses the start.
	r := e.req("POST", "/api/runs?wait=30s", map[string]any{"pipeline": "Count", "inputs": map[string]any{"n": 2, "flag": true}})
	r.Body.Close()
	if r.StatusCode == 200 {
		t.Logf("the second run was not refused at its start (the first was committed already)")
	}
	syncer := e.store.(interface{ Sync() error })
	err := syncer.Sync()
	// Committed: the commit of the next run of that id refuses it.
	r = e.req("POST", "/api/runs?wait=30s", map[string]any{"pipeline": "Count", "inputs": map[string]any{"n": 3, "flag": true}})
	r.Body.Close()
	if err2 := syncer.Sync(); err2 != nil {
		err = err2
	}
	if r.StatusCode == 200 && errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("a run of a repeated id after the first was committed: %d, store %v; want it refused", r.StatusCode, err)
	}
	got := e.do("GET", "/api/runs/"+id, nil, 200)
	if got["status"] != "completed" || got["output"] != 1.0 {
		t.Errorf("the first run after others drew its id: %v", got)
	}
}
