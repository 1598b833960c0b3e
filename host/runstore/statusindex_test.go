package runstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// TestSQLiteStatusIndex: since schema step 11, halo_runs_status holds the runs that are not
// completed, and a list of one status, and the latest paused run, are read from an index,
// never by reading every row, and the lists are read in the indexes' order (ascending, read
// from the end), never sorted; a store made at step 10 is migrated and lists the same runs.
func TestSQLiteStatusIndex(t *testing.T) {
	dir := t.TempDir() + "/.halo/runs"
	db := schemaDB(t, dir, 10)
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	statuses := []runtime.Status{runtime.Completed, runtime.Failed, runtime.Paused, runtime.Running, runtime.Completed, runtime.Failed}
	for i, st := range statuses {
		rec := wordRecord("run-"+string(rune('a'+i)), "word")
		rec.Status = st
		rec.Started = t0.Add(time.Duration(i) * time.Second)
		rec.Updated = rec.Started
		raw, err := runstore.MarshalRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`INSERT INTO halo_runs (id, pipeline, status, started, updated, record, search) VALUES (?, 'P', ?, ?, ?, ?, ?)`,
			rec.RunID, string(st), rec.Started.UnixNano(), rec.Updated.UnixNano(), string(raw), runstore.SearchText(rec)); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := openGrouped(t, dir)
	if n, err := runstore.QueryInt(s, false, `SELECT count(*) FROM halo_runs INDEXED BY halo_runs_status WHERE `+runstore.UnfinishedRuns); err != nil || n != 4 {
		t.Fatalf("halo_runs_status after step 11 holds %d runs (%v), want the 4 not completed", n, err)
	}
	want := map[runtime.Status]string{
		runtime.Completed: "run-e run-a ",
		runtime.Failed:    "run-f run-b ",
		runtime.Paused:    "run-c ",
		runtime.Running:   "run-d ",
	}
	for st, ids := range want {
		p, err := s.List(context.Background(), runstore.Query{Status: st})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, r := range p.Runs {
			got += r.RunID + " "
		}
		if got != ids {
			t.Errorf("the %s runs: %q, want %q", st, got, ids)
		}
		q, args, err := runstore.SQLiteDialect.ListSQL(runstore.Query{Status: st}, func(t time.Time) any { return t.UnixNano() })
		if err != nil {
			t.Fatal(err)
		}
		plan, err := runstore.QueryPlan(s, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		index := "halo_runs_status"
		if st == runtime.Completed {
			index = "halo_runs_newest"
		}
		if !strings.Contains(plan, "USING INDEX "+index) {
			t.Errorf("a list of the %s runs is not read from %s:\n%s", st, index, plan)
		}
	}
	for _, q := range []runstore.Query{{}, {Pipeline: "P"}, {Status: runtime.Failed, Cursor: runstore.Cursor{Started: t0.Add(5 * time.Second), RunID: "run-f"}.Encode()}} {
		sq, args, err := runstore.SQLiteDialect.ListSQL(q, func(t time.Time) any { return t.UnixNano() })
		if err != nil {
			t.Fatal(err)
		}
		plan, err := runstore.QueryPlan(s, sq, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, "USING INDEX") || strings.Contains(plan, "TEMP B-TREE") {
			t.Errorf("a list of %+v is not read in an index's order:\n%s", q, plan)
		}
	}
	plan, err := runstore.QueryPlan(s, runstore.LatestPausedSQL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "USING INDEX halo_runs_status") {
		t.Errorf("the latest paused run is not read from halo_runs_status:\n%s", plan)
	}
	if id, err := s.Latest(); err != nil || id != "run-c" {
		t.Errorf("latest paused run: %q %v, want run-c", id, err)
	}
}

// TestSQLiteTextMerges: since schema step 12 the text index merges its segments 8 at a time,
// and at once only at 16 a level, in a new store and in one made at step 11 (whose index
// step 10 had set to merge at 4).
func TestSQLiteTextMerges(t *testing.T) {
	for _, from := range []int{0, 11} {
		dir := t.TempDir() + "/.halo/runs"
		if from > 0 {
			schemaDB(t, dir, from).Close()
		}
		s := openGrouped(t, dir)
		for k, want := range map[string]int64{"automerge": 8, "crisismerge": 16} {
			if n, err := runstore.QueryInt(s, false, `SELECT v FROM halo_runs_text_config WHERE k = '`+k+`'`); err != nil || n != want {
				t.Errorf("from step %d: the text index's %s is %d (%v), want %d", from, k, n, err, want)
			}
		}
	}
}

// TestRowValues: a row of a commit's statement has a value for each of its columns.
func TestRowValues(t *testing.T) {
	if n := strings.Count(runstore.RowValues, "?"); n != runstore.NRunColumns {
		t.Errorf("a row has %d values for %d columns: %s", n, runstore.NRunColumns, runstore.RowValues)
	}
}
