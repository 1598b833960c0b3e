package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"time"
)

// The names a Store gives files besides <runId>.json.
const (
	// pendingExt ends the name of a record that is in place but not yet committed.
	pendingExt = ".json.pending"
	// tmpExt ends the name of a record being written, before it is renamed into place.
	tmpExt = ".tmp"
)

// maxPending is how many records a Store keeps waiting for a commit; a save past it waits for
// the commit under way, so a store saving faster than its disk syncs holds a bounded number
// of open files and records not on disk.
const maxPending = 256

// commitEvery is the least time from the start of one commit to the next, unless someone
// waits for one (a paused record, Sync, Close) or many records are waiting: a commit then
// takes in the records of a while, and the disk syncs less often, which slows every other
// file operation less.
const commitEvery = 5 * time.Millisecond

// syncfsFrom is how many records a commit has from which it syncs the whole filesystem at
// once (Linux's syncfs), rather than each file. One syncfs costs about what a few fsyncs
// do, but it also writes out whatever else is waiting on that disk, so small commits (a
// paused record on a quiet server) sync their own files.
const syncfsFrom = 8

// syncers is how many files a commit syncs at once: syncs that overlap share the
// filesystem's journal commit.
const syncers = 8

// orphanAge is how old a pending record or a temporary file is when Recover takes it for one
// a stopped process left: a live process commits its records within a sync's time.
const orphanAge = time.Minute

// commits is a Store's group commit: the records written and not yet committed, and the
// goroutine that commits them.
type commits struct {
	mu   sync.Mutex
	cond *sync.Cond
	// dirty holds, by run id, the latest record not yet taken by a commit; inflight the
	// records of the commit under way.
	dirty, inflight map[string]*pending
	// seq counts writes; done is the seq of the last write a finished commit took.
	seq, done uint64
	// running says a commit runs (GroupCommit: the commit goroutine); loop waits for the
	// goroutine.
	running bool
	loop    sync.WaitGroup
	// last is when the last commit began; urgent counts those waiting for a commit, whom
	// pace does not keep waiting; wake ends pace's wait.
	last   time.Time
	urgent int
	wake   chan struct{}
	// err is the first error of a commit since the last Sync.
	err    error
	closed bool
	// dir is the records folder of this commit round (see sharedDir).
	dir *sharedDir
	// syncFile, when set, syncs each record's file instead of (*os.File).Sync, and every
	// commit syncs file by file: tests watch what is synced, or make syncing fail.
	syncFile func(*os.File) error
}

// A pending record is one write waiting for its commit.
type pending struct {
	seq uint64
	f   *os.File // open until its commit syncs it
	// next is the write of the same run that replaced this one before it was committed;
	// the commit of the last one settles them all.
	next     *pending
	finished bool
	err      error
}

func (c *commits) init() {
	if c.cond == nil {
		c.cond = sync.NewCond(&c.mu)
		c.dirty = map[string]*pending{}
	}
}

// A sharedDir is the records folder as a Store with GroupCommit and no Root opened it, for
// the saves and the commit of one commit round: opening it (through pkgmgr/statedir, which
// checks every step) costs more than writing a record, and once a round it is opened again,
// so a folder removed or replaced meanwhile is found again as it is now.
type sharedDir struct {
	root *os.Root
	// refs counts its users; dropped says it is to be closed once they are done.
	refs    int
	dropped bool
}

// drop, c.mu held, closes d once its users are done; d may be nil.
func (d *sharedDir) drop() {
	if d == nil {
		return
	}
	d.dropped = true
	if d.refs == 0 {
		d.root.Close()
	}
}

// folder returns the records folder to write in (made when create is set), and how to
// release it: Root, the folder of this commit round, or the folder opened for this one use.
func (s *Store) folder(create bool) (*os.Root, func(), error) {
	if s.Root != nil || !s.GroupCommit {
		return s.root(create)
	}
	c := &s.commits
	c.mu.Lock()
	d := c.dir
	if d == nil {
		c.mu.Unlock()
		root, done, err := s.root(create)
		if err != nil {
			return nil, nil, err
		}
		c.mu.Lock()
		if d = c.dir; d == nil {
			d = &sharedDir{root: root}
			c.dir = d
		} else {
			done() // opened by another save meanwhile
		}
	}
	d.refs++
	c.mu.Unlock()
	return d.root, func() {
		c.mu.Lock()
		d.refs--
		if d.dropped && d.refs == 0 {
			d.root.Close()
		}
		c.mu.Unlock()
	}, nil
}

// A temp is a temporary file in the records folder, open for writing a record into.
type temp struct {
	root    *os.Root
	release func() // releases root
	name    string
	f       *os.File
}

// newTemp makes a temporary file in the records folder (made when missing).
func (s *Store) newTemp() (*temp, error) {
	root, release, err := s.folder(true)
	if err != nil {
		return nil, err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	name := "." + hex.EncodeToString(rnd[:]) + tmpExt
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		release()
		return nil, err
	}
	return &temp{root: root, release: release, name: name, f: f}, nil
}

