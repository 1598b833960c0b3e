package runstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"halolang.dev/halo/host/runtime"
)

// The group commit of the embedded store. Saves are queued, by run id (a run saved again
// before a commit is written once: its newest record), and one goroutine commits the queue
// in one transaction at most every commitEvery, or at once when someone waits for a commit
// (a paused record, a claim, a store without GroupCommit, a list, Sync, Close). SQLite then
// syncs the write-ahead log once for the whole batch.

// commitEvery is the least time from the start of one commit to the next, unless someone
// waits for one or many records are waiting: a commit then takes in the records of a while
// (a run's start and end often fall in one, and it is written once), and the disk syncs
// less often. What a crash can lose is the records of those 20 ms, and no answer waits for
// them (a paused record is committed at once). The run logs this store replaced measured
// it: at 5 ms, halo mcp with 16 clients had 0.91 to 1.71 times the TypeScript SDK's p50 on
// the 2-core development machine, at 20 ms 0.74 to 1.08.
const commitEvery = 20 * time.Millisecond

// maxPending and maxPendingBytes bound the records waiting for a commit, in number and in
// the bytes of their JSON's buffers: a save past either waits for the commit under way.
const (
	maxPending      = 4096
	maxPendingBytes = 64 << 20
)

// idleAfter is how long the commit goroutine waits with nothing to commit before it writes
// the text index of the rows committed since (SQLite.indexText), idleChunk rows a
// transaction, so that a save that comes meanwhile waits for one chunk at most. Each chunk
// is a segment of FTS5's index, which FTS5 then merges with the others: in chunks of 5,000
// rather than 1,000, a run cost 8.1 to 12.5 µs of processor time rather than 10.9 to 16.2
// (BenchmarkTextIndex, six runs each, alternated), a common word's page was listed in 2.5 ms
// rather than 6.0 (BenchmarkList text), and a chunk takes 40 to 60 ms rather than 11 to 16.
const (
	idleAfter = 500 * time.Millisecond
	idleChunk = 5000
)

// maxKeptBuffer bounds the buffers an encoder keeps for the next record (recordBuffers): a
// rare large record's are let go.
const maxKeptBuffer = 64 << 10

// recordBuffers is the buffer a record's JSON is encoded into on the request path, reused
// from one record to the next: the pending record holds it until its commit has packed the
// JSON (pending.pack), then gives it back. With a copy of each record's JSON kept instead
// (1.3 KB of new memory a call), eight rounds of BenchmarkToolsCallPaired with 16 clients
// under halo serve, alternated with packing on the request path, told no difference
// (medians 1.366 and 1.367 of mcp-go's processor time); with the buffers reused, 1.285
// against 1.333 in twenty (docs/mcp.md, "Records packed by their commit").
type recordBuffers struct{ raw []byte }

// buffersFrom returns recordBuffers from pool, or new ones.
func buffersFrom(pool *sync.Pool) *recordBuffers {
	if b, ok := pool.Get().(*recordBuffers); ok {
		return b
	}
	return &recordBuffers{}
}

// release gives b back to pool, unless a large record grew it.
func (b *recordBuffers) release(pool *sync.Pool) {
	if cap(b.raw) <= maxKeptBuffer {
		pool.Put(b)
	}
}

// What a queued record is.
type putKind int

const (
	putSave  putKind = iota // written whatever is there (an upsert)
	putStart                // a run that starts: written only if there is none of that id
	putClaim                // a paused run taken: written only while still paused as it was
)

// errClaimLost says a claim's commit found the run no longer paused as the claim saw it:
// another process took it.
var errClaimLost = errors.New("the run changed in the database")

// errIDTaken says the commit of a run that started found a row of its id in the database,
// saved by another process (or before this one opened it): the run's record is not
// written, and that row is left as it is. Start does not read the database to look for
// one first: a run id is random (128 bits under halo serve), so this is the insert's own
// conflict, found at no cost.
var errIDTaken = Errorf(CodeTaken, "another run of that id is in the database: this run's record was not saved")

