package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"halolang.dev/halo/host/runstore"
	hruntime "halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
)

// countingStore counts the live events it is handed.
type countingStore struct {
	runstore.Store
	appended atomic.Int64
}

func (s *countingStore) AppendEvent(ctx context.Context, id string, seq int, e hruntime.Event) error {
	s.appended.Add(1)
	return s.Store.AppendEvent(ctx, id, seq, e)
}

// localStore is a countingStore that says it keeps no live events for other processes, as
// the embedded SQLite store does.
type localStore struct{ *countingStore }

func (localStore) LocalEvents() bool { return true }

// A run's events reach the store only when it keeps them for other processes' readers: the
// embedded store is not handed each one (nobody elsewhere reads them), a shared store is.
func TestLiveEventsOnlyForStoresThatShareThem(t *testing.T) {
	for _, local := range []bool{true, false} {
		db, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true})
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingStore{Store: db}
		var store runstore.Store = cs
		if local {
			store = localStore{cs}
		}
		hs := httptest.NewUnstartedServer(nil)
		srv, err := serve.New(context.Background(), serve.Config{Program: program(t, src), Store: store, Addr: hs.Listener.Addr().String(),
			Runtime: hruntime.Config{Mocks: benchMocks()}})
		if err != nil {
			t.Fatal(err)
		}
		srv.Start()
		hs.Config.Handler = srv.Handler()
		hs.Start()
		body, _ := json.Marshal(map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}})
		resp, err := hs.Client().Post(hs.URL+"/api/runs?wait=30s", "application/json", bytes.NewReader(body))
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("run: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		hs.Close()
		srv.Close(0)
		db.Close()
		if n := cs.appended.Load(); local && n != 0 || !local && n == 0 {
			t.Errorf("local %v: the store was handed %d live events", local, n)
		}
	}
}