// discard removes t.
func (t *temp) discard() {
	t.f.Close()
	t.root.Remove(t.name)
	t.release()
}

// put renames t, the record of run id written to it, into place as the run's pending record
// and queues it for a commit. The caller releases t's folder (its release takes c.mu).
func (s *Store) put(t *temp, id string) (*pending, error) {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	if c.closed {
		return nil, errors.New("the run store is closed")
	}
	for len(c.dirty) >= maxPending {
		if !s.kick() {
			s.hurry()
			c.cond.Wait()
		}
	}
	// Under the lock, so that a commit renames a pending record only while it is the one it
	// synced.
	if err := t.root.Rename(t.name, id+pendingExt); err != nil {
		return nil, err
	}
	c.seq++
	p := &pending{seq: c.seq, f: t.f}
	if old := c.dirty[id]; old != nil {
		old.next = p
		old.f.Close()
	} else if old := c.inflight[id]; old != nil {
		old.next = p
	}
	c.dirty[id] = p
	s.kick()
	return p, nil
}

// wait returns once p, or the write that replaced it, is committed.
func (s *Store) wait(p *pending) error {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		last := p
		for last.next != nil {
			last = last.next
		}
		if last.finished {
			return last.err
		}
		s.await()
	}
}

// await, c.mu held, gets a commit going and, unless this goroutine made it, waits for the
// next commit to end.
func (s *Store) await() {
	c := &s.commits
	if s.kick() {
		return
	}
	c.urgent++
	s.hurry()
	c.cond.Wait()
	c.urgent--
}

// Sync returns once every record saved so far is on disk, with the first error a commit met
// since the last Sync.
func (s *Store) Sync() error {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.settle()
}

// settle waits, c.mu held, until every write so far is committed.
func (s *Store) settle() error {
	c := &s.commits
	if c.cond == nil {
		return nil
	}
	target := c.seq
	for c.done < target {
		s.await()
	}
	err := c.err
	c.err = nil
	return err
}

// Close commits every record saved so far, as Sync does, and returns once the store's commit
// goroutine has ended; a save after it is refused. It does not close Root.
func (s *Store) Close() error {
	c := &s.commits
	c.mu.Lock()
	err := s.settle()
	saved := c.seq > 0
	c.closed = true
	c.mu.Unlock()
	c.loop.Wait()
	c.mu.Lock()
	c.dir.drop()
	c.dir = nil
	c.mu.Unlock()
	if saved {
		// A commit that synced the whole filesystem left its renames to the next one:
		// there is none, so the folder is synced here.
		if root, done, rerr := s.root(false); rerr == nil {
			if derr := syncDir(root); err == nil {
				err = derr
			}
			done()
		}
	}
	return err
}

// kick gets the next commit going, c.mu held, when there is something to commit and no
// commit runs. With GroupCommit it starts the commit goroutine and returns false; without,
// the caller (a save waiting for its record) commits, and kick returns true once that commit
// is done.
func (s *Store) kick() bool {
	c := &s.commits
	if c.running || len(c.dirty) == 0 {
		return false
	}
	c.running = true
	if s.GroupCommit {
		c.loop.Add(1)
		go func() {
			defer c.loop.Done()
			c.mu.Lock()
			defer c.mu.Unlock()
			for len(c.dirty) > 0 {
				s.pace()
				s.commitOnce()
			}
			c.running = false
		}()
		return false
	}
	s.commitOnce()
	c.running = false
	return true
}

// pace waits, c.mu held (and let go meanwhile), until commitEvery has passed since the
// last commit began, unless someone waits for a commit, many records wait, or the store
// closes.
func (s *Store) pace() {
	c := &s.commits
	wait := commitEvery - time.Since(c.last)
	if wait <= 0 || c.urgent > 0 || c.closed || len(c.dirty) >= maxPending/2 {
		return
	}
	if c.wake == nil {
		c.wake = make(chan struct{}, 1)
	}
	select { // a wake left from before
	case <-c.wake:
	default:
	}
	c.mu.Unlock()
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-c.wake:
		t.Stop()
	}
	c.mu.Lock()
}