// A pending record is one save waiting for its commit.
type pending struct {
	kind putKind
	id   string
	// key is the run's key (runKeys.of), which with id finds its row.
	key int64
	// once encodes rec into raw (its JSON, in buf) and cols (a run that starts is encoded
	// only if a commit, or a reader, needs it: most stop first), and says whether it could
	// (encoded). The commit packs raw into data (as the database keeps it), then, holding
	// the commits' lock, drops raw and gives buf back (pending.pack, commits.packAll): a
	// reader reads raw and data holding that lock.
	once    sync.Once
	encoded bool
	rec     *runtime.Record
	raw     []byte
	buf     *recordBuffers
	data    []byte
	cols    Columns
	// was is, for a claim, when the paused record it takes was updated.
	was time.Time
	// counted is what the record added to dirtyBytes as it was queued: the room of the buffer
	// its JSON holds until its commit, which an earlier, larger record may have grown (a
	// start's is encoded later, by a commit or a reader that does not hold the lock).
	counted int
	// fresh says no commit has written the run's row yet since it started here: its row is
	// inserted only if there is none of that id (errIDTaken), whatever its kind.
	fresh bool
	// next is the save of the same run that replaced this one before it was committed; the
	// commit of the last one settles them all.
	next     *pending
	finished bool
	err      error
}

// encode makes raw and cols from rec, once, in a buffer from bufs.
func (p *pending) encode(bufs *sync.Pool) {
	p.once.Do(func() {
		if p.data != nil { // a failed commit's record, tried again
			p.encoded = true
			return
		}
		b := buffersFrom(bufs)
		raw, err := appendRecord(b.raw[:0], p.rec)
		b.raw = raw
		if err != nil {
			b.release(bufs)
			p.err = fmt.Errorf("run %s: encode record: %w", p.id, err)
			return
		}
		p.raw, p.buf, p.encoded = raw, b, true
		p.cols = ColumnsOf(p.rec)
		p.rec = nil
	})
}

// pack makes data from raw, in the commit, with scratch as S2's room to pack into; it
// returns the scratch to pack the next record with. Packing the records of a commit one
// after the other, rather than each on its request's goroutine, finds S2's tables in the
// cache and its stack grown: on halo serve's request path (16 clients) a record took 5.7 µs
// to pack (the 64 KiB table S2 clears on the stack, its dictionary's table read cold, the
// goroutine's stack grown for them again after each collection shrank it), on the commit
// goroutine 1.7, and 1.3 in BenchmarkPackRecord.
func (p *pending) pack(scratch []byte) []byte {
	if p.data == nil && p.raw != nil {
		p.data, scratch = packRecordInto(scratch, p.raw)
	}
	return scratch
}

// commits is the store's queue and its commit goroutine.
type commits struct {
	s    *SQLite
	mu   sync.Mutex
	cond *sync.Cond
	// dirty holds, by run id, the newest record not yet taken by a commit; inflight the
	// records of the commit under way; failed those whose commit failed, tried again with
	// the next commit. Load reads them before the database.
	dirty, inflight, failed map[string]*pending
	dirtyBytes              int
	// taken holds the runs whose start found their id in the database (errIDTaken): their
	// later saves are refused too, not written over that row.
	taken map[string]bool
	// seq counts saves; done is the seq of the last save a finished commit took.
	seq, done uint64
	// started and ended count commits; retry asks for one with nothing new to commit, for the
	// records whose commit failed (settle), which otherwise wait for the next save.
	started, ended uint64
	retry          bool
	// urgent counts those waiting for a commit, whom pace does not keep waiting; wake ends
	// pace's wait; last is when the last commit began.
	urgent int
	wake   chan struct{}
	last   time.Time
	// err is the first error of a commit since the last Sync; failing is the last
	// commit's, while commits fail (a full disk): every save then waits for its own.
	err, failing error
	closed       bool
	// textBehind says rows may be past the text index (since the open, or a commit), for
	// idleIndex; textMore that its last chunk left some, so that it writes the next at once
	// unless a save came; idling that it waits for saved, which put and close then signal.
	textBehind, textMore, idling bool
	saved                        chan struct{}
	loop                         sync.WaitGroup
	// bufs holds *recordBuffers for pending.encode; packed is the commit's room to pack
	// records into (pending.pack).
	bufs   sync.Pool
	packed []byte
	// rowStmts are the writer's statements that write 1<<l rows of a save or a start
	// (rowStmts[kind][l]), oneStmts those that write up to 1<<l rows outside a transaction
	// (oneSQL), and claimStmt its claim's, each prepared once.
	rowStmts, oneStmts [putClaim][maxRowsLog2 + 1]*sql.Stmt
	claimStmt          *sql.Stmt
}

