package runstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
)

// storedRecord returns the bytes the database holds as run id's record.
func storedRecord(t *testing.T, path, id string) []byte {
	t.Helper()
	db := sqlDB(t, path)
	defer db.Close()
	var raw []byte
	if err := db.QueryRow(`SELECT record FROM halo_runs WHERE id = ?`, id).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	return raw
}

// A record is kept packed, smaller than its JSON, and read back as it was saved.
func TestSQLiteKeepsRecordsPacked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	s := openGrouped(t, dir)
	rec := runstoretest.NewRecord(s.NewRunID(), runtime.Completed)
	rec.Output = strings.Repeat("a long answer ", 500)
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	raw, err := runstore.MarshalRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	stored := storedRecord(t, s.Path(), rec.RunID)
	if stored[0] == '{' || len(stored)*4 > len(raw) {
		t.Errorf("the record is stored as %d bytes beginning %q, its JSON is %d", len(stored), stored[:min(len(stored), 8)], len(raw))
	}
	s.Close()
	s = openGrouped(t, dir)
	got, err := s.Load(rec.RunID)
	if err != nil {
		t.Fatal(err)
	}
	gotRaw, _ := runstore.MarshalRecord(got)
	if string(gotRaw) != string(raw) {
		t.Errorf("read back:\n%s\nsaved:\n%s", gotRaw, raw)
	}
}

// A store of schema step 12 holds its records as JSON: a halo that packs them reads those
// as they are, and packs the ones it saves.
func TestSQLiteReadsJSONRecordsOfStep12(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	db := schemaDB(t, dir, 12)
	old := wordRecord("old1", "bilberry")
	oldRows(t, db, old)
	db.Close()
	s := openGrouped(t, dir)
	got, err := s.Load("old1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Inputs, old.Inputs) || got.Status != runtime.Completed {
		t.Errorf("the old run: %+v", got)
	}
	rec := wordRecord(s.NewRunID(), "cloudberry")
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	if got := found(t, s, "berry"); !strings.Contains(got, "old1") || !strings.Contains(got, rec.RunID) {
		t.Errorf("berry: %q", got)
	}
	if stored := storedRecord(t, s.Path(), "old1"); stored[0] != '{' {
		t.Errorf("the old record was rewritten: %q", stored[:8])
	}
	if stored := storedRecord(t, s.Path(), rec.RunID); stored[0] == '{' {
		t.Errorf("the new record is JSON")
	}
	db = sqlDB(t, s.Path())
	defer db.Close()
	var v int
	if err := db.QueryRow(`SELECT max(version) FROM halo_schema`).Scan(&v); err != nil || v != runstore.SchemaVersion || v < 13 {
		t.Errorf("schema version %d (%v), want %d", v, err, runstore.SchemaVersion)
	}
}

// A packed record damaged on disk (or planted) makes Load of that run fail with RUN_RECORD
// and says the record is unreadable; the store's other runs and its list are unharmed.
func TestSQLiteDamagedPackedRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	s := openGrouped(t, dir)
	bad := runstoretest.NewRecord(s.NewRunID(), runtime.Completed)
	good := runstoretest.NewRecord(s.NewRunID(), runtime.Completed)
	for _, rec := range []*runtime.Record{bad, good} {
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := sqlDB(t, filepath.Join(dir, runstore.DBName))
	// A packing of a newer halo, then one that claims to unpack to 4 GiB.
	for _, planted := range [][]byte{{0x02, 0x10, 0x00}, {0x01, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00}} {
		if _, err := db.Exec(`UPDATE halo_runs SET record = ? WHERE id = ?`, planted, bad.RunID); err != nil {
			t.Fatal(err)
		}
		s = openGrouped(t, dir)
		_, err := s.Load(bad.RunID)
		var se *runstore.Error
		if !errors.As(err, &se) || se.Code != runtime.CodeRun || !strings.Contains(err.Error(), "unreadable record") {
			t.Errorf("%x: %v", planted, err)
		}
		if _, err := s.Load(good.RunID); err != nil {
			t.Errorf("the other run: %v", err)
		}
		if p, err := s.List(context.Background(), runstore.Query{}); err != nil || len(p.Runs) != 2 {
			t.Errorf("the list: %+v %v", p, err)
		}
		s.Close()
	}
	db.Close()
}
