package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"time"
)

// tmpExt ends the name of a record being written, before it is renamed to <runId>.json.
const tmpExt = ".tmp"

// maxPending and maxPendingBytes bound the records a Store keeps waiting for a commit, in
// number and in bytes: a save past either waits for the commit under way, so a store saving
// faster than its disk syncs holds a bounded amount in memory. They are large because a
// sync now and then takes a hundred milliseconds or more (syncfs writes out whatever else
// waits on the disk), and saves made meanwhile should not wait: with 256 records at most,
// 16 clients of halo mcp saw a p99 of 80 ms, with 4096, 10 ms.
const (
	maxPending      = 4096
	maxPendingBytes = 64 << 20
)

// commitEvery is the least time from the start of one commit to the next, unless someone
// waits for one (a paused record, Sync, Close) or many records are waiting: a commit then
// takes in the records of a while (a run's first and last record often fall in one), and the
// disk syncs less often, which slows every other file operation less. It was 5 ms: at 200
// syncs a second, the journal commits and writeback (kernel threads beside the process)
// left halo mcp with 16 clients at 0.91 to 1.71 times the TypeScript SDK's p50 on the
// 2-core development machine; at 20 ms, 0.74 to 1.08. What a crash can lose grows to the
// records of those 20 ms, and no answer waits for them (a paused record is synced at once).
const commitEvery = 20 * time.Millisecond

// syncfsFrom is how many records a commit has from which it syncs the whole filesystem at
// once (Linux's syncfs), rather than each file. One syncfs costs about what a few fsyncs
// do, but it also writes out whatever else is waiting on that disk, so small commits (a
// paused record on a quiet server) sync their own files.
const syncfsFrom = 8

// syncers is how many files a commit syncs at once: syncs that overlap share the
// filesystem's journal commit.
const syncers = 8

// orphanAge is how old a temporary file is when RemoveLeftovers takes it for one a stopped
// process left: a live process renames its files within a sync's time.
const orphanAge = time.Minute

// commits is a Store's group commit: the records saved and not yet on disk, and the
// goroutine that writes them.
type commits struct {
	mu   sync.Mutex
	cond *sync.Cond
	// dirty holds, by run id, the latest record not yet taken by a commit; inflight the
	// records of the commit under way; failed those whose commit failed, tried again with
	// the next commit. Load reads them before the folder.
	dirty, inflight, failed map[string]*pending
	// dirtyBytes is the size of the records in dirty.
	dirtyBytes int
	// seq counts saves; done is the seq of the last save a finished commit took.
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
	// folderOK says the records folder was opened once (GroupCommit: at the first save).
	folderOK bool
	// err is the first error of a commit since the last Sync.
	err    error
	closed bool
	// syncFile, when set, syncs each record's file instead of (*os.File).Sync, and every
	// commit syncs file by file: tests watch what is synced, or make syncing fail.
	syncFile func(*os.File) error
	// named says records get a temporary name from the start (the filesystem makes no
	// files without a name); link is how a file with no name gets one (linkFD...). Only
	// commits, one at a time, use them.
	named bool
	link  int
	// logf is the run log commits append to (Store.Log), logSize how much it holds.
	logf    *os.File
	logName string
	logSize int64
	// logLimit and lineCap, when set, replace maxLogSize and maxLogLine (tests).
	logLimit int64
	lineCap  int
	// files holds, with Store.Log, the runs that have or will have a <runId>.json (a paused
	// record was saved, or one was loaded from its file): their later records replace that
	// file rather than go to the log.
	files map[string]bool
}

// A pending record is one save waiting for its commit.
type pending struct {
	data []byte // the record, encoded
	// next is the save of the same run that replaced this one before it was committed;
	// the commit of the last one settles them all.
	next *pending
	// log says the record goes to the run log, not to <id>.json.
	log      bool
	finished bool
	err      error
}

func (c *commits) init() {
	if c.cond == nil {
		c.cond = sync.NewCond(&c.mu)
		c.dirty = map[string]*pending{}
	}
}

// ready opens the records folder (made when missing) at a GroupCommit store's first save, so
// that a folder that cannot be used (a symbolic link, not writable) fails that save, not
// only the commit after it.
func (s *Store) ready() error {
	c := &s.commits
	c.mu.Lock()
	ok := c.folderOK
	c.mu.Unlock()
	if ok {
		return nil
	}
	_, done, err := s.root(true)
	if err != nil {
		return err
	}
	done()
	c.mu.Lock()
	c.folderOK = true
	c.mu.Unlock()
	return nil
}

