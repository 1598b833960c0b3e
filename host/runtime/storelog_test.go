package runtime_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/usertest"
	"halolang.dev/halo/pkgmgr/statedir"
)

// logs returns the run logs in dir, oldest first, each as its lines.
func logs(t *testing.T, dir string) [][]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, runtime.LogFolder, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s does not end with a whole line", name)
		}
		out = append(out, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
	}
	return out
}

// With Log, a run that finishes without pausing is a line of the store's run log, synced,
// not a file; a paused run is <id>.json, and so is every later record of it; another store
// (halo replay, halo serve) loads both, and Newest and Latest see both.
func TestStoreLogsFinishedRuns(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	w := watchSyncs(s)
	for _, rec := range []*runtime.Record{
		record("done1", runtime.Completed, 1),
		record("fail1", runtime.Failed, 2),
		record("wait1", runtime.Paused, 3),
		record("wait2", runtime.Paused, 4),
	} {
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"done1", "fail1"} {
		if _, err := os.Stat(filepath.Join(dir, id+".json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s.json: %v, want no file (the run is in the log)", id, err)
		}
	}
	if got := fileRecord(t, filepath.Join(dir, "wait1.json")); got.Status != runtime.Paused {
		t.Errorf("wait1.json says %s", got.Status)
	}
	lines := logs(t, dir)
	if len(lines) != 1 || len(lines[0]) != 2 {
		t.Fatalf("logs: %q, want one log of two lines", lines)
	}
	names, _ := filepath.Glob(filepath.Join(dir, runtime.LogFolder, "*.jsonl"))
	if !w.was(t, names[0]) {
		t.Errorf("the log was not synced")
	}
	if fi, err := os.Stat(names[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the log's mode: %v %v, want 0600 (records hold what models said)", fi.Mode(), err)
	}
	for _, line := range lines[0] {
		var rec runtime.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("a log line is not a record: %v", err)
		}
		want, _ := runtime.MarshalRecord(&rec)
		if line != string(want) {
			t.Errorf("a log line is not the record as <id>.json would hold it:\n%s\n%s", line, want)
		}
	}

	// A paused run continued by this store (loaded first, as Resume does) and finished
	// replaces its file, rather than leave a paused file that Load would read first.
	if _, err := s.Load("wait1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(record("wait1", runtime.Completed, 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fileRecord(t, filepath.Join(dir, "wait1.json")); got.Status != runtime.Completed {
		t.Errorf("wait1.json says %s after the run completed", got.Status)
	}
	if lines := logs(t, dir); len(lines) != 1 || len(lines[0]) != 2 {
		t.Errorf("logs after: %q, want the two runs that never paused", lines)
	}

	other := &runtime.Store{Dir: dir}
	for id, want := range map[string]runtime.Status{"done1": runtime.Completed, "fail1": runtime.Failed, "wait1": runtime.Completed, "wait2": runtime.Paused} {
		if got, err := other.Load(id); err != nil || got.Status != want || got.RunID != id {
			t.Errorf("another store loads %s: %+v %v, want %s", id, got, err, want)
		}
	}
	if _, err := other.Load("nobody"); errcode.Code(err) != runtime.CodeRun {
		t.Errorf("an unknown run: %v, want %s", err, runtime.CodeRun)
	}
	if id, err := other.Newest(); err != nil || id != "wait1" {
		t.Errorf("newest: %q %v, want wait1", id, err)
	}
	if id, err := other.Latest(); err != nil || id != "wait2" {
		t.Errorf("latest paused: %q %v, want wait2", id, err)
	}
	seen := map[string]runtime.LogPos{}
	if err := other.Logged(func(rec *runtime.Record, at runtime.LogPos) { seen[rec.RunID] = at }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen["done1"].Log == "" || seen["fail1"].Log == "" {
		t.Fatalf("Logged: %v, want done1 and fail1", seen)
	}
	if got, err := other.LoadLogged("fail1", seen["fail1"]); err != nil || got.Status != runtime.Failed {
		t.Errorf("LoadLogged: %+v %v", got, err)
	}
	if _, err := other.LoadLogged("done1", seen["fail1"]); errcode.Code(err) != runtime.CodeRun {
		t.Errorf("LoadLogged of another run's line: %v, want %s", err, runtime.CodeRun)
	}
	for _, at := range []runtime.LogPos{{Log: "../x.jsonl", Size: 10}, {Log: seen["done1"].Log, Offset: -1, Size: 10}, {Log: "x.json", Size: 1}} {
		if _, err := other.LoadLogged("done1", at); errcode.Code(err) != runtime.CodeRun {
			t.Errorf("LoadLogged(%+v): %v, want %s", at, err, runtime.CodeRun)
		}
	}
}

// The last line of a log cut short (a process killed mid-write, a power cut) is passed over,
// as is anything else that is not a record; the records before it load, and a later line of
// a run logged twice wins.
func TestStoreLogPassesOverTornLines(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, runtime.LogFolder), 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(rec *runtime.Record) string {
		b, err := runtime.MarshalRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	torn := line(record("torn", runtime.Completed, 9))
	content := line(record("a", runtime.Completed, 1)) + "not json\n" + `{"runId":"../x","status":"completed"}` + "\n" +
		line(record("a", runtime.Failed, 2)) + torn[:len(torn)/2]
	if err := os.WriteFile(filepath.Join(dir, runtime.LogFolder, "20260101T000000.000000000Z-00000000.jsonl"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not logs: another extension, a hidden file.
	for _, name := range []string{"b.json", ".c.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, runtime.LogFolder, name), []byte(line(record("b", runtime.Completed, 1))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := &runtime.Store{Dir: dir}
	if got, err := s.Load("a"); err != nil || got.Status != runtime.Failed {
		t.Errorf("a: %+v %v, want its later line (failed)", got, err)
	}
	for _, id := range []string{"torn", "b"} {
		if got, err := s.Load(id); err == nil {
			t.Errorf("%s loads: %+v", id, got)
		}
	}
	var ids []string
	if err := s.Logged(func(rec *runtime.Record, _ runtime.LogPos) { ids = append(ids, rec.RunID+":"+string(rec.Status)) }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != "a:completed a:failed" {
		t.Errorf("Logged: %v", ids)
	}
}

// A log that cannot be written or synced fails the commit (Sync says so) and is not written
// again: the next commit starts a new log, so whatever part of a line the failure left
// stays that log's last line, and the records that failed are in the new one. A log past
// its size limit is followed by a new one too.
func TestStoreLogFailureStartsANewLog(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	defer s.Close()
	w := watchSyncs(s)
	if err := s.Save(record("r1", runtime.Completed, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.fail = errors.New("input/output error")
	w.mu.Unlock()
	if err := s.Save(record("r2", runtime.Completed, 2)); err != nil {
		t.Fatalf("a completed record is saved before it is synced: %v", err)
	}
	if err := s.Sync(); err == nil || !strings.Contains(err.Error(), "input/output error") {
		t.Errorf("Sync: %v, want the sync failure", err)
	}
	if got, err := s.Load("r2"); err != nil || got.Status != runtime.Completed {
		t.Errorf("r2 while its commit failed: %+v %v, want it readable", got, err)
	}
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	if err := s.Save(record("r3", runtime.Completed, 3)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	lines := logs(t, dir)
	if len(lines) != 2 {
		t.Fatalf("%d logs after a failed commit, want 2: %q", len(lines), lines)
	}
	if joined := strings.Join(lines[1], "\n"); !strings.Contains(joined, `"runId":"r2"`) || !strings.Contains(joined, `"runId":"r3"`) {
		t.Errorf("the new log lacks r2 (tried again) or r3: %q", lines[1])
	}

	runtime.SetLogLimit(s, 1)
	if err := s.Save(record("r4", runtime.Completed, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if lines := logs(t, dir); len(lines) != 3 || len(lines[2]) != 1 {
		t.Errorf("after the limit: %q, want r4 alone in a third log", lines)
	}
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		if _, err := (&runtime.Store{Dir: dir}).Load(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// A log folder planted as a symbolic link (a cloned repository's .halo/runs/log) is never
// written or read through: the commit fails with STATE_DIR_UNSAFE, and a run the link's
// target holds does not load.
func TestStoreLogRefusesLinkedFolder(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	planted, _ := runtime.MarshalRecord(record("planted", runtime.Completed, 1))
	if err := os.WriteFile(filepath.Join(elsewhere, "20260101T000000.000000000Z-00000000.jsonl"), append(planted, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, runtime.LogFolder)); err != nil {
		t.Fatal(err)
	}
	s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	if err := s.Save(record("r1", runtime.Completed, 1)); err != nil {
		t.Fatal(err)
	}
	err := s.Close()
	var unsafe *statedir.Error
	if !errors.As(err, &unsafe) || errcode.Code(err) != statedir.CodeUnsafe {
		t.Errorf("commit through a linked log folder: %v, want %s", err, statedir.CodeUnsafe)
	}
	entries, _ := os.ReadDir(elsewhere)
	if len(entries) != 1 {
		t.Errorf("the link's target now holds %d files", len(entries))
	}
	other := &runtime.Store{Dir: dir}
	if got, err := other.Load("planted"); err == nil {
		t.Errorf("a record read through the link: %+v", got)
	}
	if err := other.Logged(func(*runtime.Record, runtime.LogPos) {}); errcode.Code(err) != statedir.CodeUnsafe {
		t.Errorf("Logged through the link: %v, want %s", err, statedir.CodeUnsafe)
	}
	if _, err := other.LoadLogged("planted", runtime.LogPos{Log: "20260101T000000.000000000Z-00000000.jsonl", Size: len(planted)}); err == nil {
		t.Errorf("LoadLogged read through the link")
	}
	usertest.Rerun(t)
}

// Many writers at once: every record that finished is in a log exactly as saved last, each
// log line is whole, and no run that never paused has a file.
func TestStoreLogManyWriters(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	const writers, each = 8, 50
	done := make(chan error, writers)
	for g := range writers {
		go func() {
			for i := range each {
				id := "w" + string(rune('a'+g)) + strings.Repeat("x", i%3) + string(rune('0'+i%10)) + string(rune('a'+i/10))
				if err := s.Save(record(id, runtime.Completed, i)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries in the folder, want the log folder alone", len(entries))
	}
	n := 0
	for _, lines := range logs(t, dir) {
		for _, line := range lines {
			if !json.Valid([]byte(line)) || !bytes.HasPrefix([]byte(line), []byte(`{"runId":"w`)) {
				t.Errorf("not a whole record: %.80s", line)
			}
			n++
		}
	}
	if n != writers*each {
		t.Errorf("%d lines, want %d", n, writers*each)
	}
}

// With Log, a running record is logged too (halo serve saves runs as they start), and OnLog
// says where each record went once it is on disk; once a run is saved paused its records
// are files, and OnLog says nothing more of it.
func TestStoreOnLog(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	at := map[string]runtime.LogPos{}
	pausedSaved := false
	var lateNote error
	s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	s.OnLog = func(id string, pos runtime.LogPos) {
		mu.Lock()
		defer mu.Unlock()
		if id == "p" && pausedSaved {
			lateNote = errors.New("OnLog told of run p after it was saved paused")
		}
		at[id] = pos
	}
	defer s.Close()
	where := func(id string) runtime.LogPos {
		mu.Lock()
		defer mu.Unlock()
		return at[id]
	}
	for _, st := range []runtime.Status{runtime.Running, runtime.Completed} {
		if err := s.Save(record("r", st, 1)); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		pos := where("r")
		if got, err := (&runtime.Store{Dir: dir}).LoadLogged("r", pos); err != nil || got.Status != st {
			t.Errorf("r at %+v: %+v %v, want %s", pos, got, err, st)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("r.json: %v, want none", err)
	}

	if err := s.Save(record("p", runtime.Running, 2)); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(record("p", runtime.Paused, 3)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	pausedSaved = true
	mu.Unlock()
	if err := s.Save(record("p", runtime.Completed, 4)); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if lateNote != nil {
		t.Error(lateNote)
	}
	mu.Unlock()
	if got := fileRecord(t, filepath.Join(dir, "p.json")); got.Status != runtime.Completed {
		t.Errorf("p.json says %s, want completed", got.Status)
	}
	if got, err := (&runtime.Store{Dir: dir}).Load("p"); err != nil || got.Status != runtime.Completed {
		t.Errorf("p: %+v %v, want its file's record (completed), not a logged one", got, err)
	}
}

// Logs are read a piece at a time: records longer than the reader's buffer come back whole,
// each where Logged says it is, and a line over the longest a reader takes (a hostile
// repository's log) is passed over without being held whole.
func TestStoreLogLongLines(t *testing.T) {
	dir := t.TempDir()
	s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
	sizes := map[string]int{"a": 10, "b": 200 << 10, "c": 70 << 10, "d": 5}
	for _, id := range []string{"a", "b", "c", "d"} {
		rec := record(id, runtime.Completed, 1)
		rec.Inputs["text"] = strings.Repeat("y", sizes[id])
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil { // one line each, in this order
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	reader := &runtime.Store{Dir: dir}
	seen := map[string]runtime.LogPos{}
	if err := reader.Logged(func(rec *runtime.Record, at runtime.LogPos) {
		if len(rec.Inputs["text"].(string)) != sizes[rec.RunID] {
			t.Errorf("%s came back with %d bytes of text", rec.RunID, len(rec.Inputs["text"].(string)))
		}
		seen[rec.RunID] = at
	}); err != nil {
		t.Fatal(err)
	}
	for id := range sizes {
		rec, err := reader.LoadLogged(id, seen[id])
		if err != nil || rec.RunID != id {
			t.Errorf("LoadLogged(%s, %+v): %v", id, seen[id], err)
		}
	}

	capped := &runtime.Store{Dir: dir}
	runtime.SetLogLineCap(capped, 100<<10)
	var ids []string
	if err := capped.Logged(func(rec *runtime.Record, _ runtime.LogPos) { ids = append(ids, rec.RunID) }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != "a c d" {
		t.Errorf("with lines over 100 KiB passed over: %v, want a c d", ids)
	}
	if _, err := capped.Load("b"); errcode.Code(err) != runtime.CodeRun {
		t.Errorf("the long line's run: %v, want %s", err, runtime.CodeRun)
	}
	if rec, err := capped.Load("d"); err != nil || rec.RunID != "d" {
		t.Errorf("the line after the long one: %+v %v", rec, err)
	}
}

// A cloned repository's .halo/runs may hold anything under a run's name: a record file
// larger than a log line may be is refused without being read whole, and a named pipe or a
// folder is refused without waiting, each as a RUN_RECORD error.
func TestStoreRefusesHostileRecordFiles(t *testing.T) {
	dir := t.TempDir()
	big, _ := runtime.MarshalRecord(record("big", runtime.Completed, 1))
	if err := os.WriteFile(filepath.Join(dir, "big.json"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &runtime.Store{Dir: dir}
	runtime.SetLogLineCap(s, len(big)-1)
	for id, want := range map[string]string{"big": "over the size limit", "pipe": "not a regular file", "folder": "not a regular file"} {
		done := make(chan error, 1)
		go func() {
			_, err := s.Load(id)
			done <- err
		}()
		select {
		case err := <-done:
			if errcode.Code(err) != runtime.CodeRun || !strings.Contains(err.Error(), want) {
				t.Errorf("Load(%s): %v, want %s with %q", id, err, runtime.CodeRun, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) still waits after 10 s", id)
		}
	}
	runtime.SetLogLineCap(s, len(big))
	if rec, err := s.Load("big"); err != nil || rec.RunID != "big" {
		t.Errorf("a record as long as the limit: %v, %v", rec, err)
	}
	usertest.Rerun(t)
}
