package runstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/smallfs"
	"halolang.dev/halo/internal/usertest"
)

func openSQLite(t *testing.T) runstore.Store {
	s, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSQLiteContract(t *testing.T) {
	runstoretest.Run(t, runstoretest.Config{Open: openSQLite})
}

// Without GroupCommit (halo run) the store keeps the same contract, every save committed
// before it returns.
func TestSQLiteContractSynced(t *testing.T) {
	runstoretest.Run(t, runstoretest.Config{Open: func(t *testing.T) runstore.Store {
		s, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}})
}

// halo serve has the store to itself: a second exclusive open is refused until the first
// closes; halo run, mcp and runs (not exclusive) use it beside it, and see its runs.
func TestSQLiteExclusive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	a, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true}); errcode.Code(err) != runstore.CodeBusy {
		t.Fatalf("a second exclusive open: %v, want %s", err, runstore.CodeBusy)
	}
	if busy, err := runstore.FolderInUse(dir); !busy || err != nil {
		t.Errorf("FolderInUse: %v %v, want in use", busy, err)
	}
	if err := a.Save(runstoretest.NewRecord("r1", runtime.Completed)); err != nil {
		t.Fatal(err)
	}
	a.Sync()
	b, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatalf("a second process beside the server: %v", err)
	}
	if rec, err := b.Load("r1"); err != nil || rec.Status != runtime.Completed {
		t.Errorf("the server's run, read by another process: %+v %v", rec, err)
	}
	if err := b.Save(runstoretest.NewRecord("r2", runtime.Completed)); err != nil {
		t.Errorf("a save beside the server: %v", err)
	}
	b.Close()
	if p, err := a.List(context.Background(), runstore.Query{}); err != nil || len(p.Runs) != 2 {
		t.Errorf("the server lists %+v %v, want the other process's run too", p, err)
	}
	a.Close()
	c, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	c.Close()
}

// A run the store says is running when a server opens it was running when the server
// before it stopped: Expire fails it HOST_LOST, with its events kept, and a save of it is
// refused until then.
func TestSQLiteExpiresRunsOfAStoppedServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	a, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := runstoretest.NewRecord("r1", runtime.Running)
	rec.Events = []runtime.Event{{Type: "tool", RunID: "r1", Target: "T.m"}}
	if err := a.Start(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if lost, err := a.Expire(ctx); err != nil || len(lost) != 0 {
		t.Fatalf("a held run was expired: %v %v", lost, err)
	}
	a.Close() // the server stops without saving the run as it ends: its start was committed
	b, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Save(rec); errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("a save of a run the server before left running: %v, want %s", err, runstore.CodeTaken)
	}
	lost, err := b.Expire(ctx)
	if err != nil || len(lost) != 1 || lost[0] != "r1" {
		t.Fatalf("expired %v %v", lost, err)
	}
	got, err := b.Load("r1")
	if err != nil || got.Status != runtime.Failed || got.Error == nil || got.Error.Code != runstore.CodeHostLost || len(got.Events) != 2 || got.Events[0].Target != "T.m" {
		t.Fatalf("lost run %+v %v", got, err)
	}
}

// A file in the store's place that is not a Halo run store is refused with STORE, saying
// which it is, and left as it was: text, another program's SQLite database, one of a newer
// schema.
func TestSQLiteRefusesOtherFiles(t *testing.T) {
	for _, tc := range []struct {
		name, says string
		make       func(t *testing.T, path string)
	}{
		{"text", "is not a SQLite database", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("not a database\n", 100)), 0o600)
		}},
		{"another program's", "not a Halo run store (it has tables notes", func(t *testing.T, path string) {
			db := sqlDB(t, path)
			db.Exec(`CREATE TABLE notes (x text)`)
			db.Close()
		}},
		{"newer", "schema version 99, made by a newer halo", func(t *testing.T, path string) {
			s, err := runstore.OpenSQLite(filepath.Dir(path), runstore.SQLiteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			db := sqlDB(t, path)
			if _, err := db.Exec(`INSERT INTO halo_schema (version) VALUES (99)`); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".halo", "runs")
			os.MkdirAll(dir, 0o755)
			path := filepath.Join(dir, runstore.DBName)
			tc.make(t, path)
			before, _ := os.ReadFile(path)
			_, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
			if errcode.Code(err) != runstore.CodeStore || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v, want %s saying %q", err, runstore.CodeStore, tc.says)
			}
			if after, _ := os.ReadFile(path); string(after) != string(before) {
				t.Errorf("the file was changed")
			}
		})
	}
}

func sqlDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := runstore.OpenSQL(path)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// A repository that ships .halo, .halo/runs, the database or a file SQLite makes beside it
// as a link gets the store refused (STATE_DIR_UNSAFE), and nothing written through the
// link; as root and as halo-test.
func TestSQLiteRefusesLinks(t *testing.T) {
	for _, which := range []string{".halo", ".halo/runs", ".halo/runs/runs.db", ".halo/runs/runs.db-wal", ".halo/runs/runs.db-shm", ".halo/runs/runs.db-journal"} {
		t.Run(which, func(t *testing.T) {
			project, victim := t.TempDir(), t.TempDir()
			target := victim
			if strings.Contains(which, "runs.db") {
				target = filepath.Join(victim, "precious")
				os.WriteFile(target, []byte("keep me"), 0o644)
			}
			os.MkdirAll(filepath.Join(project, filepath.Dir(which)), 0o755)
			if err := os.Symlink(target, filepath.Join(project, which)); err != nil {
				t.Fatal(err)
			}
			_, err := runstore.OpenSQLite(filepath.Join(project, ".halo", "runs"), runstore.SQLiteOptions{})
			if errcode.Code(err) != "STATE_DIR_UNSAFE" {
				t.Fatalf("%v, want STATE_DIR_UNSAFE", err)
			}
			entries, _ := os.ReadDir(victim)
			if b, _ := os.ReadFile(filepath.Join(victim, "precious")); len(entries) > 1 || (len(entries) == 1 && string(b) != "keep me") {
				t.Errorf("the link's target was written: %d entries", len(entries))
			}
		})
	}
	usertest.Rerun(t)
}

// The database holds unredacted records: it and the files beside it are the user's alone.
func TestSQLiteFileIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Save(runstoretest.NewRecord("r1", runtime.Completed)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{runstore.DBName, runstore.DBName + "-wal", runstore.DBName + "-shm"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", name, fi, err)
		}
	}
}

// A full disk fails the save with STORE saying so, whether the save waits for its commit
// (halo run) or not (halo mcp, halo serve: once a commit failed, saves wait for theirs, so
// the run is reported failed); once there is room again, Sync writes the records that
// failed; and removing runs on a full disk says it needs room itself, then works once there
// is some. Needs root, for a small filesystem of its own.
func TestSQLiteFullDisk(t *testing.T) {
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			mnt := smallfs.Mount(t, 512<<10)
			s, err := runstore.OpenSQLite(filepath.Join(mnt, "runs"), runstore.SQLiteOptions{GroupCommit: group})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var saveErr error
			var last string
			for i := 0; i < 20000 && saveErr == nil; i++ { // past maxPending, a save waits for a commit
				last = fmt.Sprintf("r%d", i)
				rec := runstoretest.NewRecord(last, runtime.Completed)
				rec.Output = strings.Repeat("x", 4000)
				saveErr = s.Save(rec)
			}
			if errcode.Code(saveErr) != runstore.CodeStore || !strings.Contains(saveErr.Error(), "the disk is full") {
				t.Fatalf("saves on a full disk: %v, want %s saying the disk is full", saveErr, runstore.CodeStore)
			}

			// Once there is room again, the records that failed are written by the next
			// commit: nothing the store was given is lost while it stays open.
			smallfs.Grow(t, mnt, 64<<20)
			s.Sync() // says a commit failed since the last Sync
			if err := s.Sync(); err != nil {
				t.Fatalf("a commit once there is room: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			s, err = runstore.OpenSQLite(filepath.Join(mnt, "runs"), runstore.SQLiteOptions{GroupCommit: group})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if rec, err := s.Load(last); err != nil || rec.Output != strings.Repeat("x", 4000) {
				t.Fatalf("the run whose save failed, after room came back: %v", err)
			}

			// Removing runs on a full disk needs room too, and says so; once there is some,
			// it removes them.
			fill := filepath.Join(mnt, "fill")
			f, err := os.Create(fill)
			if err != nil {
				t.Fatal(err)
			}
			for _, werr := f.Write(make([]byte, 64<<10)); werr == nil; _, werr = f.Write(make([]byte, 4<<10)) {
			}
			f.Close()
			_, err = s.Delete(context.Background(), []string{"r0", last})
			if errcode.Code(err) != runstore.CodeStore || !strings.Contains(err.Error(), "removing runs needs some free space itself") {
				t.Fatalf("removing runs on a full disk: %v, want %s saying removing needs room", err, runstore.CodeStore)
			}
			os.Remove(fill)
			if gone, err := s.Delete(context.Background(), []string{"r0", last}); err != nil || len(gone) != 2 {
				t.Fatalf("removing runs once there is room: %v %v", gone, err)
			}
		})
	}
}

