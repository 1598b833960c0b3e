package runstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
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

// A repository that ships .halo, .halo/runs or .halo/runs/log as a link to another folder gets the store
// refused, and nothing written through the link.
func TestFolderRefusesSymlinks(t *testing.T) {
	for _, which := range []string{".halo", ".halo/runs", ".halo/runs/log"} {
		t.Run(which, func(t *testing.T) {
			project, victim := t.TempDir(), t.TempDir()
			if which != ".halo" {
				os.MkdirAll(filepath.Join(project, filepath.Dir(which)), 0o755)
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

	// Logs removed by hand: their runs are not found (a run with a file still is), and are
	// no longer listed.
	if err := os.RemoveAll(filepath.Join(dir, runtime.LogFolder)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"logged1", "logged2"} {
		if rec, err := f.Load(id); !runstore.IsNotFound(err) {
			t.Errorf("load %s with its log removed: %+v %v, want not found", id, rec, err)
		}
	}
	if rec, err := f.Load("both"); err != nil || rec.Status != runtime.Failed {
		t.Errorf("load both with its log removed: %+v %v", rec, err)
	}
	page, err = f.List(context.Background(), runstore.Query{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range page.Runs {
		if s.RunID == "logged1" || s.RunID == "logged2" {
			t.Errorf("%s still listed", s.RunID)
		}
	}
}

// The folder store logs the runs that do not pause (runtime.Store.Log): no file each, and
// every run loads, while the store is open (from where its commits logged them) and after it
// reopens. A run that pauses is a file from then on, through its claim and end.
func TestFolderLogsRuns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	f, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 20 {
		id := "run" + string(rune('a'+i))
		if err := f.Start(ctx, runstoretest.NewRecord(id, runtime.Running)); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := f.Save(runstoretest.NewRecord(id, runtime.Completed)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.Start(ctx, runstoretest.NewRecord("waits", runtime.Running)); err != nil {
		t.Fatal(err)
	}
	paused := runstoretest.NewRecord("waits", runtime.Paused)
	if err := f.Save(paused); err != nil {
		t.Fatal(err)
	}
	check := func(f runstore.Store, when string) {
		t.Helper()
		for i := range 20 {
			id := "run" + string(rune('a'+i))
			want := runtime.Running
			if i%2 == 0 {
				want = runtime.Completed
			}
			if rec, err := f.Load(id); err != nil || rec.Status != want || rec.RunID != id {
				t.Errorf("%s: %s: %+v %v, want %s", when, id, rec, err, want)
			}
		}
	}
	check(f, "before the commit")
	time.Sleep(60 * time.Millisecond) // a few commits
	check(f, "committed")
	rec, err := f.Load("waits")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Claim(ctx, rec, runstore.Signal{Channel: "yield"}); err != nil {
		t.Fatal(err)
	}
	if err := f.Save(runstoretest.NewRecord("waits", runtime.Completed)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".lock log waits.json" {
		t.Errorf("the folder holds %v, want the log folder and waits.json (and the lock)", names)
	}
	g, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	check(g, "reopened")
	if rec, err := g.Load("waits"); err != nil || rec.Status != runtime.Completed {
		t.Errorf("waits: %+v %v, want completed (its file, not its logged start)", rec, err)
	}
	lost, err := g.Expire(ctx)
	if err != nil || len(lost) != 10 {
		t.Errorf("expired %v %v, want the 10 runs left running", lost, err)
	}
	if rec, err := g.Load("runb"); err != nil || rec.Status != runtime.Failed {
		t.Errorf("runb after Expire: %+v %v, want failed", rec, err)
	}
}
