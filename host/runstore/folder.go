package runstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/pkgmgr/statedir"
)

// A Folder is the embedded run store: the records of runtime.Store (.halo/runs/<id>.json,
// one JSON file per run, each written whole), with an index of them in memory for lists.
// The runs halo mcp logged in the folder's run logs (runtime.Store.Log) are listed and
// loaded too; the Folder itself writes every record to its own file.
// One process uses a folder at a time (a lock file in it says which); within it, any number
// of runs may start, save and continue at once. Live events stay with the process that runs
// them, so AppendEvent keeps nothing and Listen has nothing to say.
//
// Records are group-committed (runtime.Store's GroupCommit): a run that starts, completes or
// fails is saved as soon as its record is in place, and is on disk a commit later; a paused
// run's record and a claim are on disk before Save and Claim return, so that a pause
// someone was told of, and a claim that runs the rest of a run, outlive a power cut. Close
// commits everything before it releases the folder.
type Folder struct {
	files  runtime.Store
	secret string
	now    func() time.Time
	unlock func()

	mu    sync.Mutex
	index map[string]Summary
	held  map[string]bool
	links map[string]bool

	// logged says where in the run logs the newest record of each run that has no file is
	// (runtime.Store.OnLog, and the logs read at open). It has a lock of its own: the
	// store's commit sets it while Save may hold mu and wait for that commit.
	logMu  sync.Mutex
	logged map[string]runtime.LogPos
}

// FolderOptions are the optional parts of OpenFolder.
type FolderOptions struct {
	// SecretFile is where Secret keeps its key; "" means "serve.key" beside the folder
	// (.halo/serve.key for .halo/runs).
	SecretFile string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// OpenFolder opens the folder store in dir (made if missing), refusing a dir or parent
// that is a symbolic link, and a folder another process has open (CodeBusy).
func OpenFolder(dir string, opts FolderOptions) (*Folder, error) {
	root, err := runtime.OpenRunsFolder(dir, true)
	if err != nil {
		var coded interface{ ErrorCode() string }
		if errors.As(err, &coded) {
			return nil, err
		}
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", dir, err), Err: err}
	}
	unlock, err := lockFolder(root, dir)
	if err != nil {
		root.Close()
		return nil, err
	}
	f := &Folder{
		files: runtime.Store{Dir: dir, Root: root, GroupCommit: true, Log: true}, secret: opts.SecretFile, now: opts.Now,
		unlock: func() { unlock(); root.Close() },
		index:  map[string]Summary{}, logged: map[string]runtime.LogPos{}, held: map[string]bool{}, links: map[string]bool{},
	}
	f.files.OnLog = func(id string, at runtime.LogPos) {
		f.logMu.Lock()
		f.logged[id] = at
		f.logMu.Unlock()
	}
	if f.secret == "" {
		f.secret = filepath.Join(filepath.Dir(dir), "serve.key")
	}
	if f.now == nil {
		f.now = time.Now
	}
	// Temporary files of records the process before did not live to write are removed.
	if err := f.files.RemoveLeftovers(); err != nil {
		f.Close()
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", dir, err), Err: err}
	}
	// The runs in the run logs (runtime.Store.Log: this store's, halo mcp's) are listed
	// first, so that a run with a <runId>.json too is listed as that file says, as Load
	// reads it.
	if err := f.files.Logged(func(rec *runtime.Record, at runtime.LogPos) {
		f.index[rec.RunID] = SummaryOf(rec)
		f.logged[rec.RunID] = at
	}); err != nil {
		f.Close()
		var coded interface{ ErrorCode() string }
		if errors.As(err, &coded) {
			return nil, err
		}
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", dir, err), Err: err}
	}
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		f.Close()
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", dir, err), Err: err}
	}
	for _, id := range runtime.RecordIDs(entries) {
		rec, err := f.files.Load(id)
		if err != nil {
			continue // not a record of ours (or unreadable): lists leave it out
		}
		f.index[id] = SummaryOf(rec)
		delete(f.logged, id)
	}
	return f, nil
}

// Close commits every record saved, then releases the folder for another process.
func (f *Folder) Close() error {
	err := f.files.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unlock != nil {
		f.unlock()
		f.unlock = nil
	}
	if err != nil {
		return &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", f.files.Dir, err), Err: err}
	}
	return nil
}

// Load reads run id's record.
func (f *Folder) Load(id string) (*runtime.Record, error) {
	logGone := false
	for at, ok := f.logPos(id); ok; {
		rec, err := f.files.LoadLogged(id, at)
		// A commit may have logged a newer record, and dropped the one not yet on disk
		// that LoadLogged would have read, while it read the older one: read again.
		again, ok2 := f.logPos(id)
		if ok2 && again == at {
			if !errors.Is(err, fs.ErrNotExist) {
				return rec, err
			}
			// Its log was removed (by hand: nothing here removes logs): the run is gone,
			// unless a file holds it.
			f.logMu.Lock()
			if f.logged[id] == at {
				delete(f.logged, id)
			}
			f.logMu.Unlock()
			logGone = true
			break
		}
		at, ok = again, ok2
	}
	rec, err := f.files.Load(id)
	if err != nil {
		f.mu.Lock()
		_, known := f.index[id]
		if logGone && !f.held[id] {
			delete(f.index, id)
			known = false
		}
		f.mu.Unlock()
		if !known {
			return nil, notFound(id, err)
		}
	}
	return rec, err
}

