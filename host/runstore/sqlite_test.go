package runstore_test

import (
	"path/filepath"
	"testing"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
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
