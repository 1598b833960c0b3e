package runstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
)

// BenchmarkList lists the newest 50 of 100,000 runs of the embedded store with each filter
// of runstoretest.BenchQueries (page2: the second page of the status filter, by its cursor). The
// PostgreSQL store's is in host/runstore/postgres. The saves leave the text index to the
// first text query (schema step 8): it is written before the lists are measured, and
// BenchmarkTextIndex measures what writing it costs.
func BenchmarkList(b *testing.B) {
	s, err := runstore.OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{GroupCommit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 100_000 {
		if err := s.Save(runstoretest.BenchRecord(i, t0)); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.List(context.Background(), runstore.Query{Text: "ord-1"}); err != nil {
		b.Fatal(err)
	}
	runstoretest.RunListBench(b, s)
}