// The first open in a folder an older halo wrote imports its records (files and run logs;
// a file wins over log lines, a log's last line over earlier ones), in one transaction, and
// only then moves the files aside. A paused record is sealed as it is imported only when its
// file is as halo wrote it (mode 0600): one a repository shipped stays unsealed.
func TestSQLiteImportsOldFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	os.MkdirAll(filepath.Join(dir, "log"), 0o755)
	write := func(name string, rec *runtime.Record, mode os.FileMode) {
		b, _ := json.Marshal(rec)
		if err := os.WriteFile(filepath.Join(dir, name), b, mode); err != nil {
			t.Fatal(err)
		}
	}
	done := runstoretest.NewRecord("done", runtime.Completed)
	write("done.json", done, 0o600)
	write("mine.json", runstoretest.NewRecord("mine", runtime.Paused), 0o600)
	write("shipped.json", runstoretest.NewRecord("shipped", runtime.Paused), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.json"), []byte("{not a record"), 0o600)
	early := runstoretest.NewRecord("logged", runtime.Running)
	late := *early
	late.Status = runtime.Completed
	var log []byte
	for _, r := range []*runtime.Record{early, &late, runstoretest.NewRecord("done", runtime.Failed)} {
		b, _ := json.Marshal(r)
		log = append(append(log, b...), '\n')
	}
	log = append(log, `{"runId":"cut","sta`...) // a last line a crash cut short
	os.WriteFile(filepath.Join(dir, "log", "20260101T000000.000000000Z-abcd.jsonl"), log, 0o600)

	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	imp := s.Imported()
	if imp == nil || imp.Err != nil || imp.Imported != 4 || len(imp.Skipped) != 1 || imp.Skipped[0] != "notes.json" {
		t.Fatalf("import %+v", imp)
	}
	for id, want := range map[string]runtime.Status{"done": runtime.Completed, "mine": runtime.Paused, "shipped": runtime.Paused, "logged": runtime.Completed} {
		if rec, err := s.Load(id); err != nil || rec.Status != want {
			t.Errorf("%s: %+v %v, want %s", id, rec, err, want)
		}
	}
	key, _ := s.SealKey()
	mine, _ := s.Load("mine")
	shipped, _ := s.Load("shipped")
	if runtime.CheckSeal(mine, key) != nil || errcode.Code(runtime.CheckSeal(shipped, key)) != runtime.CodeTampered {
		t.Errorf("seals: the user's own paused record %v, a shipped one %v", runtime.CheckSeal(mine, key), runtime.CheckSeal(shipped, key))
	}
	for _, name := range []string{"done.json", "mine.json", "shipped.json", "log"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s was not moved aside: %v", name, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, imp.Aside, name)); err != nil {
			t.Errorf("%s is not in %s: %v", name, imp.Aside, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.json")); err != nil {
		t.Errorf("a file that is not a record was moved: %v", err)
	}
}

// A folder the import cannot read (a record file it may not open) is reported and left as
// it was: nothing imported, nothing moved; the store opens all the same. As halo-test, for
// whom a mode 000 file is unreadable.
func TestSQLiteImportUnreadableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		usertest.Rerun(t)
		return
	}
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	os.MkdirAll(dir, 0o755)
	b, _ := json.Marshal(runstoretest.NewRecord("a", runtime.Completed))
	os.WriteFile(filepath.Join(dir, "a.json"), b, 0o600)
	os.WriteFile(filepath.Join(dir, "b.json"), b, 0o000)
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if imp := s.Imported(); imp == nil || imp.Err == nil || imp.Imported != 0 {
		t.Fatalf("import %+v, want an error and nothing imported", imp)
	}
	if _, err := s.Load("a"); !runstore.IsNotFound(err) {
		t.Errorf("a run of a folder that could not be read was imported: %v", err)
	}
	for _, name := range []string{"a.json", "b.json"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s moved: %v", name, err)
		}
	}
}

