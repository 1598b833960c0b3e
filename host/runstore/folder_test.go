package runstore_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/halo-lang/halo/errcode"
	"github.com/halo-lang/halo/host/runstore"
	"github.com/halo-lang/halo/host/runstore/runstoretest"
	"github.com/halo-lang/halo/host/runtime"
)

func openFolder(t *testing.T) runstore.Store {
	f, err := runstore.OpenFolder(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestFolderContract(t *testing.T) {
	runstoretest.Run(t, runstoretest.Config{Open: openFolder})
}

// One folder serves one process: a second open is refused until the first closes.
func TestFolderIsLocked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	a, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runstore.OpenFolder(dir, runstore.FolderOptions{}); errcode.Code(err) != runstore.CodeBusy {
		t.Fatalf("a second open: %v, want %s", err, runstore.CodeBusy)
	}
	a.Close()
	b, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	b.Close()
}

// A run the folder says is running when it is opened was running when the process before
// stopped: Expire fails it HOST_LOST, with its events kept; the index and lists agree.
func TestFolderExpiresRunsOfAStoppedProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	a, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
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
	a.Close() // the process stops without saving
	b, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lost, err := b.Expire(ctx)
	if err != nil || len(lost) != 1 || lost[0] != "r1" {
		t.Fatalf("expired %v %v", lost, err)
	}
	got, err := b.Load("r1")
	if err != nil || got.Status != runtime.Failed || got.Error == nil || got.Error.Code != runstore.CodeHostLost || len(got.Events) != 2 || got.Events[0].Target != "T.m" {
		t.Fatalf("lost run %+v %v", got, err)
	}
	p, _ := b.List(ctx, runstore.Query{Status: runtime.Failed})
	if len(p.Runs) != 1 {
		t.Errorf("failed runs listed: %+v", p)
	}
}

// A repository that ships .halo or .halo/runs as a link to another folder gets the store
// refused, and nothing written through the link.
func TestFolderRefusesSymlinks(t *testing.T) {
	for _, which := range []string{".halo", ".halo/runs"} {
		t.Run(which, func(t *testing.T) {
			project, victim := t.TempDir(), t.TempDir()
			if which == ".halo/runs" {
				os.Mkdir(filepath.Join(project, ".halo"), 0o755)
			}
			if err := os.Symlink(victim, filepath.Join(project, which)); err != nil {
				t.Fatal(err)
			}
			_, err := runstore.OpenFolder(filepath.Join(project, ".halo", "runs"), runstore.FolderOptions{})
			if errcode.Code(err) != "STATE_DIR_UNSAFE" {
				t.Fatalf("%v, want STATE_DIR_UNSAFE", err)
			}
			if entries, _ := os.ReadDir(victim); len(entries) != 0 {
				t.Errorf("the link's target got %d entries", len(entries))
			}
		})
	}
}

// The approval key is a 0600 file; one readable by others, or a link, is refused.
func TestFolderSecretFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	f, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gen := func() ([]byte, error) { return make([]byte, 32), nil }
	if _, err := f.Secret(context.Background(), gen); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(filepath.Dir(dir), "serve.key")
	fi, err := os.Stat(key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", fi, err)
	}
	os.Chmod(key, 0o644)
	if _, err := f.Secret(context.Background(), gen); err == nil {
		t.Errorf("a key readable by others was used")
	}
	os.Remove(key)
	os.Symlink("/etc/hostname", key)
	if _, err := f.Secret(context.Background(), gen); err == nil {
		t.Errorf("a key file that is a link was followed")
	}
}

// The runs halo mcp logged in the folder (runtime.Store.Log) are listed and load, beside the
// <runId>.json records; a run with both is as its file says.
func TestFolderListsLoggedRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	mcp := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	for _, rec := range []*runtime.Record{
		runstoretest.NewRecord("logged1", runtime.Completed),
		runstoretest.NewRecord("logged2", runtime.Failed),
		runstoretest.NewRecord("both", runtime.Completed),
		runstoretest.NewRecord("paused", runtime.Paused),
	} {
		if err := mcp.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := mcp.Close(); err != nil {
		t.Fatal(err)
	}
	later := runstoretest.NewRecord("both", runtime.Failed)
	if err := (&runtime.Store{Dir: dir}).Save(later); err != nil {
		t.Fatal(err)
	}

	f, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page, err := f.List(context.Background(), runstore.Query{})
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]runtime.Status{}
	for _, s := range page.Runs {
		listed[s.RunID] = s.Status
	}
	want := map[string]runtime.Status{"logged1": runtime.Completed, "logged2": runtime.Failed, "both": runtime.Failed, "paused": runtime.Paused}
	for id, st := range want {
		if listed[id] != st {
			t.Errorf("%s listed as %q, want %s", id, listed[id], st)
		}
		rec, err := f.Load(id)
		if err != nil || rec.Status != st || rec.RunID != id {
			t.Errorf("load %s: %+v %v, want %s", id, rec, err, st)
		}
	}
	if len(listed) != len(want) {
		t.Errorf("listed %v", listed)
	}
}
