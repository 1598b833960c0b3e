package studio_test

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkRunPage1000 measures the server's side of the page of a run with 1,000 events:
// the API's run and events, in-process, and the page made from them; beside it the API's
// events alone, as JSON (the floor: what any page of them costs).
func BenchmarkRunPage1000(b *testing.B) {
	e := newEnv(b, opts{})
	rec := bigRecord(1000)
	if err := e.store.Save(rec); err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, path string) {
		for b.Loop() {
			resp, err := http.Get(e.http.URL + path)
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
	b.Run("api-events", func(b *testing.B) { get(b, "/api/runs/"+rec.RunID+"/events") })
	b.Run("page", func(b *testing.B) { get(b, "/runs/"+rec.RunID) })
}
