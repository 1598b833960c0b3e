package runtime_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/usertest"
)

// syncWatch records the files a store synced (by inode), and can make syncing fail.
type syncWatch struct {
	mu     sync.Mutex
	synced map[uint64]bool
	fail   error
	// sync is what the store syncs a file with.
	sync func(*os.File) error
}

func watchSyncs(s *runtime.Store) *syncWatch {
	w := &syncWatch{synced: map[uint64]bool{}}
	w.sync = func(f *os.File) error {
		w.mu.Lock()
		fail := w.fail
		w.mu.Unlock()
		if fail != nil {
			return fail
		}
		if err := f.Sync(); err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		w.mu.Lock()
		w.synced[fi.Sys().(*syscall.Stat_t).Ino] = true
		w.mu.Unlock()
		return nil
	}
	runtime.SetSyncFile(s, w.sync)
	return w
}

func (w *syncWatch) was(t *testing.T, path string) bool {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.synced[fi.Sys().(*syscall.Stat_t).Ino]
}

func record(id string, st runtime.Status, n int) *runtime.Record {
	rec := &runtime.Record{RunID: id, Pipeline: "P", Status: st, Inputs: map[string]any{"n": n},
		Updated: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(n) * time.Millisecond)}
	if st == runtime.Paused {
		rec.Meta.Paused = &runtime.PauseInfo{WaitingFor: "yield"}
		rec.Resume = &runtime.ResumePoint{Stage: 1}
	}
	return rec
}

// fileRecord reads the record in path, failing the test when it is not one whole record.
func fileRecord(t *testing.T, path string) *runtime.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec runtime.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatalf("%s is not a whole record: %v", path, err)
	}
	return &rec
}