// init starts the commit goroutine.
func (c *commits) init(s *SQLite) {
	c.s = s
	c.cond = sync.NewCond(&c.mu)
	c.dirty = map[string]*pending{}
	c.wake = make(chan struct{}, 1)
	c.saved = make(chan struct{}, 1)
	c.textBehind = true
	c.loop.Add(1)
	go c.run()
}

// close commits everything queued and ends the goroutine; later saves are refused.
func (c *commits) close() error {
	if c.cond == nil {
		return nil
	}
	c.mu.Lock()
	err := c.settle()
	c.closed = true
	c.cond.Broadcast()
	c.signalSaved()
	c.mu.Unlock()
	c.loop.Wait()
	for _, sts := range append(c.rowStmts[:], c.oneStmts[:]...) {
		for _, st := range sts {
			if st != nil {
				st.Close()
			}
		}
	}
	if c.claimStmt != nil {
		c.claimStmt.Close()
	}
	return err
}

// put queues rec.
func (c *commits) put(rec *runtime.Record, kind putKind) (*pending, error) {
	p := &pending{kind: kind, id: rec.RunID, key: c.s.keys.of(rec.RunID), fresh: kind == putStart}
	switch kind {
	case putStart:
		// What the record holds as a run starts; the runtime goes on changing its own.
		cp := &runtime.Record{RunID: rec.RunID, File: rec.File, Pipeline: rec.Pipeline, Status: rec.Status, Inputs: rec.Inputs,
			Meta: rec.Meta, Data: rec.Data, Events: append([]runtime.Event(nil), rec.Events...), Started: rec.Started, Updated: rec.Updated}
		cp.Meta.Calls = append([]runtime.CallInfo{}, rec.Meta.Calls...)
		cp.Meta.Violations = append([]runtime.ViolationInfo{}, rec.Meta.Violations...)
		p.rec = cp
	default:
		p.rec = rec
		p.encode(&c.bufs)
		if p.err != nil {
			return nil, p.err
		}
		if kind == putClaim {
			p.was = rec.Updated
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.cond == nil {
		return nil, Errorf(CodeStore, "run %s: the run store is closed", rec.RunID)
	}
	for (len(c.dirty) >= maxPending || c.dirtyBytes >= maxPendingBytes) && c.dirty[rec.RunID] == nil {
		c.hurry()
		c.cond.Wait()
	}
	c.seq++
	if old := c.dirty[p.id]; old != nil {
		old.next = p
		c.dirtyBytes -= old.counted
		p.fresh = p.fresh || old.fresh
	} else if old := c.inflight[p.id]; old != nil {
		old.next = p
	}
	c.dirty[p.id] = p
	p.counted = cap(p.raw)
	c.dirtyBytes += p.counted
	c.cond.Broadcast()
	c.signalSaved()
	return p, nil
}

// signalSaved, c.mu held, ends idleIndex's wait.
func (c *commits) signalSaved() {
	if c.idling {
		select {
		case c.saved <- struct{}{}:
		default:
		}
	}
}

// newest returns the newest queued record of run id, or nil.
func (c *commits) newest(id string) *pending {
	if c.cond == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range []map[string]*pending{c.dirty, c.inflight, c.failed} {
		if p := m[id]; p != nil {
			for p.next != nil {
				p = p.next
			}
			return p
		}
	}
	return nil
}

// unsaved returns the newest record of run id not yet committed.
func (c *commits) unsaved(id string) (*runtime.Record, bool) {
	p := c.newest(id)
	if p == nil {
		return nil, false
	}
	p.encode(&c.bufs)
	// Until the commit has dropped raw, it may be packing it into data; once it has, data
	// no longer changes. raw is copied: its buffer is given back once packed.
	c.mu.Lock()
	var stored []byte
	if p.raw != nil {
		stored = bytes.Clone(p.raw)
	} else {
		stored = p.data
	}
	c.mu.Unlock()
	if stored == nil {
		return nil, false
	}
	rec, err := decodeRecord(id, stored)
	return rec, err == nil
}

// unsavedSummary returns the list row of run id's newest record not yet committed.
func (c *commits) unsavedSummary(id string) (Summary, bool) {
	p := c.newest(id)
	if p == nil {
		return Summary{}, false
	}
	p.encode(&c.bufs)
	if !p.encoded {
		return Summary{}, false
	}
	return p.cols.Summary(), true
}

// wait returns once p, or the save that replaced it, is committed.
func (c *commits) wait(p *pending) error {
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
		c.urgent++
		c.hurry()
		c.cond.Wait()
		c.urgent--
	}
}

// mustWait reports whether a save that GroupCommit lets return at once waits for its commit
// all the same: while commits fail, so that its run is reported failed.
func (c *commits) mustWait() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failing != nil
}