// logPos returns where run id's newest record is in the run logs, if it is there.
func (f *Folder) logPos(id string) (runtime.LogPos, bool) {
	f.logMu.Lock()
	defer f.logMu.Unlock()
	at, ok := f.logged[id]
	return at, ok
}

func notFound(id string, err error) error {
	return &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("no run %s", truncate(id, 130)), Err: errors.Join(ErrNotFound, err)}
}

// Save writes rec and indexes it; a run held by nobody here while running is refused. A
// paused record is on disk when Save returns; others a commit later.
func (f *Folder) Save(rec *runtime.Record) error {
	f.mu.Lock()
	if cur, ok := f.index[rec.RunID]; ok && cur.Status == runtime.Running && !f.held[rec.RunID] {
		f.mu.Unlock()
		return Errorf(CodeTaken, "run %s is not held by this process: its record was not saved", rec.RunID)
	}
	wait, err := f.files.Write(rec)
	if err != nil {
		f.mu.Unlock()
		return err
	}
	f.index[rec.RunID] = SummaryOf(rec)
	if rec.Status != runtime.Running {
		delete(f.held, rec.RunID)
	}
	f.mu.Unlock()
	if rec.Status == runtime.Paused {
		// A paused run's records are files from now on (the store no longer says where it
		// logs them): Load reads the file.
		f.logMu.Lock()
		delete(f.logged, rec.RunID)
		f.logMu.Unlock()
		return wait()
	}
	return nil
}

// Latest returns the most recently updated paused run.
func (f *Folder) Latest() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	best, bestTime := "", time.Time{}
	for id, s := range f.index {
		if s.Status == runtime.Paused && (best == "" || s.Updated.After(bestTime)) {
			best, bestTime = id, s.Updated
		}
	}
	if best == "" {
		return "", Errorf(runtime.CodeRun, "no paused run in %s", f.files.Dir)
	}
	return best, nil
}

// Start saves the record of a run that starts, held by this process.
func (f *Folder) Start(ctx context.Context, rec *runtime.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.index[rec.RunID]; ok {
		return Errorf(CodeTaken, "run %s exists already", rec.RunID)
	}
	if _, err := f.files.Write(rec); err != nil {
		return err
	}
	f.index[rec.RunID] = SummaryOf(rec)
	f.held[rec.RunID] = true
	return nil
}

// Claim takes paused run rec, unless another claim took it first or it changed since it was
// loaded. The record on disk says running from then on (synced before Claim returns, even
// through a power cut), so a process that stops while continuing it leaves a run that Expire
// fails, not one that could run the same stages twice.
func (f *Folder) Claim(ctx context.Context, rec *runtime.Record, sig Signal) error {
	f.mu.Lock()
	cur, ok := f.index[rec.RunID]
	if !ok {
		f.mu.Unlock()
		return notFound(rec.RunID, nil)
	}
	if cur.Status != runtime.Paused || !cur.Updated.Equal(rec.Updated) {
		f.mu.Unlock()
		return Errorf(CodeTaken, "run %s is no longer paused as it was: another signal continued it first", rec.RunID)
	}
	running := *rec
	running.Status = runtime.Running
	wait, err := f.files.Write(&running)
	if err != nil {
		f.mu.Unlock()
		return err
	}
	claimed := SummaryOf(&running)
	f.index[rec.RunID] = claimed
	f.held[rec.RunID] = true
	f.mu.Unlock()
	if err := wait(); err != nil {
		// Not claimed after all: the run goes back to waiting, its paused record in place
		// again (should even that not reach the disk, a record left saying running is
		// failed HOST_LOST when the folder opens next; never run twice).
		f.mu.Lock()
		if f.index[rec.RunID] == claimed {
			if _, werr := f.files.Write(rec); werr == nil {
				f.index[rec.RunID] = cur
				delete(f.held, rec.RunID)
			}
		}
		f.mu.Unlock()
		return err
	}
	return nil
}

// AppendEvent keeps nothing: the process that runs a run serves its live events.
func (f *Folder) AppendEvent(ctx context.Context, runID string, seq int, e runtime.Event) error {
	return nil
}

// Events returns the events of run id's record after number after.
func (f *Folder) Events(ctx context.Context, id string, after int) ([]runtime.Event, runtime.Status, error) {
	rec, err := f.Load(id)
	if err != nil {
		return nil, "", err
	}
	if after < 0 {
		after = 0
	}
	if after > len(rec.Events) {
		after = len(rec.Events)
	}
	return rec.Events[after:], rec.Status, nil
}

