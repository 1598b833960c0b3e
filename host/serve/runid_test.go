package serve_test

import (
	"regexp"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/internal/sqlitedb"
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

// On the embedded store, the server's run ids are the store's (runstore.SQLite.NewLongRunID):
// 32 hex digits whose first 16 turn back into the keys the store hands out, one after
// another, so that each run's row is found without an index of the ids.
func TestRunIDsFromTheStore(t *testing.T) {
	e := newEnv(t, opts{})
	var ids []string
	for n := range 2 {
		m := e.do("POST", "/api/runs?wait=30s", map[string]any{"pipeline": "Count", "inputs": map[string]any{"n": n, "flag": true}}, 200)
		id, _ := m["runId"].(string)
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(id) {
			t.Fatalf("run id %q: not 32 hex digits", id)
		}
		ids = append(ids, id)
	}
	store := e.store.(*runstore.SQLite)
	if err := store.Sync(); err != nil {
		t.Fatal(err)
	}
	db, err := sqlitedb.Open(store.Path(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, id := range ids {
		var key int64
		if err := db.QueryRow(`SELECT key FROM halo_runs WHERE id = ?`, id).Scan(&key); err != nil || key != int64(i+1) {
			t.Errorf("run %s: key %d (%v), want %d", id, key, err, i+1)
		}
	}
}