// Listing keeps every filter the query sets: status, pipeline, a start time window, runs
// with violations, a cost above, and words of their search text or their id's beginning.
func TestSQLiteListFilters(t *testing.T) {
	s := openSQLite(t)
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		rec := runstoretest.NewRecord(fmt.Sprintf("f%d", i), runtime.Completed)
		rec.Started, rec.Updated = t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour)
		rec.Inputs = map[string]any{"order": fmt.Sprintf("ORD-%d", i)}
		if i%2 == 0 {
			rec.Meta.Calls = []runtime.CallInfo{{Kind: "tool", Target: "Pay.create_refund"}}
		}
		if i == 7 {
			rec.Meta.Violations = []runtime.ViolationInfo{{Policy: "P", Rule: "Block"}}
		}
		rec.Meta.Cost = float64(i) / 100
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(q runstore.Query) string {
		t.Helper()
		p, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range p.Runs {
			out = append(out, r.RunID)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		q    runstore.Query
		want string
	}{
		{runstore.Query{Text: "pay.CREATE_refund"}, "f8 f6 f4 f2 f0"},
		{runstore.Query{Text: "ord-3"}, "f3"},
		{runstore.Query{Text: "refund ord-4"}, "f4"},
		{runstore.Query{Text: "100%"}, ""},
		{runstore.Query{Violations: true}, "f7"},
		{runstore.Query{Since: t0.Add(7 * time.Hour)}, "f9 f8 f7"},
		{runstore.Query{Since: t0.Add(2 * time.Hour), Until: t0.Add(4 * time.Hour), Text: "refund"}, "f2"},
		{runstore.Query{Text: "F3"}, "f3"}, // a run id's beginning
		{runstore.Query{Text: "3"}, "f3"},  // in the search text ("ORD-3")
		{runstore.Query{Text: "f"}, "f9 f8 f7 f6 f5 f4 f3 f2 f1 f0"},
		{runstore.Query{Text: "f_"}, ""},             // LIKE's wildcards are letters
		{runstore.Query{MinCost: 0.065}, "f9 f8 f7"}, // cost above
		{runstore.Query{MinCost: 0.05, Text: "refund"}, "f8 f6"},
	} {
		if got := ids(tc.q); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.q, got, tc.want)
		}
	}
}

// A database of schema version 3 (before tokens) gets each run's tokens and unpriced mark
// from its record when a newer halo opens it; a record without calls gets none.
func TestSQLiteMigratesUsage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	os.MkdirAll(dir, 0o755)
	db := sqlDB(t, filepath.Join(dir, runstore.DBName))
	d := runstore.SQLiteDialect
	must := func(_ sql.Result, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.Exec(d.SchemaTableSQL()))
	for v := 1; v <= 3; v++ {
		for _, st := range d.Migration(v) {
			must(db.Exec(st))
		}
		must(db.Exec(`INSERT INTO halo_schema (version) VALUES (?)`, v))
	}
	with := runstoretest.NewRecord("old1", runtime.Completed)
	with.Meta.Calls = runstoretest.UsageCalls()
	without := runstoretest.NewRecord("old2", runtime.Completed)
	without.Meta.Calls = nil
	for _, rec := range []*runtime.Record{with, without} {
		raw, err := runstore.MarshalRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		must(db.Exec(`INSERT INTO halo_runs (id, pipeline, status, started, updated, record) VALUES (?, 'P', 'completed', ?, ?, ?)`,
			rec.RunID, rec.Started.UnixNano(), rec.Updated.UnixNano(), string(raw)))
	}
	db.Close()
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.List(context.Background(), runstore.Query{})
	if err != nil || len(p.Runs) != 2 {
		t.Fatalf("%+v %v", p, err)
	}
	runstoretest.CheckUsage(t, p.Runs[1])
	if r := p.Runs[0]; r.RunID != "old2" || r.TokensIn != 0 || r.TokensOut != 0 || r.Unpriced {
		t.Errorf("a run without calls: %+v", r)
	}
}

