package serve_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// fullStore is a run store whose saves fail as a full disk's do once full is set: the
// store's own test (runstore.TestSQLiteFullDisk) fills a real filesystem; this one says
// what the server answers then, as any user.
type fullStore struct {
	runstore.Store
	full atomic.Bool
}

func (f *fullStore) Save(rec *runtime.Record) error {
	if f.full.Load() {
		return fmt.Errorf("run %s: the record could not be saved: %w", rec.RunID,
			runstore.Errorf(runstore.CodeStore, "run store: save records: the disk is full"))
	}
	return f.Store.Save(rec)
}

// A run that ends while its record cannot be saved is reported failed with STORE, through
// the API (503, whether it waits for the run or it ended before the answer) and through
// /mcp (a tool error), never answered as the completed run nobody can read again; and
// the runs before are answered and kept.
func TestRunNotSavedIsReported(t *testing.T) {
	sq, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	store := &fullStore{Store: sq}
	e := newEnv(t, opts{store: store})

	kept := e.do("POST", "/api/runs?wait=5s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 200)
	if kept["status"] != "completed" {
		t.Fatalf("a run before the disk is full: %v", kept)
	}

	store.full.Store(true)
	m := e.do("POST", "/api/runs?wait=5s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 503)
	msg := fmt.Sprint(m["error"])
	if errCode(m) != runstore.CodeStore || !strings.Contains(msg, "ended completed, but its record could not be saved") || !strings.Contains(msg, "the disk is full") {
		t.Fatalf("a run whose record cannot be saved, waited for: %v", m)
	}

	status, r := e.mcpCall("Three", map[string]any{"x": "a"})
	res, _ := r["result"].(map[string]any)
	text := fmt.Sprint(res["content"])
	if status != 200 || res["isError"] != true || !strings.Contains(text, "[STORE]") || !strings.Contains(text, "the disk is full") {
		t.Fatalf("a tools/call whose record cannot be saved: %d %v", status, r)
	}
	if meta, _ := res["_meta"].(map[string]any); meta["halo/status"] != "failed" {
		t.Errorf("its _meta: %v", res["_meta"])
	}

	store.full.Store(false)
	if got := e.do("GET", "/api/runs/"+kept["runId"].(string), nil, 200); got["status"] != "completed" {
		t.Errorf("the run saved before: %v", got)
	}
}