// Sync returns once every record saved so far is committed, with the first error a commit
// met since the last Sync.
func (s *SQLite) Sync() error {
	c := &s.commits
	if c.cond == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settle()
}

// settle waits, c.mu held, until every save so far is committed.
func (c *commits) settle() error {
	target := c.seq
	for c.done < target {
		c.urgent++
		c.hurry()
		c.cond.Wait()
		c.urgent--
	}
	if len(c.failed) > 0 && !c.closed { // once closed, no commit comes
		// Records whose commit failed wait for the next commit, which only a save would
		// start: one is started for them now (there may be room again), so that Sync and
		// close write them or say they could not.
		want := c.started + 1
		c.retry = true
		c.cond.Broadcast()
		c.signalSaved()
		for c.ended < want {
			c.urgent++
			c.hurry()
			c.cond.Wait()
			c.urgent--
		}
	}
	err := c.err
	c.err = nil
	return err
}

// hurry, c.mu held, ends the wait of pace.
func (c *commits) hurry() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run commits while the store is open.
func (c *commits) run() {
	defer c.loop.Done()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		for len(c.dirty) == 0 && !c.retry && !c.closed {
			if c.textBehind {
				c.idleIndex()
				continue
			}
			c.cond.Wait()
		}
		if len(c.dirty) == 0 && !c.retry {
			return
		}
		c.pace()
		c.commitOnce()
	}
}

// idleIndex, c.mu held (and let go meanwhile), waits idleAfter for a save, and when none
// came writes idleChunk rows of the text index (the next chunk without waiting again). A
// failure is logged and left to the next text query, which writes the index itself.
func (c *commits) idleIndex() {
	if !c.textMore {
		select { // a signal left from before
		case <-c.saved:
		default:
		}
		c.idling = true
		c.mu.Unlock()
		t := time.NewTimer(idleAfter)
		idle := false
		select {
		case <-t.C:
			idle = true
		case <-c.saved:
			t.Stop()
		}
		c.mu.Lock()
		c.idling = false
		if !idle || len(c.dirty) > 0 || c.closed {
			return
		}
	}
	c.mu.Unlock()
	left, err := c.s.indexText(context.Background(), idleChunk)
	c.mu.Lock()
	if err != nil {
		c.s.log.Warn("the text index could not be written while idle; the next text query writes it", "error", err)
	}
	// A commit meanwhile is this goroutine's: none was.
	c.textBehind = left && err == nil
	c.textMore = c.textBehind
}

