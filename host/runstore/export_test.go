package runstore

import (
	"database/sql"

	"halolang.dev/halo/host/runtime"
)

// SetTextPlan makes the thresholds of a text query's plan (textsearch.go) few and most, so
// that a test of a few runs takes each way.
func SetTextPlan(s *SQLite, few, most int) { s.text = textPlan{few, most} }

// Chunks is chunks: the statement sizes (log2 of their rows) a commit writes n rows with.
func Chunks(n int) []int { return chunks(n) }

// MaxRowsLog2 is maxRowsLog2.
const MaxRowsLog2 = maxRowsLog2

// OpenSQL opens the database file path as the store's connections are (FTS5, defensive),
// without the store: for tests that look at or change the file itself.
func OpenSQL(path string) (*sql.DB, error) { return openDB(path) }

// QueryInt runs q on the store's writer (write) or a reader, and returns its one integer.
func QueryInt(s *SQLite, write bool, q string) (int64, error) {
	db := s.r
	if write {
		db = s.w
	}
	var n int64
	err := db.QueryRow(q).Scan(&n)
	return n, err
}

// WriterExec runs q on the store's writer.
func WriterExec(s *SQLite, q string) error {
	_, err := s.w.Exec(q)
	return err
}

// CommitSaves writes recs as saves in one commit of the store's, as its commit goroutine
// does (for a test to choose how many rows a commit has), and returns the first error.
func CommitSaves(s *SQLite, recs []*runtime.Record) error {
	batch := map[string]*pending{}
	for _, rec := range recs {
		batch[rec.RunID] = &pending{kind: putSave, id: rec.RunID, key: s.keys.of(rec.RunID), rec: rec}
	}
	s.commits.write(batch)
	for _, p := range batch {
		if p.err != nil {
			return p.err
		}
	}
	return nil
}

// LatestPausedSQL is latestPausedSQL.
const LatestPausedSQL = latestPausedSQL

// QueryPlan returns what EXPLAIN QUERY PLAN says of q on a reader of the store, a line a
// step.
func QueryPlan(s *SQLite, q string, args ...any) (string, error) {
	rows, err := s.r.Query("EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	out := ""
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		out += detail + "\n"
	}
	return out, rows.Err()
}

// RowValues is rowValues.
const RowValues = rowValues

// NRunColumns is nRunColumns.
const NRunColumns = nRunColumns
