package studio_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore/runstoretest"
)

func getLoop(b *testing.B, base, path string) {
	b.Helper()
	for b.Loop() {
		resp, err := http.Get(base + path)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d", path, resp.StatusCode)
		}
		b.SetBytes(n)
	}
}

// BenchmarkRunPage1000 measures the server's side of the page of a run with 1,000 events:
// the API's run and events, in-process, and the page made from them; beside it the API's
// events alone, as JSON (the floor: what any page of them costs). page40 is the page of a
// 40-step agent run (160 events).
func BenchmarkRunPage1000(b *testing.B) {
	e := newEnv(b, opts{})
	rec := bigRecord(1000)
	if err := e.store.Save(rec); err != nil {
		b.Fatal(err)
	}
	small := bigRecord(160)
	small.RunID, small.Meta.RunID = "b16e0000000000000000000000000160", "b16e0000000000000000000000000160"
	if err := e.store.Save(small); err != nil {
		b.Fatal(err)
	}
	b.Run("api-events", func(b *testing.B) { getLoop(b, e.http.URL, "/api/runs/"+rec.RunID+"/events") })
	b.Run("page", func(b *testing.B) { getLoop(b, e.http.URL, "/runs/"+rec.RunID) })
	b.Run("page40", func(b *testing.B) { getLoop(b, e.http.URL, "/runs/"+small.RunID) })
}

// BenchmarkRunsPage100k measures the runs list's page over 100,000 runs of the embedded
// store (runstoretest.BenchRecord's: one in ten failed, one in a hundred with a violation)
// with each kind of filter, and beside it the API's list of the same filter as JSON (the
// floor). "search-rare" matches one run, "id-prefix" ten run ids' beginning, "search"
// 1,111 runs, the newest among them.
func BenchmarkRunsPage100k(b *testing.B) {
	e := newEnv(b, opts{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100_000 {
		if err := e.store.Save(runstoretest.BenchRecord(i, t0)); err != nil {
			b.Fatal(err)
		}
	}
	if s, ok := e.store.(interface{ Sync() error }); ok { // committed before the clock starts
		if err := s.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []struct{ name, page, api string }{
		{"newest", "/", "/api/runs"},
		{"search", "/?q=ord-99", "/api/runs?q=ord-99"},
		{"search-rare", "/?q=ord-12345%22", "/api/runs?q=ord-12345%22"},
		{"id-prefix", "/?q=r09999", "/api/runs?q=r09999"},
		{"violations+status", "/?violations=1&status=completed", "/api/runs?violations=true&status=completed"},
		{"days", "/?since=2026-01-01&until=2026-01-01&status=failed", "/api/runs?since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z&status=failed"},
	} {
		b.Run(q.name+"/page", func(b *testing.B) { getLoop(b, e.http.URL, q.page) })
		b.Run(q.name+"/api", func(b *testing.B) { getLoop(b, e.http.URL, q.api) })
	}
}
