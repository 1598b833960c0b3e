package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/postgres"
	hruntime "halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
	"halolang.dev/halo/internal/pgtest"
)

func benchMocks() *hruntime.Mocks {
	m := hruntime.NewMocks()
	for _, target := range []string{"A.one", "A.two", "A.three", "A.draft"} {
		m.Set(target, "answer of "+target)
	}
	return m
}

// BenchmarkAPIRun is what halo serve adds to one run of a mocked three-stage pipeline: the
// floors (the runtime alone, and with halo run's record file) beside POST /api/runs?wait
// over HTTP with the folder store and with PostgreSQL (a local server on a Unix socket,
// fsync off). One client, one run at a time.
func BenchmarkAPIRun(b *testing.B) {
	prog := program(b, src)
	in := map[string]any{"x": "bench"}
	b.Run("floor=runtime", func(b *testing.B) {
		rt, err := hruntime.New(prog, hruntime.Config{Mocks: benchMocks()})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := rt.Run(context.Background(), "Three", in); err != nil || res.Status != hruntime.Completed {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("floor=runtime+record", func(b *testing.B) {
		store, err := runstore.OpenSQLite(b.TempDir(), runstore.SQLiteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		rt, err := hruntime.New(prog, hruntime.Config{Mocks: benchMocks(), Store: store})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := rt.Run(context.Background(), "Three", in); err != nil || res.Status != hruntime.Completed {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("serve=folder", func(b *testing.B) {
		f, err := runstore.OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
		if err != nil {
			b.Fatal(err)
		}
		benchServe(b, f)
	})
	b.Run("serve=postgres", func(b *testing.B) {
		s, err := postgres.Open(context.Background(), pgtest.DB(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		benchServe(b, s)
	})
}

func benchServe(b *testing.B, store runstore.Store) {
	defer store.Close()
	hs := httptest.NewUnstartedServer(nil)
	srv, err := serve.New(context.Background(), serve.Config{
		Program: program(b, src), Store: store, Addr: hs.Listener.Addr().String(),
		Runtime: hruntime.Config{Mocks: benchMocks()},
	})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start()
	hs.Config.Handler = srv.Handler()
	hs.Start()
	defer func() { hs.Close(); srv.Close(0) }()
	body, _ := json.Marshal(map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "bench"}})
	client := hs.Client()
	for b.Loop() {
		resp, err := client.Post(hs.URL+"/api/runs?wait=30s", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status)
		}
	}
}