// tempFiles lists the temporary files of records being written.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// With GroupCommit, a completed record is readable as soon as Save returns, a paused one is
// in <id>.json (synced) when Save returns, and after Sync every record is in <id>.json, each
// the last one saved and each a file that was synced before it got that name: many writers
// at once, each run saved several times over.
func TestStoreGroupCommit(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true}
	w := watchSyncs(s)

	if err := s.Save(record("done1", runtime.Completed, 1)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load("done1"); err != nil || got.Status != runtime.Completed {
		t.Fatalf("a completed record right after Save: %+v %v", got, err)
	}
	if err := s.Save(record("wait1", runtime.Paused, 2)); err != nil {
		t.Fatal(err)
	}
	if got := fileRecord(t, filepath.Join(dir, "wait1.json")); got.Status != runtime.Paused || !w.was(t, filepath.Join(dir, "wait1.json")) {
		t.Fatalf("a paused record is not synced in place when Save returns: %+v", got)
	}

	const writers, saves, runs = 8, 40, 5
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range saves {
				id := fmt.Sprintf("g%d-r%d", g, i%runs)
				st := runtime.Completed
				if i%7 == 3 {
					st = runtime.Paused
				}
				if err := s.Save(record(id, st, i)); err != nil {
					t.Error(err)
					return
				}
				if got, err := s.Load(id); err != nil || got.Inputs["n"] != float64(i) {
					t.Errorf("%s right after save %d: %+v %v", id, i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if p := tempFiles(t, dir); len(p) != 0 {
		t.Errorf("temporary files left after Sync: %v", p)
	}
	for g := range writers {
		for r := range runs {
			id := fmt.Sprintf("g%d-r%d", g, r)
			path := filepath.Join(dir, id+".json")
			got := fileRecord(t, path)
			if want := float64(saves - runs + r); got.Inputs["n"] != want {
				t.Errorf("%s holds save %v, want the last, %v", id, got.Inputs["n"], want)
			}
			if !w.was(t, path) {
				t.Errorf("%s was renamed into place without being synced", path)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left in the folder after Close", e.Name())
		}
	}
	if err := s.Save(record("late", runtime.Completed, 1)); err == nil {
		t.Errorf("a save after Close was taken")
	}
}

// Many records saved at once are committed together (on Linux with one syncfs): after Sync
// each run's <id>.json is its last record, and no pending record or temporary file is left.
func TestStoreGroupCommitManyAtOnce(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true}
	const writers, saves = 32, 20
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range saves {
				if err := s.Save(record(fmt.Sprintf("w%d-%d", g, i%4), runtime.Completed, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != writers*4 {
		t.Errorf("the folder holds %d files, want %d records", len(entries), writers*4)
	}
	for g := range writers {
		for r := range 4 {
			if got := fileRecord(t, filepath.Join(dir, fmt.Sprintf("w%d-%d.json", g, r))); got.Inputs["n"] != float64(saves-4+r) {
				t.Errorf("w%d-%d.json holds save %v", g, r, got.Inputs["n"])
			}
		}
	}
}

// When syncing fails, <id>.json keeps the record before (it only ever gets a synced file):
// readers see the new record, Sync reports the failure, and a paused record's Save fails
// with RUN_RECORD. Once syncing works again, the next commit puts things right.
func TestStoreSyncFailure(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true}
	defer s.Close()
	w := watchSyncs(s)
	path := filepath.Join(dir, "r1.json")
	if err := s.Save(record("r1", runtime.Completed, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}

	w.mu.Lock()
	w.fail = errors.New("input/output error")
	w.mu.Unlock()
	if err := s.Save(record("r1", runtime.Completed, 2)); err != nil {
		t.Fatalf("a completed record is saved before it is synced: %v", err)
	}
	if got, err := s.Load("r1"); err != nil || got.Inputs["n"] != float64(2) {
		t.Errorf("load: %+v %v, want the new record", got, err)
	}
	if err := s.Sync(); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("Sync: %v, want the sync failure", err)
	}
	if got := fileRecord(t, path); got.Inputs["n"] != float64(1) {
		t.Errorf("r1.json holds save %v, which was never synced", got.Inputs["n"])
	}
	err := s.Save(record("p1", runtime.Paused, 3))
	if errcode.Code(err) != runtime.CodeRun || !strings.Contains(err.Error(), "could not be written to disk") {
		t.Errorf("a paused record that cannot be synced: %v", err)
	}

	if err := s.Sync(); err == nil {
		t.Errorf("Sync after the failed paused save: no error")
	}

	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	if err := s.Save(record("r1", runtime.Completed, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := fileRecord(t, path); got.Inputs["n"] != float64(4) {
		t.Errorf("r1.json holds save %v after a good commit, want 4", got.Inputs["n"])
	}
}

// A Store without GroupCommit (halo run's, and any made without Close) has every record in
// <id>.json, synced, when Save returns.
func TestStoreWithoutGroupCommitSyncsEverySave(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir}
	w := watchSyncs(s)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			id := fmt.Sprintf("r%d", i)
			if err := s.Save(record(id, runtime.Completed, i)); err != nil {
				t.Error(err)
				return
			}
			path := filepath.Join(dir, id+".json")
			if got := fileRecord(t, path); got.Inputs["n"] != float64(i) || !w.was(t, path) {
				t.Errorf("%s is not the synced record when Save returns", path)
			}
		})
	}
	wg.Wait()
	if p := tempFiles(t, dir); len(p) != 0 {
		t.Errorf("temporary files left: %v", p)
	}
}

// A record saved and not yet on disk is the newest record of its run for the Store's
// readers, Load, Newest and Latest, and for no other Store until a commit writes it.
func TestStoreReadsUnsavedRecords(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true}
	defer s.Close()
	blocked := make(chan struct{})
	runtime.SetSyncFile(s, func(f *os.File) error { <-blocked; return f.Sync() })
	b, _ := json.Marshal(record("a", runtime.Paused, 1))
	if err := os.WriteFile(filepath.Join(dir, "a.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(record("a", runtime.Completed, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(record("c", runtime.Running, 3)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load("a"); err != nil || got.Status != runtime.Completed {
		t.Errorf("a: %+v %v, want the record saved", got, err)
	}
	if got, err := s.Load("c"); err != nil || got.Status != runtime.Running {
		t.Errorf("c: %+v %v, want the record saved", got, err)
	}
	if id, err := s.Newest(); err != nil || id != "c" {
		t.Errorf("newest: %q %v, want c", id, err)
	}
	if id, err := s.Latest(); err == nil {
		t.Errorf("latest paused: %q, want none (a's newest record completed it)", id)
	}
	other := &runtime.Store{Dir: dir}
	if got, err := other.Load("a"); err != nil || got.Status != runtime.Paused {
		t.Errorf("another store: %+v %v, want a.json as it was until the commit", got, err)
	}
	close(blocked)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, err := other.Load("a"); err != nil || got.Status != runtime.Completed {
		t.Errorf("another store after Sync: %+v %v, want the record saved", got, err)
	}
}

// RemoveLeftovers removes the temporary files a stopped process left (a minute old or more), and
// leaves the records and the recent temporary files of a process still writing.
func TestStoreRemoveLeftovers(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir}
	old := time.Now().Add(-2 * time.Minute)
	write := func(name string, b []byte, aged bool) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if aged {
			os.Chtimes(p, old, old)
		}
	}
	enc := func(rec *runtime.Record) []byte { b, _ := json.Marshal(rec); return b }
	write("a.json", enc(record("a", runtime.Running, 1)), true)
	write(".d.0a1b2c.tmp", []byte(`{"runId":"d"`), true)
	write(".e.0a1b2c.tmp", []byte(`{"runId":"e"`), false)
	if err := s.RemoveLeftovers(); err != nil {
		t.Fatal(err)
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".e.0a1b2c.tmp a.json" {
		t.Errorf("the folder holds %s", got)
	}
}

// namings are the ways a commit can name a record's file (runtime.SetNaming).
var namings = []string{"fd", "proc", "none", "temp"}

// A record's file gets its name only once it is on disk, whichever way the system lets a
// commit name it; a new run's file on Linux never has another name (it is made with none),
// and a run saved again replaces its file whole. As root, and again as halo-test, whom Linux
// does not let link a descriptor.
func TestStoreNamesRecordsOnceOnDisk(t *testing.T) {
	for _, how := range namings {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			s := &runtime.Store{Dir: dir, GroupCommit: true}
			defer s.Close()
			runtime.SetNaming(s, how)
			w := watchSyncs(s)
			var namesWhileSyncing []string
			sync := w.sync
			runtime.SetSyncFile(s, func(f *os.File) error {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					namesWhileSyncing = append(namesWhileSyncing, e.Name())
				}
				return sync(f)
			})
			for i, st := range []runtime.Status{runtime.Paused, runtime.Paused, runtime.Completed} {
				namesWhileSyncing = nil
				if err := s.Save(record("r1", st, i)); err != nil {
					t.Fatal(err)
				}
				if err := s.Sync(); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(dir, "r1.json")
				if got := fileRecord(t, path); got.Inputs["n"] != float64(i) || got.Status != st {
					t.Errorf("save %d: r1.json holds %v %s", i, got.Inputs["n"], got.Status)
				}
				if !w.was(t, path) {
					t.Errorf("save %d: r1.json was named before it was synced", i)
				}
				if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("save %d: r1.json: %v %v, want mode 0600", i, fi.Mode(), err)
				}
				if names := tempFiles(t, dir); len(names) != 0 {
					t.Errorf("save %d: temporary files left: %v", i, names)
				}
				if i == 0 && goruntime.GOOS == "linux" && (how == "fd" || how == "proc") && len(namesWhileSyncing) != 0 {
					t.Errorf("a new run's file had the names %v before it was on disk, want none", namesWhileSyncing)
				}
			}
		})
	}
	usertest.Rerun(t)
}

// A .halo/runs/<id>.json planted as a symbolic link to a file elsewhere is replaced by the
// run's record, never written through, whichever way the commit names files; as root and
// as halo-test.
func TestStoreReplacesPlantedLinks(t *testing.T) {
	for _, how := range namings {
		t.Run(how, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			victim := filepath.Join(elsewhere, "victim")
			if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"p1", "c1"} {
				if err := os.Symlink(victim, filepath.Join(dir, id+".json")); err != nil {
					t.Fatal(err)
				}
			}
			s := &runtime.Store{Dir: dir, GroupCommit: true}
			runtime.SetNaming(s, how)
			if err := s.Save(record("p1", runtime.Paused, 1)); err != nil {
				t.Fatal(err)
			}
			if err := s.Save(record("c1", runtime.Completed, 2)); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "precious" {
				t.Errorf("the link's target now holds %q", b)
			}
			for _, id := range []string{"p1", "c1"} {
				path := filepath.Join(dir, id+".json")
				if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
					t.Errorf("%s: %v %v, want a file", path, fi.Mode(), err)
				}
				if got := fileRecord(t, path); got.RunID != id {
					t.Errorf("%s holds run %s", path, got.RunID)
				}
			}
		})
	}
	usertest.Rerun(t)
}