// List returns a page of runs from the index, newest first.
func (f *Folder) List(ctx context.Context, q Query) (Page, error) {
	cur, err := DecodeCursor(q.Cursor)
	if err != nil {
		return Page{}, err
	}
	f.mu.Lock()
	all := make([]Summary, 0, len(f.index))
	for _, s := range f.index {
		if (q.Status == "" || s.Status == q.Status) && (q.Pipeline == "" || s.Pipeline == q.Pipeline) && cur.Before(s.Started, s.RunID) {
			all = append(all, s)
		}
	}
	f.mu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		if !all[i].Started.Equal(all[j].Started) {
			return all[i].Started.After(all[j].Started)
		}
		return all[i].RunID > all[j].RunID
	})
	n := LimitOf(q)
	p := Page{Runs: all}
	if len(all) > n {
		p.Runs = all[:n]
		last := p.Runs[n-1]
		p.Next = Cursor{Started: last.Started, RunID: last.RunID}.Encode()
	}
	return p, nil
}

// Keep has nothing to renew: runs are held by the one process that has the folder open.
func (f *Folder) Keep(ctx context.Context) ([]string, error) { return nil, nil }

// Expire fails the runs the folder says are running that this process does not hold: they
// were running when the process before it stopped.
func (f *Folder) Expire(ctx context.Context) ([]string, error) {
	f.mu.Lock()
	var lost []string
	for id, s := range f.index {
		if s.Status == runtime.Running && !f.held[id] {
			lost = append(lost, id)
		}
	}
	f.mu.Unlock()
	sort.Strings(lost)
	var out []string
	for _, id := range lost {
		rec, err := f.Load(id)
		if err != nil {
			continue
		}
		LoseRecord(rec, f.now(), "the halo serve that ran it stopped before it finished")
		f.mu.Lock()
		_, err = f.files.Write(rec)
		if err == nil {
			f.index[id] = SummaryOf(rec)
		}
		f.mu.Unlock()
		if err != nil {
			return out, err
		}
		out = append(out, id)
	}
	return out, nil
}

// LoseRecord makes rec the record of a run whose process was lost: failed with
// CodeHostLost, its events so far kept.
func LoseRecord(rec *runtime.Record, now time.Time, why string) {
	rec.Status = runtime.Failed
	rec.Error = &runtime.ErrorInfo{Code: CodeHostLost, Message: why}
	rec.Resume = nil
	rec.Meta.Paused = nil
	rec.Updated = now.UTC()
	rec.Events = append(rec.Events, runtime.Event{Type: "run", Time: rec.Updated, RunID: rec.RunID, Status: runtime.Failed, Error: rec.Error})
}

// RequestCancel refuses: a run in a folder store runs in the process that has it open, which
// cancels it itself.
func (f *Folder) RequestCancel(ctx context.Context, id string) error {
	return Errorf(runtime.CodeRun, "run %s is not running in this process", id)
}

// UseLink remembers used links while the process runs. (A used link cannot be used again
// anyway: it names the pause it answers, which is over.)
func (f *Folder) UseLink(ctx context.Context, linkID, runID string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.links[linkID] {
		return false, nil
	}
	f.links[linkID] = true
	return true, nil
}

// Listen has nothing to report: no other process writes this folder.
func (f *Folder) Listen(ctx context.Context, fn func(Note)) error { return nil }

// Secret reads the key file, or makes it (mode 0600) with gen. A key file that is a
// symbolic link, not a regular file, or readable by others is refused.
func (f *Folder) Secret(ctx context.Context, gen func() ([]byte, error)) ([]byte, error) {
	dir, name := filepath.Dir(f.secret), filepath.Base(f.secret)
	var root *os.Root
	var err error
	if filepath.Base(dir) == statedir.Name {
		root, _, err = statedir.Open(filepath.Dir(dir), true)
	} else {
		root, err = os.OpenRoot(dir)
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	for range 2 {
		fd, err := root.OpenFile(name, os.O_RDONLY|noFollow, 0)
		if err == nil {
			defer fd.Close()
			fi, err := fd.Stat()
			if err != nil {
				return nil, err
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
				return nil, Errorf(CodeStore, "%s must be a file only its owner can read (mode 0600), not %s", f.secret, fi.Mode())
			}
			key, err := io.ReadAll(io.LimitReader(fd, 4096))
			if err != nil {
				return nil, err
			}
			if len(key) < 32 {
				return nil, Errorf(CodeStore, "%s holds %d bytes, fewer than the 32 of a key: delete it and a new key is made (links made with the old one stop working)", f.secret, len(key))
			}
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, Errorf(CodeStore, "approval key %s: %v", f.secret, err)
		}
		key, err := gen()
		if err != nil {
			return nil, err
		}
		w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // made by someone else meanwhile: read theirs
		}
		if err != nil {
			return nil, Errorf(CodeStore, "approval key %s: %v", f.secret, err)
		}
		_, werr := w.Write(key)
		if cerr := w.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			root.Remove(name)
			return nil, werr
		}
		return key, nil
	}
	return nil, Errorf(CodeStore, "approval key %s: cannot be read or made", f.secret)
}

var _ Store = (*Folder)(nil)