// pace waits, c.mu held (and let go meanwhile), until commitEvery has passed since the last
// commit began, unless someone waits for a commit, many records wait, or the store closes.
func (c *commits) pace() {
	wait := commitEvery - time.Since(c.last)
	if wait <= 0 || c.urgent > 0 || c.closed || len(c.dirty) >= maxPending/2 || c.dirtyBytes >= maxPendingBytes/2 {
		return
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

// commitOnce commits the records queued so far, c.mu held (and let go while it writes).
func (c *commits) commitOnce() {
	c.last = time.Now()
	c.started++
	c.retry = false
	batch, upTo := c.dirty, c.seq
	for id, p := range c.failed { // tried again, unless saved again since
		if batch[id] == nil {
			batch[id] = &pending{kind: p.kind, id: id, key: p.key, data: p.data, cols: p.cols, was: p.was, rec: p.rec, fresh: p.fresh}
		}
	}
	for id, p := range batch {
		if c.taken[id] {
			p.err = fmt.Errorf("run %s: %w", id, errIDTaken)
		}
	}
	c.failed = nil
	c.dirty, c.inflight, c.dirtyBytes = map[string]*pending{}, batch, 0
	c.cond.Broadcast() // room for saves waiting past maxPending
	c.mu.Unlock()
	c.write(batch)
	c.mu.Lock()
	c.failing = nil
	for id, p := range batch {
		p.finished = true
		if p.fresh && p.err != nil && p.next != nil {
			// Not written: the save that replaced it (queued while this commit was under
			// way) is still the row's first.
			q := p.next
			for q.next != nil {
				q = q.next
			}
			q.fresh = true
		}
		if errors.Is(p.err, errIDTaken) {
			if c.taken == nil {
				c.taken = map[string]bool{}
			}
			c.taken[id] = true
			c.s.log.Error("a run started with the id of a run in the database: its record was not saved, the run there is kept", "run", id)
			if c.err == nil {
				c.err = p.err
			}
			continue
		}
		if p.err != nil && !errors.Is(p.err, errClaimLost) {
			if c.err == nil {
				c.err = p.err
			}
			c.failing = p.err
			if p.next == nil {
				if c.failed == nil {
					c.failed = map[string]*pending{}
				}
				c.failed[id] = p
			}
		}
	}
	c.inflight = nil
	c.textBehind, c.textMore = true, false
	c.done = upTo
	c.ended++
	c.cond.Broadcast()
}

// runColumns are the columns a record's row is written with, in the order rowArgs gives
// their values.
const runColumns = `id, file, pipeline, status, waiting_for, error_code, error_message, started, updated, cost, violations, search, record, tokens_in, tokens_out, unpriced, key`

// nRunColumns is how many runColumns are.
const nRunColumns = 17

// upsertConflict writes a run's row whatever is there; startConflict writes the row of a
// run that starts only if none of that id is there. A row is the one of its key and id
// (runkey.go).
const (
	upsertConflict = ` ON CONFLICT (key, id) DO UPDATE SET file = excluded.file, pipeline = excluded.pipeline, status = excluded.status,
  waiting_for = excluded.waiting_for, error_code = excluded.error_code, error_message = excluded.error_message,
  started = excluded.started, updated = excluded.updated, cost = excluded.cost, violations = excluded.violations,
  search = excluded.search, record = excluded.record, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
  unpriced = excluded.unpriced`
	startConflict = ` ON CONFLICT (key, id) DO NOTHING`
)

// claimSQL takes a paused run's row while it is as the claim saw it (?18: when it was
// updated).
const claimSQL = `UPDATE halo_runs SET status = ?4, waiting_for = coalesce(?5, ''), error_code = coalesce(?6, ''), error_message = coalesce(?7, ''), updated = ?9,
  cost = ?10, violations = ?11, search = ?12, record = ?13, tokens_in = ?14, tokens_out = ?15, unpriced = ?16
WHERE key = ?17 AND id = ?1 AND status = 'paused' AND updated = ?18`

// A commit writes the rows of its saves, and of its runs that start, with statements of
// many rows each: 1, 2, 4, ... 1<<maxRowsLog2 rows (the binary digits of how many there are),
// each prepared once. One row a statement made every row a segment of halo_runs_text's
// index: FTS5 writes what it has gathered to the database at each statement of a
// transaction (each opens a savepoint), and then merges the segments. With a statement for
// the whole batch, a commit makes one or a few.
const maxRowsLog2 = 10 // 1,024 rows, 17,408 values (SQLite allows 32,766)

// rowsSQL is the statement that writes n rows of kind (putSave or putStart).
func rowsSQL(kind putKind, n int) string { return insertSQL(kind, n, "VALUES ", "") }

// oneSQL is the statement that writes up to n rows of kind (putSave or putStart) in one
// statement of its own, outside a transaction: the rows left unbound (NULL ids, the driver
// clears the values after each statement) are not written. :n, how many are bound, is
// named so that the driver takes fewer values than the statement has; a bound value the
// query plan reads (LIMIT :n) would make SQLite prepare the statement again each time.
func oneSQL(kind putKind, n int) string {
	return insertSQL(kind, n, "SELECT * FROM (VALUES ", ") WHERE column1 IS NOT NULL AND :n > 0")
}

// insertSQL inserts n rows of runColumns' values into halo_runs, the rows between head and
// tail, as kind does on a conflict.
func insertSQL(kind putKind, n int, head, tail string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO halo_runs (" + runColumns + ") " + head)
	row := rowValues
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(row)
	}
	b.WriteString(tail)
	if kind == putStart {
		b.WriteString(startConflict)
	} else {
		b.WriteString(upsertConflict)
	}
	return b.String()
}

// rowValues is one row of runColumns' values in a statement: waiting_for, error_code and
// error_message, empty for most runs, are bound as NULL then (rowArgs), where each bound
// text is an allocation in SQLite's memory and a copy: BenchmarkCommitLayout's store made
// 103,000 and 104,200 instructions a row rather than 106,200 and 109,300 (callgrind,
// GOMAXPROCS=1).
const rowValues = "(?, ?, ?, ?, coalesce(?, ''), coalesce(?, ''), coalesce(?, ''), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

// rowArgs appends p's row's values, in runColumns' order.
func rowArgs(args []any, p *pending) []any {
	k := &p.cols
	return append(args, p.id, k.File, k.Pipeline, k.Status, orNull(k.Waiting), orNull(k.ErrCode), orNull(k.ErrMsg), k.Started.UnixNano(), k.Updated.UnixNano(),
		k.Cost, k.Violations, k.Search, p.data, k.TokensIn, k.TokensOut, k.Unpriced, p.key)
}

// orNull is s, or nil (NULL) when s is empty: see rowValues.
func orNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// chunks returns the statement sizes (as log2 of their rows) that write n rows: the
// largest first.
func chunks(n int) []int {
	var out []int
	for ; n >= 1<<maxRowsLog2; n -= 1 << maxRowsLog2 {
		out = append(out, maxRowsLog2)
	}
	for l := maxRowsLog2 - 1; l >= 0; l-- {
		if n&(1<<l) != 0 {
			out = append(out, l)
		}
	}
	return out
}

// packAll encodes the records of batch that are not yet (runs that start), packs them, and
// gives their JSON's buffers back for the next saves.
func (c *commits) packAll(batch map[string]*pending) {
	for _, p := range batch {
		p.encode(&c.bufs)
		c.packed = p.pack(c.packed)
	}
	if cap(c.packed) > maxKeptBuffer { // a rare large record's
		c.packed = nil
	}
	var done []*recordBuffers
	c.mu.Lock()
	for _, p := range batch {
		if p.buf != nil && p.data != nil {
			done = append(done, p.buf)
			p.raw, p.buf = nil, nil
		}
	}
	c.mu.Unlock()
	for _, b := range done {
		b.release(&c.bufs)
	}
}

// write commits batch in one transaction and sets each record's err. A record that cannot
// be encoded fails alone; a failing statement or commit fails the whole batch, and nothing
// of it is written.
func (c *commits) write(batch map[string]*pending) {
	fail := func(err error) {
		for _, p := range batch {
			if p.err == nil {
				p.err = err
			}
		}
	}
	s := c.s
	var rows [putClaim][]*pending // saves and starts
	var claims []*pending
	c.packAll(batch)
	for _, p := range batch {
		switch {
		case p.err != nil:
		case p.kind == putClaim:
			claims = append(claims, p)
		case p.fresh:
			rows[putStart] = append(rows[putStart], p)
		default:
			rows[p.kind] = append(rows[p.kind], p)
		}
	}
	// Statements are prepared before the transaction, which holds the one connection. The
	// text of one is made only when it is not prepared yet: one of 128 rows is 13 KB, and
	// making it for every commit was most of the bytes a commit allocated.
	prepare := func(st **sql.Stmt, sqlOf func() string) bool {
		if *st != nil {
			return true
		}
		var err error
		if *st, err = s.w.Prepare(sqlOf()); err != nil {
			fail(s.dbErr("save records", err))
			return false
		}
		return true
	}
	// A batch of one kind and no claims, the usual one (halo mcp saves, halo serve's runs
	// that start and stop within a commit), is written by one statement without BEGIN (one
	// for each 1<<maxRowsLog2 rows of a larger batch): the statement is then its own
	// transaction, and SQLite keeps no statement journal for it.
	// In a transaction, each statement that may stop halfway copies every page it changes
	// that was there before into that journal first, in case it must be undone: about a
	// quarter of executing the inserts (docs/mcp.md, "What a call costs").
	if one := oneKind(rows, claims); one >= 0 {
		c.writeOne(putKind(one), rows[one], prepare)
		return
	}
	for kind, ps := range rows {
		for _, l := range chunks(len(ps)) {
			if !prepare(&c.rowStmts[kind][l], func() string { return rowsSQL(putKind(kind), 1<<l) }) {
				return
			}
		}
	}
	if len(claims) > 0 && !prepare(&c.claimStmt, func() string { return claimSQL }) {
		return
	}
	tx, err := s.w.Begin()
	if err != nil {
		fail(s.dbErr("save records", err))
		return
	}
	exec := func(st *sql.Stmt, args []any) (sql.Result, bool) {
		res, err := tx.Stmt(st).Exec(args...)
		if err != nil {
			tx.Rollback()
			fail(s.dbErr("save records", err))
			return nil, false
		}
		return res, true
	}
	args := make([]any, 0, nRunColumns*min(1<<maxRowsLog2, max(len(rows[putSave]), len(rows[putStart]), 1)))
	for kind, ps := range rows {
		for _, l := range chunks(len(ps)) {
			args = args[:0]
			for _, p := range ps[:1<<l] {
				args = rowArgs(args, p)
			}
			res, ok := exec(c.rowStmts[kind][l], args)
			if !ok {
				return
			}
			if n, _ := res.RowsAffected(); kind == int(putStart) && n < 1<<l {
				if err := findTaken(tx, ps[:1<<l]); err != nil {
					tx.Rollback()
					fail(s.dbErr("save records", err))
					return
				}
			}
			ps = ps[1<<l:]
		}
	}
	for _, p := range claims {
		res, ok := exec(c.claimStmt, append(rowArgs(args[:0], p), p.was.UnixNano()))
		if !ok {
			return
		}
		if n, _ := res.RowsAffected(); n == 0 {
			p.err = errClaimLost
		}
	}
	if err := tx.Commit(); err != nil {
		fail(s.dbErr("save records", err))
	}
}

// oneKind returns the kind of every row of rows (putSave or putStart) when they are all of
// one and there is no claim, or -1.
func oneKind(rows [putClaim][]*pending, claims []*pending) int {
	switch {
	case len(claims) > 0:
		return -1
	case len(rows[putStart]) == 0 && len(rows[putSave]) > 0:
		return int(putSave)
	case len(rows[putSave]) == 0 && len(rows[putStart]) > 0:
		return int(putStart)
	}
	return -1
}

// writeOne writes ps, rows of one kind (putSave or putStart), with a statement of up to
// 1<<maxRowsLog2 rows outside a transaction each (oneSQL), and sets each record's err: a
// failing statement fails its rows and those after it, and writes nothing of them.
func (c *commits) writeOne(kind putKind, ps []*pending, prepare func(**sql.Stmt, func() string) bool) {
	s := c.s
	fail := func(ps []*pending, err error) {
		for _, p := range ps {
			if p.err == nil {
				p.err = err
			}
		}
	}
	args := make([]any, 0, nRunColumns*min(len(ps), 1<<maxRowsLog2)+1)
	for len(ps) > 0 {
		part := ps[:min(len(ps), 1<<maxRowsLog2)]
		l := 0
		for 1<<l < len(part) {
			l++
		}
		if !prepare(&c.oneStmts[kind][l], func() string { return oneSQL(kind, 1<<l) }) {
			return // the batch has failed
		}
		args = args[:0]
		for _, p := range part {
			args = rowArgs(args, p)
		}
		res, err := c.oneStmts[kind][l].Exec(append(args, sql.Named("n", len(part)))...)
		if err != nil {
			fail(ps, s.dbErr("save records", err))
			return
		}
		if n, _ := res.RowsAffected(); kind == putStart && n < int64(len(part)) {
			// Written already: what is not is decided from what is there.
			if err := findTaken(s.w, part); err != nil {
				fail(ps, s.dbErr("save records", err))
				return
			}
		}
		ps = ps[len(part):]
	}
}

// findTaken, after a statement that inserts the rows of runs that started wrote fewer than
// all of them, sets errIDTaken on those whose row in tx is not theirs: a row of that id
// was there already.
func findTaken(tx interface {
	QueryRow(string, ...any) *sql.Row
}, ps []*pending) error {
	for _, p := range ps {
		var rec []byte
		if err := tx.QueryRow(`SELECT record FROM halo_runs WHERE key = ? AND id = ?`, p.key, p.id).Scan(&rec); err != nil {
			return err
		}
		if !bytes.Equal(rec, p.data) {
			p.err = fmt.Errorf("run %s: %w", p.id, errIDTaken)
		}
	}
	return nil
}

// unsaved and friends, on the store.
func (s *SQLite) put(rec *runtime.Record, kind putKind) (*pending, error) {
	return s.commits.put(rec, kind)
}

func (s *SQLite) wait(p *pending) error {
	err := s.commits.wait(p)
	if err != nil && !errors.Is(err, errClaimLost) {
		return fmt.Errorf("run %s: the record could not be saved: %w", p.id, err)
	}
	return err
}

func (s *SQLite) unsaved(id string) (*runtime.Record, bool) { return s.commits.unsaved(id) }
func (s *SQLite) unsavedSummary(id string) (Summary, bool)  { return s.commits.unsavedSummary(id) }