// hurry, c.mu held, ends the wait of pace: someone waits for a commit.
func (s *Store) hurry() {
	c := &s.commits
	if c.wake != nil {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// commitOnce commits the records written so far, c.mu held (and let go while it syncs).
func (s *Store) commitOnce() {
	c := &s.commits
	c.last = time.Now()
	batch, upTo := c.dirty, c.seq
	c.dirty, c.inflight = map[string]*pending{}, batch
	c.cond.Broadcast() // room for saves waiting past maxPending
	c.mu.Unlock()
	s.commit(batch)
	c.mu.Lock()
	for _, p := range batch {
		p.finished = true
		if p.err != nil && c.err == nil {
			c.err = p.err
		}
	}
	c.inflight = nil
	c.done = upTo
	c.dir.drop()
	c.dir = nil
	c.cond.Broadcast()
}

// commit syncs the records of batch, renames each that no later write replaced to
// <id>.json, and has the new names on disk too: it syncs the folder, unless it synced the
// whole filesystem (then the records are on disk under their pending names, which readers
// take, until the next commit syncs the renames). It sets each record's err.
func (s *Store) commit(batch map[string]*pending) {
	fail := func(err error) {
		for _, p := range batch {
			if p.err == nil {
				p.err = err
			}
		}
	}
	root, done, err := s.folder(false)
	if err != nil {
		for _, p := range batch {
			p.f.Close()
		}
		fail(err)
		return
	}
	defer done()
	whole := s.syncBatch(root, batch)
	c := &s.commits
	for id, p := range batch {
		if p.err != nil {
			continue
		}
		c.mu.Lock()
		// A later write of the run replaced it: that one is committed next. A pending
		// record already gone was committed by Recover in another process.
		if p.next == nil {
			if err := root.Rename(id+pendingExt, id+".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
				p.err = err
			}
		}
		c.mu.Unlock()
	}
	if !whole {
		if err := syncDir(root); err != nil {
			fail(err)
		}
	}
}

// syncBatch syncs the files of batch and closes them, setting each record's err; true when
// it synced the whole filesystem (its names too).
func (s *Store) syncBatch(root *os.Root, batch map[string]*pending) bool {
	syncFile := s.commits.syncFile
	if syncFile == nil && len(batch) >= syncfsFrom {
		if ok, err := syncFS(root); ok {
			for _, p := range batch {
				p.err = err
				p.f.Close()
			}
			return err == nil
		}
	}
	if syncFile == nil {
		syncFile = (*os.File).Sync
	}
	one := func(p *pending) {
		p.err = syncFile(p.f)
		if err := p.f.Close(); p.err == nil {
			p.err = err
		}
	}
	if len(batch) == 1 {
		for _, p := range batch {
			one(p)
		}
		return false
	}
	work := make(chan *pending)
	var wg sync.WaitGroup
	for range min(len(batch), syncers) {
		wg.Go(func() {
			for p := range work {
				one(p)
			}
		})
	}
	for _, p := range batch {
		work <- p
	}
	close(work)
	wg.Wait()
	return false
}

// syncDir syncs the folder itself: the names in it. Windows cannot sync a folder; there the
// names go to disk with the filesystem's own journal.
func syncDir(root *os.Root) error {
	if goruntime.GOOS == "windows" {
		return nil
	}
	d, err := root.Open(".")
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Recover commits the records a process saved and did not live to commit: each pending
// record older than a minute is synced and renamed to <id>.json, and one that is not whole
// (a power cut came before its commit) is removed, leaving the record before it. Temporary
// files of saves cut off as long ago are removed. It returns the ids of the runs whose
// records it committed. halo serve and halo mcp call it as they open a folder.
func (s *Store) Recover() ([]string, error) {
	root, done, err := s.root(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer done()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, storeError(s.Dir, err)
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || time.Since(fi.ModTime()) < orphanAge {
			continue
		}
		if strings.HasPrefix(name, ".") && strings.HasSuffix(name, tmpExt) {
			root.Remove(name)
			continue
		}
		id, ok := strings.CutSuffix(name, pendingExt)
		if !ok || checkID(id) != nil {
			continue
		}
		ok, err = recoverOne(root, id, fi)
		if err != nil {
			return ids, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: committing the record a stopped process left: %v", id, err), Err: err}
		}
		if ok {
			ids = append(ids, id)
		}
	}
	if len(ids) > 0 {
		if err := syncDir(root); err != nil {
			return ids, storeError(s.Dir, err)
		}
	}
	return ids, nil
}

// recoverOne commits, or removes when it is not whole, the pending record of run id that
// fi describes, unless the file changed meanwhile (its process was alive after all).
func recoverOne(root *os.Root, id string, fi fs.FileInfo) (bool, error) {
	f, err := root.OpenFile(id+pendingExt, os.O_RDWR, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil || !os.SameFile(fi, got) {
		return false, nil
	}
	b, err := readAll(f, got.Size())
	if err != nil {
		return false, err
	}
	if decodeRecord(b, id) == nil {
		return false, root.Remove(id + pendingExt)
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if now, err := root.Lstat(id + pendingExt); err != nil || !os.SameFile(fi, now) {
		return false, nil
	}
	return true, root.Rename(id+pendingExt, id+".json")
}

// readAll reads the n bytes of f.
func readAll(f *os.File, n int64) ([]byte, error) {
	b := make([]byte, n)
	_, err := f.ReadAt(b, 0)
	return b, err
}