// A text query finds the same runs whichever way the store reads it (textsearch.go): with
// thresholds made small, a word most runs hold is found among the newest, or, when they
// do not hold it, from the index; a rare word from the index; a short one by reading.
func TestSQLiteTextPlans(t *testing.T) {
	s, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range 40 {
		rec := runstoretest.NewRecord(fmt.Sprintf("run%02d", i), []runtime.Status{runtime.Completed, runtime.Failed}[i%2])
		rec.Started, rec.Updated = t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i)*time.Minute)
		word := "common"
		if i < 20 {
			word = "older" // held by the oldest half only
		}
		rec.Inputs = map[string]any{"w": fmt.Sprintf("%s n%02d", word, i)}
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	want := func(from, to int, status runtime.Status) string {
		var ids []string
		for i := to; i >= from; i-- {
			if status == "" || (status == runtime.Failed) == (i%2 == 1) {
				ids = append(ids, fmt.Sprintf("run%02d", i))
			}
		}
		if len(ids) > 5 {
			ids = ids[:5]
		}
		return strings.Join(ids, " ")
	}
	for _, plan := range [][2]int{{0, 0}, {3, 10}, {3, 1000}, {1000, 10}} {
		runstore.SetTextPlan(s, plan[0], plan[1])
		for _, tc := range []struct {
			q    runstore.Query
			want string
		}{
			{runstore.Query{Text: "common", Limit: 5}, want(20, 39, "")},
			{runstore.Query{Text: "older", Limit: 5}, want(0, 19, "")},
			{runstore.Query{Text: "older", Status: runtime.Failed, Limit: 5}, want(0, 19, runtime.Failed)},
			{runstore.Query{Text: "n07", Limit: 5}, "run07"},
			{runstore.Query{Text: "run1", Limit: 5}, want(10, 19, "")},
			{runstore.Query{Text: "run1 older", Limit: 5}, want(10, 19, "")},
			{runstore.Query{Text: "un1", Limit: 5}, ""}, // in ids, but not at their beginning
			{runstore.Query{Text: "n3", Limit: 5}, want(30, 39, "")},
			{runstore.Query{Text: "n*7 n07", Limit: 5}, ""}, // no 3 letters between wildcards: read
			{runstore.Query{Text: "r[*]n07", Limit: 5}, ""}, // nor here
		} {
			p, err := s.List(context.Background(), tc.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range p.Runs {
				got = append(got, r.RunID)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("plan %v, %+v: %v, want %q", plan, tc.q, got, tc.want)
			}
			if len(got) == 5 && p.Next == "" {
				t.Errorf("plan %v, %+v: a full page without a next", plan, tc.q)
			}
		}
	}
}

// A commit writes its rows with statements of many rows each (Chunks): every count of rows
// is written exactly, with the largest statements first.
func TestSQLiteCommitChunks(t *testing.T) {
	for n := range 3*(1<<runstore.MaxRowsLog2) + 7 {
		sum, prev := 0, runstore.MaxRowsLog2
		for _, l := range runstore.Chunks(n) {
			if l < 0 || l > prev {
				t.Fatalf("Chunks(%d) = %v: not from the largest down", n, runstore.Chunks(n))
			}
			sum += 1 << l
			prev = l
		}
		if sum != n {
			t.Fatalf("Chunks(%d) = %v: %d rows", n, runstore.Chunks(n), sum)
		}
	}
}

