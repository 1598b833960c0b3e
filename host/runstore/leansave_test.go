package runstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
)

// wordRecord is a completed run whose inputs hold word.
func wordRecord(id, word string) *runtime.Record {
	rec := runstoretest.NewRecord(id, runtime.Completed)
	rec.Inputs = map[string]any{"w": word}
	return rec
}

// openGrouped opens the store in dir with GroupCommit, closed as the test ends.
func openGrouped(t *testing.T, dir string) *runstore.SQLite {
	t.Helper()
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// found returns the ids a text query lists, in order.
func found(t *testing.T, s runstore.Store, text string) string {
	t.Helper()
	p, err := s.List(context.Background(), runstore.Query{Text: text, Limit: runstore.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, r := range p.Runs {
		out += r.RunID + " "
	}
	return out
}

// ftsCheck runs FTS5's integrity check of the text index against the runs.
func ftsCheck(t *testing.T, path string) {
	t.Helper()
	db := sqlDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO halo_runs_text (halo_runs_text, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("the text index is not in step with the runs: %v", err)
	}
}

// The saves do not write the text index, and a text query still finds every run committed
// before it: of this process, of another one that has the store open beside it, runs saved
// after the last query, a run whose words changed after it was indexed, and none of the
// runs removed (the newest of them too, whose rowids the next runs get again).
func TestSQLiteTextQueryFindsUnindexedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	a, b := openGrouped(t, dir), openGrouped(t, dir)
	save := func(s *runstore.SQLite, recs ...*runtime.Record) {
		t.Helper()
		for _, rec := range recs {
			if err := s.Save(rec); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	save(a, wordRecord("a1", "quince"), wordRecord("a2", "quince"))
	save(b, wordRecord("b1", "quince"))
	if got := found(t, a, "quince"); got != "b1 a2 a1 " {
		t.Errorf("quince from a: %q", got)
	}
	save(b, wordRecord("b2", "quince"), wordRecord("b3", "medlar"))
	save(a, wordRecord("a3", "medlar"))
	if got := found(t, a, "quince"); got != "b2 b1 a2 a1 " {
		t.Errorf("quince from a after b saved more: %q", got)
	}
	// a1, indexed, gets other words.
	save(a, wordRecord("a1", "sloe"))
	if got := found(t, b, "quince"); got != "b2 b1 a2 " {
		t.Errorf("quince from b once a1 changed: %q", got)
	}
	if got := found(t, b, "sloe"); got != "a1 " {
		t.Errorf("sloe from b: %q", got)
	}
	// The newest runs, indexed, go; the next runs take their rowids.
	if _, err := a.Delete(context.Background(), []string{"a3", "b3"}); err != nil {
		t.Fatal(err)
	}
	save(a, wordRecord("a4", "rowan"), wordRecord("a5", "rowan"))
	if got := found(t, a, "medlar"); got != "" {
		t.Errorf("medlar, whose runs were removed: %q", got)
	}
	if got := found(t, a, "rowan"); got != "a5 a4 " {
		t.Errorf("rowan, saved after a removal: %q", got)
	}
	// Removed before they were indexed, then again newest runs.
	save(a, wordRecord("a6", "elder"), wordRecord("a7", "elder"))
	if _, err := a.Delete(context.Background(), []string{"a6", "a7"}); err != nil {
		t.Fatal(err)
	}
	save(a, wordRecord("a8", "hawthorn"))
	if got := found(t, a, "elder") + found(t, a, "hawthorn"); got != "a8 " {
		t.Errorf("elder and hawthorn: %q", got)
	}
	ftsCheck(t, a.Path())
}

// With nothing to commit for a while, the commit goroutine writes the text index of the
// runs committed since, so that the next text query finds it written.
func TestSQLiteIndexesTextWhileIdle(t *testing.T) {
	s := openGrouped(t, filepath.Join(t.TempDir(), ".halo", "runs"))
	for i := range 2500 { // more than a chunk
		if err := s.Save(wordRecord(fmt.Sprintf("r%04d", i), fmt.Sprintf("w%04dq", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	db := sqlDB(t, s.Path())
	defer db.Close()
	left := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM halo_runs WHERE rowid > (SELECT upto FROM halo_text_state)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := left(); n != 2500 {
		t.Fatalf("%d runs past the text index once saved, want all 2500", n)
	}
	for deadline := time.Now().Add(30 * time.Second); left() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs still past the text index after 30 s idle", left())
		}
	}
	if got := found(t, s, "w1234q"); got != "r1234 " {
		t.Errorf("w1234q: %q", got)
	}
	ftsCheck(t, s.Path())
}

// schemaDB makes the database of a store of schema version v in dir, as a halo of that
// version left it.
func schemaDB(t *testing.T, dir string, v int) *sql.DB {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	db := sqlDB(t, filepath.Join(dir, runstore.DBName))
	d := runstore.SQLiteDialect
	if _, err := db.Exec(d.SchemaTableSQL()); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= v; i++ {
		var around [2][]string // what the store does before and after step 9 (runkey.go): no row keys
		if i == 9 {
			around = [2][]string{
				{`CREATE TEMP TABLE halo_row_keys (rid integer PRIMARY KEY, key integer NOT NULL)`},
				{`DROP TABLE temp.halo_row_keys`, `CREATE UNIQUE INDEX halo_runs_key ON halo_runs (key, id)`,
					`INSERT INTO halo_secrets (name, value) VALUES ('run-keys', randomblob(16))`},
			}
		}
		for _, st := range append(append(around[0], d.Migration(i)...), around[1]...) {
			if _, err := db.Exec(st); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec(`INSERT INTO halo_schema (version) VALUES (?)`, i); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// oldRows writes the rows of recs into db as an older halo did (its triggers write the
// text index).
func oldRows(t *testing.T, db *sql.DB, recs ...*runtime.Record) {
	t.Helper()
	for _, rec := range recs {
		raw, err := runstore.MarshalRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO halo_runs (id, pipeline, status, started, updated, record, search) VALUES (?, 'P', 'completed', ?, ?, ?, ?)`,
			rec.RunID, rec.Started.UnixNano(), rec.Updated.UnixNano(), string(raw), runstore.SearchText(rec)); err != nil {
			t.Fatal(err)
		}
	}
}

// indexedStoreOf makes a store of schema step v (9 to 13) in a new folder, with recs as
// those halos saved them, all in the text index and halo_run_ids, and returns the store's
// folder and its database file.
func indexedStoreOf(t *testing.T, v int, recs ...*runtime.Record) (dir, path string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), ".halo", "runs")
	db := schemaDB(t, dir, v)
	oldRows(t, db, recs...)
	indexAsOf9(t, db)
	return dir, filepath.Join(dir, runstore.DBName)
}

// indexAsOf9 writes the text index and halo_run_ids of every run in db, a store of schema
// step 9 to 13, as those halos did, and closes db.
func indexAsOf9(t *testing.T, db *sql.DB) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO halo_runs_text (rowid, search) SELECT rowid, search FROM halo_runs`,
		`INSERT INTO halo_run_ids (lid, run) SELECT lower(id), rowid FROM halo_runs`,
		`UPDATE halo_text_state SET upto = (SELECT max(rowid) FROM halo_runs)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
}

// A store of schema version 7 (the text index written by each insert, a second index of
// the ids) keeps its runs when a newer halo opens it: they are found by their words and
// their ids' beginnings as before, as are the runs saved after; removing one keeps the
// index in step, and the second index of the ids is gone.
func TestSQLiteMigratesLeanSaves(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	path := filepath.Join(dir, runstore.DBName)
	db := schemaDB(t, dir, 7)
	oldRows(t, db, wordRecord("old1", "bilberry"), wordRecord("old2", "bilberry"), wordRecord("old3", "cloudberry"))
	db.Close()
	s := openGrouped(t, dir)
	if err := s.Save(wordRecord("new1", "bilberry")); err != nil {
		t.Fatal(err)
	}
	if got := found(t, s, "ilberr"); got != "new1 old2 old1 " {
		t.Errorf("bilberry: %q", got)
	}
	if _, err := s.Delete(context.Background(), []string{"old3"}); err != nil {
		t.Fatal(err)
	}
	if got := found(t, s, "cloudberry"); got != "" {
		t.Errorf("cloudberry, removed: %q", got)
	}
	if p, err := s.List(context.Background(), runstore.Query{}); err != nil || len(p.Runs) != 3 {
		t.Errorf("the runs: %+v %v", p, err)
	}
	if got := found(t, s, "OLD"); got != "old2 old1 " {
		t.Errorf("the runs whose id begins with OLD: %q", got)
	}
	ftsCheck(t, path)
	db = sqlDB(t, path)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'halo_runs_id_nocase'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the index of the ids ignoring case is still there: %d %v", n, err)
	}
}

// A word that begins a run id finds it whatever the case of either (halo_run_ids holds the
// ids' first letters lowercased), however long the word, and only the ids it begins: ids
// that share their first 8 letters (all halo_run_ids keeps) are told apart by the rest.
func TestSQLiteIDBeginsIgnoringCase(t *testing.T) {
	s := openGrouped(t, filepath.Join(t.TempDir(), ".halo", "runs"))
	for _, id := range []string{"AbCdEfG1", "abcdefh2", "ABCDE", "9z-Q_x", "abc", "Nightly-2026-12-01", "nightly-2026-12-02", "nightly_x"} {
		if err := s.Save(wordRecord(id, "plain")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ word, want string }{
		{"abcdefg", "AbCdEfG1 "},
		{"ABCDEF", "abcdefh2 AbCdEfG1 "},
		{"abcd", "ABCDE abcdefh2 AbCdEfG1 "},
		{"abc", "abc ABCDE abcdefh2 AbCdEfG1 "},
		{"abcdx", ""},
		{"9Z-q_X", "9z-Q_x "},
		{"9z-q%", ""},
		{"nightly-2026-12-01", "Nightly-2026-12-01 "},
		{"NIGHTLY-2026-12-0", "nightly-2026-12-02 Nightly-2026-12-01 "},
		{"nightly-", "nightly-2026-12-02 Nightly-2026-12-01 "},
		{"nightly", "nightly_x nightly-2026-12-02 Nightly-2026-12-01 "},
		{"nightly-2026-12-03", ""},
		{"nightly-2026-12-0?", ""}, // ? is a letter of the word, not a wildcard
	} {
		if got := found(t, s, tc.word); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.word, got, tc.want)
		}
	}
}

// A store of schema version 13 (halo_run_ids holding the whole ids) keeps its runs when a
// newer halo opens it: the index keeps the ids' first 8 letters (step 14), the runs are
// found by their ids' beginnings, short words and long ones, as are runs saved after, and a
// removal takes the run's entry out.
func TestSQLiteMigratesToShortIDs(t *testing.T) {
	ids := []string{"run-5ed08-aaaa", "Run-5ed08-bbbb", "0123456789abcdeffedcba9876543210"}
	dir, path := indexedStoreOf(t, 13, wordRecord(ids[0], "bilberry"), wordRecord(ids[1], "cloudberry"), wordRecord(ids[2], "gooseberry"))

	s := openGrouped(t, dir)
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM halo_run_ids WHERE length(lid) = 8`); err != nil || n != 3 {
		t.Errorf("halo_run_ids after step 14: %d entries of 8 letters (%v), want the 3 runs'", n, err)
	}
	fresh := s.NewRunID()
	if err := s.Save(wordRecord(fresh, "elderberry")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ word, want string }{
		{"run-5ed08-aaaa", ids[0] + " "},
		{"RUN-5ED08-B", ids[1] + " "},
		{"run-5ed", ids[1] + " " + ids[0] + " "},
		{"0123456789abcdeffedcba98", ids[2] + " "},
		{"0123456789abcdeffedcba99", ""},
		{fresh, fresh + " "},
		{strings.ToUpper(fresh[:5]), fresh + " "},
	} {
		if got := found(t, s, tc.word); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.word, got, tc.want)
		}
	}
	if gone, err := s.Delete(context.Background(), []string{ids[0]}); err != nil || len(gone) != 1 {
		t.Fatalf("delete: %v %v", gone, err)
	}
	if got := found(t, s, "run-5ed08"); got != ids[1]+" " {
		t.Errorf("run-5ed08 after removing %s: %q", ids[0], got)
	}
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM halo_run_ids`); err != nil || n != 3 {
		t.Errorf("halo_run_ids holds %d entries (%v), want the 3 runs there are", n, err)
	}
	ftsCheck(t, path)
}
