package runstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/usertest"
)

// The ids the store makes are unique across the processes that share it (each takes blocks
// of keys of its own), look random, and are found by the keys they turn back into: their
// rows' keys grow one after another within a block, and halo_runs has no index of the ids.
func TestSQLiteMakesKeyedIDs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	a, b := openGrouped(t, dir), openGrouped(t, dir)
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	seen := map[string]bool{}
	var order []string
	for i := range 6 {
		s := a
		if i%2 == 1 {
			s = b
		}
		var id string
		if i == 4 {
			id = s.NewLongRunID()
			if len(id) != 32 || !hex16.MatchString(id[:16]) || !hex16.MatchString(id[16:]) {
				t.Fatalf("long id %q: not 32 hex digits", id)
			}
		} else if id = s.NewRunID(); !hex16.MatchString(id) {
			t.Fatalf("id %q: not 16 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %s made twice", id)
		}
		seen[id] = true
		order = append(order, id)
		if err := s.Save(runstoretest.NewRecord(id, runtime.Completed)); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range order {
		for _, s := range []*runstore.SQLite{a, b} {
			if rec, err := s.Load(id); err != nil || rec.RunID != id {
				t.Errorf("load %s: %v", id, err)
			}
		}
	}
	db := sqlDB(t, a.Path())
	defer db.Close()
	rows, err := db.Query(`SELECT id, key FROM halo_runs ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for rows.Next() {
		var id string
		var key int64
		rows.Scan(&id, &key)
		keys = append(keys, key)
	}
	rows.Close()
	// a took the first block (keys 1, 2, ...), b the second, both as they made their first id.
	if want := []int64{1, 1 + 4096, 2, 2 + 4096, 3, 3 + 4096}; fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Errorf("the rows' keys %v, want %v", keys, want)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM pragma_index_list('halo_runs') WHERE origin = 'pk' OR name LIKE 'sqlite_autoindex%'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("halo_runs has %d indexes of its ids (%v)", n, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM pragma_index_info('halo_runs_key')`).Scan(&n); err != nil || n != 2 {
		t.Errorf("halo_runs_key indexes %d columns (%v), want key and id", n, err)
	}
	// A word that begins an id finds its run, once the ids' index is written behind the saves.
	if got := found(t, a, order[3][:5]); !strings.Contains(got, order[3]) {
		t.Errorf("the runs whose id begins with %s: %q", order[3][:5], got)
	}
	// A store without GroupCommit (halo run) takes no block for its run or two: a random id.
	c, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if id := c.NewRunID(); !hex16.MatchString(id) || seen[id] {
		t.Errorf("halo run's id %q", id)
	}
	if err := db.QueryRow(`SELECT next FROM halo_key_state`).Scan(&n); err != nil || n != 1+2*4096 {
		t.Errorf("halo_key_state.next is %d (%v), want 2 blocks taken", n, err)
	}
}