// put queues data, the encoded record of run id, for a commit; with Store.Log, a record of
// status st that is not paused, of a run that never had a file, goes to the run log.
func (s *Store) put(id string, st Status, data []byte) (*pending, error) {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	c.init()
	if c.closed {
		return nil, errors.New("the run store is closed")
	}
	for (len(c.dirty) >= maxPending || c.dirtyBytes >= maxPendingBytes) && c.dirty[id] == nil {
		if !s.kick() {
			s.hurry()
			c.cond.Wait()
		}
	}
	c.seq++
	p := &pending{data: data}
	if s.Log {
		if st == Paused {
			s.hasFile(id)
		} else {
			p.log = !c.files[id]
		}
	}
	if old := c.dirty[id]; old != nil {
		old.next = p
		c.dirtyBytes -= len(old.data)
	} else if old := c.inflight[id]; old != nil {
		old.next = p
	}
	c.dirty[id] = p
	c.dirtyBytes += len(data)
	s.kick()
	return p, nil
}

// hasFile notes, c.mu held, that run id has or will have a <runId>.json.
func (s *Store) hasFile(id string) {
	c := &s.commits
	if c.files == nil {
		c.files = map[string]bool{}
	}
	c.files[id] = true
}

// unsaved returns the newest record of run id not yet on disk, encoded, or nil.
func (s *Store) unsaved(id string) []byte {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.dirty[id]; p != nil {
		return p.data
	}
	if p := c.inflight[id]; p != nil {
		return p.data
	}
	if p := c.failed[id]; p != nil {
		return p.data
	}
	return nil
}

// unsavedIDs returns the ids of the runs with a record not yet on disk.
func (s *Store) unsavedIDs() map[string]bool {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := map[string]bool{}
	for _, m := range []map[string]*pending{c.dirty, c.inflight, c.failed} {
		for id := range m {
			ids[id] = true
		}
	}
	return ids
}

// wait returns once p, or the save that replaced it, is committed.
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

