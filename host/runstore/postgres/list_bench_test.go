package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"halolang.dev/halo/host/runstore/postgres"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/internal/pgtest"
)

// BenchmarkList lists the newest 50 of 100,000 runs of the PostgreSQL store with each filter
// the embedded store's BenchmarkList uses (the same runs, inserted in one statement: saving
// them one by one would take minutes).
func BenchmarkList(b *testing.B) {
	url := pgtest.DB(b)
	s, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `
INSERT INTO halo_runs (id, pipeline, status, started, updated, record, cost, violations, file, search)
SELECT 'r' || lpad(i::text, 6, '0'), 'P' || (i % 4),
  CASE WHEN i % 10 = 3 THEN 'failed' ELSE 'completed' END,
  timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second',
  timestamptz '2026-01-01 00:00:00+00' + i * interval '1 second',
  '{"runId":"r' || lpad(i::text, 6, '0') || '"}', 0, CASE WHEN i % 100 = 7 THEN 1 ELSE 0 END, '',
  ' p' || (i % 4) || ' {"order":"ord-' || i || '"}'
FROM generate_series(0, 99999) AS i;
ANALYZE halo_runs`)
	if err != nil {
		b.Fatal(err)
	}
	runstoretest.RunListBench(b, s)
}