// A store of schema version 8 (rows found by an index of their ids) keeps its runs when a
// newer halo opens it, whatever their ids: random ones as halo made them, long ones as
// halo serve did, ones of other letters, of either case. Each loads, saves again in place
// (not as a second row), is found by its words and its id's beginning, indexed before the
// migration or not, and is removed with its entries in both indexes.
func TestSQLiteMigratesToKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	path := filepath.Join(dir, runstore.DBName)
	db := schemaDB(t, dir, 8)
	ids := []string{"5ed08d4d388e8dcd", "0123456789abcdeffedcba9876543210", "old-run_1", "ABCDEF0123456789"}
	oldRows(t, db, wordRecord(ids[0], "bilberry"), wordRecord(ids[1], "cloudberry"))
	for _, q := range []string{
		`INSERT INTO halo_runs_text (rowid, search) SELECT rowid, search FROM halo_runs`,
		`UPDATE halo_text_state SET upto = (SELECT max(rowid) FROM halo_runs)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	oldRows(t, db, wordRecord(ids[2], "bilberry"), wordRecord(ids[3], "cloudberry"))
	db.Close()

	s := openGrouped(t, dir)
	for _, id := range ids {
		if rec, err := s.Load(id); err != nil || rec.RunID != id {
			t.Fatalf("load %s after the migration: %v", id, err)
		}
	}
	for _, tc := range []struct{ word, want string }{
		{"ilberr", ids[2] + " " + ids[0] + " "},
		{"cloudberry", ids[3] + " " + ids[1] + " "},
		{"5ed08", ids[0] + " "},
		{"0123456789abcdeffe", ids[1] + " "},
		{"OLD-R", ids[2] + " "},
		{"abcdef01", ids[3] + " "},
	} {
		if got := found(t, s, tc.word); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.word, got, tc.want)
		}
	}
	for _, id := range ids {
		again := wordRecord(id, "gooseberry")
		if err := s.Save(again); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM halo_runs`); err != nil || n != 4 {
		t.Errorf("%d rows after saving the 4 runs again (%v)", n, err)
	}
	if got := found(t, s, "gooseberry"); len(strings.Fields(got)) != 4 {
		t.Errorf("gooseberry: %q", got)
	}
	if gone, err := s.Delete(context.Background(), []string{ids[0], ids[2]}); err != nil || len(gone) != 2 {
		t.Fatalf("delete: %v %v", gone, err)
	}
	for _, w := range []string{"5ed08", "old-r"} {
		if got := found(t, s, w); got != "" {
			t.Errorf("%q, removed: %q", w, got)
		}
	}
	fresh := s.NewRunID()
	if err := s.Save(wordRecord(fresh, "gooseberry")); err != nil {
		t.Fatal(err)
	}
	if got := found(t, s, fresh[:6]); got != fresh+" " {
		t.Errorf("a run saved after: %q", got)
	}
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM halo_run_ids`); err != nil || n != 3 {
		t.Errorf("halo_run_ids holds %d ids (%v), want the 3 runs there are", n, err)
	}
	ftsCheck(t, path)
	db = sqlDB(t, path)
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity: %q %v", check, err)
	}
}

// A store a repository ships with its key state tampered with is refused or does no harm: a
// secret of the wrong size is refused with STORE, saying so; a block counter at the end of
// its range, or missing, makes random ids (and a warning), and runs are saved all the same;
// as root and as halo-test.
func TestSQLiteTamperedRunKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	s := openGrouped(t, dir)
	path := s.Path()
	s.Close()
	db := sqlDB(t, path)
	if _, err := db.Exec(`UPDATE halo_key_state SET next = 9223372036854775807`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s = openGrouped(t, dir)
	id := s.NewRunID()
	if len(id) != 16 {
		t.Fatalf("id %q", id)
	}
	if err := s.Save(runstoretest.NewRecord(id, runtime.Completed)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(id); err != nil {
		t.Fatal(err)
	}
	if n, err := runstore.QueryInt(s, false, `SELECT next = 9223372036854775807 AND typeof(next) = 'integer' FROM halo_key_state`); err != nil || n != 1 {
		t.Errorf("the counter at the end of its range was changed (%v)", err)
	}
	if err := runstore.WriterExec(s, `DROP TABLE halo_key_state`); err != nil {
		t.Fatal(err)
	}
	if id := s.NewRunID(); len(id) != 16 {
		t.Fatalf("id %q without halo_key_state", id)
	}
	s.Close()
	db = sqlDB(t, path)
	if _, err := db.Exec(`UPDATE halo_secrets SET value = x'010203' WHERE name = 'run-keys'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if errcode.Code(err) != runstore.CodeStore || !strings.Contains(fmt.Sprint(err), "not 16 bytes") {
		t.Errorf("a store whose run-keys secret is 3 bytes: %v, want %s saying so", err, runstore.CodeStore)
	}
	usertest.Rerun(t)
}

// A store of schema version 9, its runs in the text index with the letters' positions,
// keeps them when a newer halo opens it: the index is made again without them (step 10),
// the runs are found by their words and their ids' beginnings, a word's letters found out
// of order are not taken for the word, and a removal keeps the index in step.
func TestSQLiteMigratesToLeanText(t *testing.T) {
	// Ids that key as 0, as the rows oldRows writes do (an older halo gave the others theirs).
	ids := []string{"run-5ed08", "Run-0123456789", "old-run_1"}
	dir, path := indexedStoreOf(t, 9, wordRecord(ids[0], "bilberry"), wordRecord(ids[1], "cloudberry"), wordRecord(ids[2], "abcxbcd"))

	s := openGrouped(t, dir)
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM sqlite_schema WHERE name = 'halo_runs_text' AND sql LIKE '%detail=none, columnsize=0%'`); err != nil || n != 1 {
		t.Fatalf("halo_runs_text after step 10: %d tables of the lean form (%v)", n, err)
	}
	for _, tc := range []struct{ word, want string }{
		{"ilberr", ids[0] + " "},
		{"cloudberry", ids[1] + " "},
		{"abcx", ids[2] + " "},
		{"abcd", ""}, // its trigrams abc and bcd are all in abcxbcd, but not in a row
		{"run-5ed", ids[0] + " "},
		{"run-01234", ids[1] + " "},
		{"OLD-R", ids[2] + " "},
	} {
		if got := found(t, s, tc.word); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.word, got, tc.want)
		}
	}
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM halo_run_ids`); err != nil || n != 3 {
		t.Errorf("halo_run_ids holds %d ids (%v), want the 3 runs there are", n, err)
	}
	if gone, err := s.Delete(context.Background(), []string{ids[0]}); err != nil || len(gone) != 1 {
		t.Fatalf("delete: %v %v", gone, err)
	}
	if got := found(t, s, "bilberry"); got != "" {
		t.Errorf("bilberry, removed: %q", got)
	}
	ftsCheck(t, path)
}