// settle waits, c.mu held, until every save so far is committed.
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
// goroutine has ended and its run log is closed; a save after it is refused. It does not
// close Root.
func (s *Store) Close() error {
	c := &s.commits
	c.mu.Lock()
	err := s.settle()
	c.closed = true
	c.mu.Unlock()
	c.loop.Wait()
	if cerr := s.closeLog(); err == nil {
		err = cerr
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
	if wait <= 0 || c.urgent > 0 || c.closed || len(c.dirty) >= maxPending/2 || c.dirtyBytes >= maxPendingBytes/2 {
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

// commitOnce commits the records saved so far, c.mu held (and let go while it writes).
func (s *Store) commitOnce() {
	c := &s.commits
	c.last = time.Now()
	batch, upTo := c.dirty, c.seq
	for id, p := range c.failed { // tried again, unless saved again since
		if batch[id] == nil {
			batch[id] = &pending{data: p.data, log: p.log}
		}
	}
	c.failed = nil
	c.dirty, c.inflight, c.dirtyBytes = map[string]*pending{}, batch, 0
	c.cond.Broadcast() // room for saves waiting past maxPending
	c.mu.Unlock()
	s.commit(batch)
	c.mu.Lock()
	for id, p := range batch {
		p.finished = true
		if p.err != nil {
			if c.err == nil {
				c.err = p.err
			}
			if p.next == nil {
				if c.failed == nil {
					c.failed = map[string]*pending{}
				}
				c.failed[id] = p
			}
		}
	}
	c.inflight = nil
	c.done = upTo
	c.cond.Broadcast()
}

// A file is one record of a commit being written. On Linux a record gets a file with no name
// (fd, made with O_TMPFILE) that takes the name <id>.json once it is on disk: one name made
// in the folder per record. Elsewhere, or when the filesystem cannot, and for a run whose
// <id>.json is already there, the file has a temporary name (name) that is renamed to
// <id>.json.
type file struct {
	id   string
	p    *pending
	fd   int      // the file with no name, or -1
	f    *os.File // the file with a temporary name; or fd, for Store.syncFile
	name string   // its temporary name
}

// commit appends the records of batch that go to the run log to it and syncs it; it writes
// each other record to a new file, syncs them, names each <id>.json and syncs the folder, so
// that <id>.json only ever gets a file already on disk and the new names are on disk too. It
// sets each record's err; a record that could not be written leaves <id>.json as it was.
func (s *Store) commit(batch map[string]*pending) {
	c := &s.commits
	fail := func(err error) {
		for _, p := range batch {
			p.err = err
		}
	}
	root, done, err := s.root(true)
	if err != nil {
		fail(err)
		return
	}
	defer done()
	syncFile := c.syncFile
	files := make([]*file, 0, len(batch))
	var logged []*file
	for id, p := range batch {
		if p.log {
			logged = append(logged, &file{id: id, p: p, fd: -1})
		} else {
			files = append(files, &file{id: id, p: p, fd: -1})
		}
	}
	if len(logged) > 0 {
		err := s.appendLog(root, logged, syncFile)
		for _, f := range logged {
			f.p.err = err
		}
	}
	if len(files) == 0 {
		return
	}
	dir, err := root.Open(".") // the folder itself: files are made, named and synced through it
	if err != nil {
		for _, f := range files {
			f.p.err = err
		}
		return
	}
	defer dir.Close()
	dfd := -1
	if goruntime.GOOS == "linux" {
		dfd = int(dir.Fd())
	}
	whole := syncFile == nil && len(files) >= syncfsFrom
	// Each file is made, written and (unless one syncfs serves them all) synced and closed.
	// Written one after the other: goroutines each in a file system call would hold every
	// processor (GOMAXPROCS is the machine's cores), and the runs answered meanwhile would
	// wait until Go's monitor takes the processors back (up to 10 ms; p99 4 ms to 1.4 ms).
	for _, f := range files {
		f.p.err = s.create(root, dfd, f)
	}
	syncEach := func() {
		each(files, func(f *file) {
			if f.p.err == nil {
				f.p.err = f.sync(syncFile)
			}
		})
	}
	if !whole {
		syncEach()
	} else if ok, err := syncFS(dir); !ok { // cannot sync a whole filesystem here
		syncEach()
	} else if err != nil {
		for _, f := range files {
			if f.p.err == nil {
				f.p.err = err
			}
		}
	}
	named := false
	for _, f := range files {
		if f.p.err == nil {
			f.p.err = s.name(root, dfd, f, syncFile)
		}
		if err := f.close(); f.p.err == nil {
			f.p.err = err
		}
		if f.p.err != nil {
			if f.name != "" {
				root.Remove(f.name)
			}
			continue
		}
		named = true
	}
	if named && goruntime.GOOS != "windows" { // Windows cannot sync a folder; its journal keeps the names
		if err := dir.Sync(); err != nil {
			for _, f := range files {
				if f.p.err == nil {
					f.p.err = err
				}
			}
		}
	}
}

// create makes f's file, with no name when it can, and writes its record to it.
func (s *Store) create(root *os.Root, dir int, f *file) error {
	c := &s.commits
	if dir >= 0 && !c.named {
		fd, unsupported, err := openUnnamed(dir)
		if err == nil {
			f.fd = fd
			return writeAll(fd, f.p.data)
		}
		if !unsupported {
			return err
		}
		c.named = true // this filesystem makes no file without a name
	}
	return f.createNamed(root)
}

// createNamed makes f's file with a temporary name in root and writes its record to it.
func (f *file) createNamed(root *os.Root) error {
	f.name = tempName()
	fh, err := root.OpenFile(f.name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		f.name = ""
		return err
	}
	f.f = fh
	_, err = fh.Write(f.p.data)
	return err
}

// tempName returns a new temporary name for a record's file.
func tempName() string {
	var rnd [8]byte
	rand.Read(rnd[:])
	return "." + hex.EncodeToString(rnd[:]) + tmpExt
}

// sync syncs f's file, with syncFile when set.
func (f *file) sync(syncFile func(*os.File) error) error {
	if syncFile == nil {
		if f.f != nil {
			return f.f.Sync()
		}
		return fsyncFD(f.fd)
	}
	if f.f == nil {
		f.f = os.NewFile(uintptr(f.fd), "unnamed record "+f.id)
	}
	return syncFile(f.f)
}

// name gives f's file, on disk, the name <id>.json.
func (s *Store) name(root *os.Root, dir int, f *file, syncFile func(*os.File) error) error {
	c := &s.commits
	final := f.id + ".json"
	if f.fd < 0 {
		return root.Rename(f.name, final)
	}
	err := linkUnnamed(&c.link, f.fd, dir, final)
	if errors.Is(err, fs.ErrExist) { // the run has a record on disk: replace it
		f.name = tempName()
		if err = linkUnnamed(&c.link, f.fd, dir, f.name); err != nil {
			f.name = ""
		} else {
			err = renameAt(dir, f.name, final)
		}
	}
	if err == errNoLink { // files with no name cannot be named here: write it again with one
		c.named = true
		if err = f.close(); err != nil {
			return err
		}
		if err = f.createNamed(root); err == nil {
			if syncFile == nil {
				syncFile = (*os.File).Sync
			}
			if err = syncFile(f.f); err == nil {
				err = root.Rename(f.name, final)
			}
		}
	}
	return err
}

// close closes f's file, once.
func (f *file) close() error {
	var err error
	if f.f != nil {
		err = f.f.Close()
	} else if f.fd >= 0 {
		err = closeFD(f.fd)
	}
	f.f, f.fd = nil, -1
	return err
}

// each runs do on every file, several at once.
func each(files []*file, do func(*file)) {
	if len(files) == 1 {
		do(files[0])
		return
	}
	work := make(chan *file)
	var wg sync.WaitGroup
	for range min(len(files), syncers) {
		wg.Go(func() {
			for f := range work {
				do(f)
			}
		})
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
}

// RemoveLeftovers removes the temporary files of saves a stopped process left (a minute old or
// more). halo serve and halo mcp call it as they open a folder.
func (s *Store) RemoveLeftovers() error {
	root, done, err := s.root(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return storeError(s.Dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, tmpExt) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) >= orphanAge {
			root.Remove(name)
		}
	}
	return nil
}
