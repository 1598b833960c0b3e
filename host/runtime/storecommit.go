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

// spareCount is how many temporary files a Store with GroupCommit keeps made ahead, so that
// a save need not make one.
const spareCount = 16

// syncers is how many files one commit syncs at once: syncs that overlap share the
// filesystem's journal commit.
const syncers = 8

// orphanAge is how old a pending record or a temporary file is when Recover takes it for one
// a stopped process left: a live process commits its records within a sync's time.
const orphanAge = time.Minute

// commits is a Store's group commit: the records written and not yet committed, and the one
// goroutine that commits them.
type commits struct {
	mu   sync.Mutex
	cond *sync.Cond
	// dirty holds, by run id, the latest record not yet taken by a commit; inflight the
	// records the commit under way is syncing.
	dirty, inflight map[string]*pending
	// seq counts writes; done is the seq of the last write a finished commit took.
	seq, done uint64
	running   bool
	loop      sync.WaitGroup
	// err is the first error of a commit since the last Sync.
	err    error
	closed bool
	// spares are temporary files made ahead for saves to write into (GroupCommit only).
	spares []*temp
	// syncFile syncs a record's file; nil means (*os.File).Sync. Tests replace it.
	syncFile func(*os.File) error
}

// A pending record is one write waiting for its commit.
type pending struct {
	seq uint64
	f   *os.File // open until it is synced
	// next is the write of the same run that replaced this one before it was committed; the
	// commit of the last one settles them all.
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

// A temp is a temporary file in the records folder, open for writing a record into.
type temp struct {
	root    *os.Root
	release func() // releases root
	name    string
	f       *os.File
	// spare says the commit goroutine made it ahead of the save that uses it.
	spare bool
}

// newTemp makes a temporary file in the records folder (made when missing).
func (s *Store) newTemp() (*temp, error) {
	root, release, err := s.root(true)
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

// spare returns a temporary file the commit goroutine made ahead, or nil.
func (s *Store) spare() *temp {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.spares)
	if n == 0 {
		return nil
	}
	t := c.spares[n-1]
	c.spares = c.spares[:n-1]
	return t
}

// put renames t, the record of run id written to it, into place as the run's pending record
// and queues it for a commit.
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
			c.cond.Wait()
		}
	}
	// Under the lock, so that a commit renames a pending record only while it is the one it
	// synced.
	if err := t.root.Rename(t.name, id+pendingExt); err != nil {
		return nil, err
	}
	t.release()
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
		if !s.kick() {
			c.cond.Wait()
		}
	}
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
		if !s.kick() {
			c.cond.Wait()
		}
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
	c.closed = true
	c.mu.Unlock()
	c.loop.Wait()
	c.mu.Lock()
	spares := c.spares
	c.spares = nil
	c.mu.Unlock()
	for _, t := range spares {
		t.discard()
	}
	return err
}

// kick gets the next commit going, c.mu held, when there is something to commit and no
// commit runs. With GroupCommit it starts the commit goroutine and returns false; without,
// the caller (a save waiting for its record) commits, and kick returns true once that commit
// is done.
func (s *Store) kick() bool {
	c := &s.commits
	if c.running || (len(c.dirty) == 0 && !s.needSpares()) {
		return false
	}
	c.running = true
	if s.GroupCommit {
		c.loop.Add(1)
		go func() {
			defer c.loop.Done()
			c.mu.Lock()
			defer c.mu.Unlock()
			for {
				if len(c.dirty) > 0 {
					s.commitOnce()
				} else if !s.needSpares() || !s.makeSpares() {
					break
				}
			}
			c.running = false
		}()
		return false
	}
	s.commitOnce()
	c.running = false
	return true
}

// needSpares reports, c.mu held, whether the commit goroutine is to make spare temporary
// files.
func (s *Store) needSpares() bool {
	c := &s.commits
	return s.GroupCommit && !c.closed && len(c.spares) < spareCount
}

// makeSpares makes spare temporary files, c.mu held (and let go meanwhile), up to
// spareCount; false when it could make none.
func (s *Store) makeSpares() bool {
	c := &s.commits
	n := spareCount - len(c.spares)
	c.mu.Unlock()
	made := s.newSpares(n)
	c.mu.Lock()
	return made > 0
}

// newSpares makes up to n spare temporary files, each ready for a save as soon as it is
// made, and returns how many it made.
func (s *Store) newSpares(n int) int {
	c := &s.commits
	for i := range n {
		t, err := s.newTemp()
		if err != nil {
			return i
		}
		t.spare = true
		c.mu.Lock()
		closed := c.closed
		if !closed {
			c.spares = append(c.spares, t)
		}
		c.mu.Unlock()
		if closed {
			t.discard()
			return i
		}
	}
	return n
}

// commitOnce commits the records written so far, c.mu held (and let go while it syncs).
func (s *Store) commitOnce() {
	c := &s.commits
	batch, upTo := c.dirty, c.seq
	c.dirty, c.inflight = map[string]*pending{}, batch
	c.cond.Broadcast() // room for saves waiting past maxPending
	spares := 0
	if s.needSpares() {
		spares = spareCount - len(c.spares)
	}
	c.mu.Unlock()
	// Spares for the saves to come are made while the disk syncs: the saves made while
	// this commit runs use up spares, and a save without one makes its own, the slowest
	// step of a save on a busy disk.
	if spares > 0 {
		synced := make(chan struct{})
		go func() {
			defer close(synced)
			s.commit(batch)
		}()
		s.newSpares(spares)
		<-synced
	} else {
		s.commit(batch)
	}
	c.mu.Lock()
	for _, p := range batch {
		p.finished = true
		if p.err != nil && c.err == nil {
			c.err = p.err
		}
	}
	c.inflight = nil
	c.done = upTo
	c.cond.Broadcast()
}

// commit syncs the records of batch, renames each that no later write replaced to
// <id>.json, and syncs the folder, so the new names are on disk too. It sets each
// record's err.
func (s *Store) commit(batch map[string]*pending) {
	syncFile := s.commits.syncFile
	if syncFile == nil {
		syncFile = (*os.File).Sync
	}
	syncAll(batch, syncFile)
	fail := func(err error) {
		for _, p := range batch {
			if p.err == nil {
				p.err = err
			}
		}
	}
	root, done, err := s.root(false)
	if err != nil {
		fail(err)
		return
	}
	defer done()
	c := &s.commits
	c.mu.Lock()
	for id, p := range batch {
		if p.err != nil || p.next != nil {
			continue // a later write of the run replaced it: that one is committed next
		}
		// A pending record already gone was committed by Recover in another process.
		if err := root.Rename(id+pendingExt, id+".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			p.err = err
		}
	}
	c.mu.Unlock()
	if err := syncDir(root); err != nil {
		fail(err)
	}
}

// syncAll syncs and closes the files of batch, several at once.
func syncAll(batch map[string]*pending, syncFile func(*os.File) error) {
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
		return
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