// A commit of saves alone writes them with one statement of the next power of two rows, its
// rows past them left unbound: every count writes exactly its rows, none of them empty, and
// more than the largest statement holds is written by several.
func TestSQLiteCommitsOfOneStatement(t *testing.T) {
	s := openSQLite(t).(*runstore.SQLite)
	defer s.Close()
	total := 0
	for _, n := range []int{1, 2, 3, 5, 7, 64, 100, 1 << runstore.MaxRowsLog2, 1<<runstore.MaxRowsLog2 + 3} {
		var recs []*runtime.Record
		for i := range n {
			recs = append(recs, runstoretest.NewRecord(fmt.Sprintf("one%d-%d", n, i), runtime.Completed))
		}
		if err := runstore.CommitSaves(s, recs); err != nil {
			t.Fatalf("%d rows: %v", n, err)
		}
		// Saved again in a commit of one: the row is written over, not added.
		again := *recs[n-1]
		again.Status = runtime.Failed
		if err := runstore.CommitSaves(s, []*runtime.Record{&again}); err != nil {
			t.Fatal(err)
		}
		total += n
		got, err := runstore.QueryInt(s, true, `SELECT count(*) FROM halo_runs`)
		if err != nil || got != int64(total) {
			t.Fatalf("after a commit of %d rows: %d rows, want %d (%v)", n, got, total, err)
		}
		if empty, err := runstore.QueryInt(s, true, `SELECT count(*) FROM halo_runs WHERE id IS NULL OR id = ''`); err != nil || empty != 0 {
			t.Fatalf("after a commit of %d rows: %d rows without an id (%v)", n, empty, err)
		}
		if got, err := s.Load(recs[0].RunID); err != nil || (n > 1 && got.Status != runtime.Completed) {
			t.Fatalf("the first of %d rows: %+v %v", n, got, err)
		}
		if got, err := s.Load(again.RunID); err != nil || got.Status != runtime.Failed {
			t.Fatalf("the last of %d rows, saved again: %+v %v", n, got, err)
		}
	}
}

// Commits of many records, of one and of hundreds, of runs that start, stop, are saved
// again and are claimed, keep the text index in step with the runs: each is found by the
// words of its newest record and by no others, and FTS5's integrity check passes.
func TestSQLiteBatchesKeepTheTextIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	paused := runstoretest.NewRecord("paused", runtime.Paused)
	if err := s.Save(paused); err != nil {
		t.Fatal(err)
	}
	// want is, by run id, the word its newest record holds; gone the words no run holds now.
	want := map[string]string{}
	var gone []string
	n := 0
	for _, batch := range []int{1, 3, 300, 5, 2100, 2, 1} {
		for range batch {
			id := fmt.Sprintf("r%04d", n)
			first, last := fmt.Sprintf("first%04dq", n), fmt.Sprintf("last%04dq", n)
			rec := runstoretest.NewRecord(id, runtime.Running)
			rec.Inputs = map[string]any{"w": first}
			switch n % 4 {
			case 0: // starts and is left running
				if err := s.Start(ctx, rec); err != nil {
					t.Fatal(err)
				}
				want[id] = first
			case 1: // starts and stops before a commit
				if err := s.Start(ctx, rec); err != nil {
					t.Fatal(err)
				}
				rec.Status, rec.Output = runtime.Completed, last
				if err := s.Save(rec); err != nil {
					t.Fatal(err)
				}
				want[id] = first + " " + last
			default: // saved, then saved again with other words
				rec.Status = runtime.Completed
				if err := s.Save(rec); err != nil {
					t.Fatal(err)
				}
				if n%4 == 3 {
					if err := s.Sync(); err != nil { // the first words committed, then replaced
						t.Fatal(err)
					}
				}
				rec.Inputs = map[string]any{"w": last}
				if err := s.Save(rec); err != nil {
					t.Fatal(err)
				}
				want[id], gone = last, append(gone, first)
			}
			n++
		}
		if batch == 300 { // a claim in the commit of a batch
			rec, err := s.Load("paused")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Claim(ctx, rec, runstore.Signal{Channel: "yield"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	for id, w := range want {
		if n := len(id); n > 0 && id[n-1]%7 != 0 { // a sample: a seventh of them
			continue
		}
		page, err := s.List(ctx, runstore.Query{Text: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) != 1 || page.Runs[0].RunID != id {
			t.Errorf("runs with %q: %v, want %s", w, page.Runs, id)
		}
	}
	for _, w := range gone[:100] {
		page, err := s.List(ctx, runstore.Query{Text: w})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Runs) != 0 {
			t.Errorf("runs with %q, which no record holds now: %v", w, page.Runs)
		}
	}
	if sum, err := s.List(ctx, runstore.Query{Text: "paused"}); err != nil || len(sum.Runs) != 1 || sum.Runs[0].Status != runtime.Running {
		t.Errorf("the claimed run: %v %v, want it running", sum.Runs, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := sqlDB(t, filepath.Join(dir, runstore.DBName))
	defer db.Close()
	if _, err := db.Exec(`INSERT INTO halo_runs_text (halo_runs_text, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("the text index is not in step with the runs: %v", err)
	}
	var rows, indexed int
	if err := db.QueryRow(`SELECT (SELECT count(*) FROM halo_runs), (SELECT count(*) FROM halo_runs_text WHERE search GLOB '*q*')`).Scan(&rows, &indexed); err != nil {
		t.Fatal(err)
	}
	if rows != n+1 || indexed != n {
		t.Errorf("%d runs, %d of them found by their words; want %d and %d", rows, indexed, n+1, n)
	}
}

// A store of schema version 5 (the text index with FTS5's merge settings) gets the index's
// crisismerge a new store has when a newer halo opens it (4 from step 6, FTS5's 16 again
// from step 12), and its runs are found as before.
func TestSQLiteMigratesTextMerge(t *testing.T) {
	crisis := func(t *testing.T, path string) int {
		t.Helper()
		db := sqlDB(t, path)
		defer db.Close()
		n := 0
		if err := db.QueryRow(`SELECT coalesce((SELECT v FROM halo_runs_text_config WHERE k = 'crisismerge'), 16)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	path := filepath.Join(dir, runstore.DBName)
	db := schemaDB(t, dir, 5)
	oldRows(t, db, wordRecord("old1", "marmalade"))
	db.Close()
	if n := crisis(t, path); n != 16 {
		t.Fatalf("schema 5's crisismerge: %d, want FTS5's default 16", n)
	}
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.List(context.Background(), runstore.Query{Text: "armala"})
	if err != nil || len(p.Runs) != 1 || p.Runs[0].RunID != "old1" {
		t.Errorf("the run of schema 5 by a word of it: %+v %v", p, err)
	}
	s.Close()
	// Step 6 made it 4; step 12 (sqliteTextFewerMerges) made it FTS5's default again.
	if n := crisis(t, path); n != 16 {
		t.Errorf("crisismerge once migrated: %d, want 16", n)
	}
	fresh := filepath.Join(t.TempDir(), ".halo", "runs")
	s, err = runstore.OpenSQLite(fresh, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := crisis(t, filepath.Join(fresh, runstore.DBName)); n != 16 {
		t.Errorf("a new store's crisismerge: %d, want 16", n)
	}
}

// A run whose id the database holds already, still running as its start is committed
// (not saved once as it stops), is refused by that commit and by its later saves; the row
// there is left as it was, and the runs committed beside it are written.
func TestSQLiteStartTakenWhileRunning(t *testing.T) {
	s := openSQLite(t).(*runstore.SQLite)
	defer s.Close()
	ctx := context.Background()
	old := runstoretest.NewRecord("taken1", runtime.Completed)
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	again := runstoretest.NewRecord("taken1", runtime.Running)
	again.Inputs = map[string]any{"x": "other"}
	if err := s.Start(ctx, again); err != nil {
		t.Fatalf("Start read the database: %v", err)
	}
	beside := runstoretest.NewRecord("beside1", runtime.Running)
	if err := s.Start(ctx, beside); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("the commit of a start whose id is taken: %v, want %s", err, runstore.CodeTaken)
	}
	again.Status = runtime.Completed
	err := s.Save(again)
	if err == nil {
		err = s.Sync()
	}
	if errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("a later save of it: %v, want %s", err, runstore.CodeTaken)
	}
	if got, err := s.Load("taken1"); err != nil || got.Status != runtime.Completed || got.Inputs["x"] != "y" {
		t.Errorf("the run there: %+v %v", got, err)
	}
	if got, err := s.Load("beside1"); err != nil || got.Status != runtime.Running {
		t.Errorf("the run started beside it: %+v %v", got, err)
	}
}

// The store's connections trust no schema (a shipped database's triggers and views run no
// function with side effects) and are defensive: even with writable_schema, the schema
// table cannot be written.
func TestSQLiteUntrustedDefensive(t *testing.T) {
	s, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, write := range []bool{true, false} {
		if n, err := runstore.QueryInt(s, write, `PRAGMA trusted_schema`); err != nil || n != 0 {
			t.Errorf("trusted_schema on the writer=%v: %d %v, want 0", write, n, err)
		}
	}
	runstore.WriterExec(s, `PRAGMA writable_schema = ON`)
	if err := runstore.WriterExec(s, `UPDATE sqlite_schema SET sql = sql WHERE name = 'halo_runs'`); err == nil {
		t.Errorf("the schema table was written: the connection is not defensive")
	}
}

// A run is named by its whole id, "last", or the beginning of exactly one run's id
// (halo runs show, rm, resume and replay).
func TestSQLiteResolveID(t *testing.T) {
	s := openSQLite(t).(*runstore.SQLite)
	defer s.Close()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ids := []string{"3f9c0a7be41d2268", "3f9c0a7be41d9999", "3f02aaaaaaaaaaaa", "abc", "abcdef", "Mixed-Case_1"}
	for i := range 6 {
		ids = append(ids, fmt.Sprintf("77%d", i))
	}
	for i, id := range ids {
		rec := runstoretest.NewRecord(id, runtime.Completed)
		rec.Started, rec.Updated = t0.Add(time.Duration(i)*time.Minute), t0.Add(time.Duration(i)*time.Minute)
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for word, want := range map[string]string{
		"last":             "775",
		"3f02":             "3f02aaaaaaaaaaaa",
		"3F02":             "3f02aaaaaaaaaaaa", // ignoring case
		"3f9c0a7be41d2268": "3f9c0a7be41d2268", // a whole id
		"3f9c0a7be41d22":   "3f9c0a7be41d2268", // longer than the index's 8 letters
		"abc":              "abc",              // a whole id, though it begins another
		"abcd":             "abcdef",
		"mixed":            "Mixed-Case_1",
	} {
		got, err := s.ResolveID(ctx, word)
		if err != nil || got != want {
			t.Errorf("ResolveID(%q) = %q, %v; want %q", word, got, err, want)
		}
	}
	for word, want := range map[string]string{
		"3f9c0a7be41d": "3f9c0a7be41d begins the ids of several runs (3f9c0a7be41d2268, 3f9c0a7be41d9999): give more of the id",
		"3f":           "3f begins the ids of several runs (3f02aaaaaaaaaaaa, 3f9c0a7be41d2268, 3f9c0a7be41d9999)",
		"77":           "(770, 771, 772, 773, 774 and more)",
		"zz":           "no run zz in ",
		"../x":         `"../x" is not a run id`,
	} {
		_, err := s.ResolveID(ctx, word)
		if errcode.Code(err) != runtime.CodeRun || !strings.Contains(fmt.Sprint(err), want) {
			t.Errorf("ResolveID(%q): %v (%s); want RUN_RECORD saying %q", word, err, errcode.Code(err), want)
		}
	}
	if _, err := s.ResolveID(ctx, "zz"); !errors.Is(err, runstore.ErrNotFound) {
		t.Errorf("an id nobody has: %v, want ErrNotFound", err)
	}
	// A run saved a moment ago is found by its beginning at once.
	rec := runstoretest.NewRecord("fresh0123456789a", runtime.Paused)
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ResolveID(ctx, "fresh"); err != nil || got != rec.RunID {
		t.Errorf("ResolveID(fresh) = %q, %v", got, err)
	}
}
