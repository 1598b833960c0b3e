package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio speaks MCP over in and out: one JSON-RPC message per line, as MCP's stdio
// transport says. Requests are served concurrently (at most MaxCalls at once); notifications
// a call sends (progress, logs) are written before its response.
//
// It returns when in ends, ctx is done, or out can no longer be written: the client has
// gone. Runs still going are then cancelled, which stops every process they started and
// saves their records, and ServeStdio returns only once every request it started has
// finished. An ended input is not an error.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ss := newStdioSession(s, out, cancel)
	ctx = s.mcp.WithContext(ctx, ss)
	ctx = server.WithSupportedProtocolVersions(ctx, mcp.ValidProtocolVersions)

	var wg sync.WaitGroup
	wg.Go(func() { ss.forwardNotifications(ctx) })
	pool := newWorkers()
	rd := &stdioReader{s: s, ss: ss, pool: pool, ctx: ctx, br: bufio.NewReaderSize(in, 64<<10), done: make(chan struct{})}
	rd.blocker, _ = in.(ReadBlocker)
	ss.reader = rd
	go rd.read(&readerTurn{})
	select {
	case <-rd.done:
	case <-ctx.Done():
	}
	cancel()
	ss.close()
	pool.stop()
	rd.stopWatch()
	wg.Wait()
	return nil
}

// A ReadBlocker is an input that can wait for its next bytes either in a blocking read(2)
// or in Go's network poller (halo mcp's piped stdin). ServeStdio asks for the blocking read
// while no request runs and for the poller while one does. A wait in the poller is a read
// that finds nothing, the poller's wait and the read again, three system calls where
// read(2) makes one, for each call of a client that waits for each answer; a thread blocked
// in read(2) holds its processor until Go's system monitor hands it on, which costs a
// switch of threads whenever another goroutine wants to run meanwhile (a request on a
// worker).
type ReadBlocker interface {
	// BlockReads makes the reads from now on wait in read(2) (true) or in the poller.
	BlockReads(block bool)
}

// handOffAfter is how long a request runs on the stdio reader's goroutine, at least, before
// another goroutine takes over the reading; at most twice as long.
const handOffAfter = time.Millisecond

// A stdioReader reads ServeStdio's input and dispatches each message. A request runs on the
// reader's own goroutine when no more input is waiting: handing it to a worker woke a
// second thread for every call, and a call of a short pipeline from one client then cost
// about a fifth more processor time (docs/mcp.md, "What a call costs"). So that the input is
// still read while such a request runs (a cancellation, the client's answer to a request of
// the server's, more requests), a request still running after handOffAfter, or one that
// waits for the client (stdioSession.call), hands the reading to a new goroutine; the old
// one ends with its request. One timer watches the requests run so: arming a timer for each
// woke a thread for each (the runtime's poller, to wait for the new deadline).
//
// The reader goroutines are not waited for: one reads at a time, and it ends when in does
// (the caller owns in and closes it, or the process exits); once ServeStdio has ended it
// dispatches nothing. The requests they run are counted in the pool, which ServeStdio waits for.
type stdioReader struct {
	s    *Server
	ss   *stdioSession
	pool *workers
	ctx  context.Context
	br   *bufio.Reader
	// done is closed by the reader that meets the end of the input.
	done chan struct{}
	// turn is the turn of the goroutine that reads now, or last read.
	turn atomic.Pointer[readerTurn]
	// jobs counts the requests run on a reader's goroutine; the watch timer is armed while
	// one may run, and seen is the count when it was last armed.
	jobs        atomic.Uint64
	watchTimer  *time.Timer
	armed       atomic.Bool
	seen        atomic.Uint64
	startTimers sync.Once
	// blocker is the input's, when it can block its reads; running counts the requests
	// running, on the reader's goroutine or a worker.
	blocker ReadBlocker
	running atomic.Int32
}

// A readerTurn is one goroutine's turn at reading: its state says whether it reads, runs a
// request, or has handed the reading on (then it never reads again).
type readerTurn struct{ state atomic.Int32 }

const (
	turnReading int32 = iota
	turnRunning
	turnHandedOff
)

// read reads and dispatches messages until the input ends or the turn is handed off.
func (rd *stdioReader) read(t *readerTurn) {
	rd.turn.Store(t)
	for {
		if rd.blocker != nil && rd.br.Buffered() == 0 {
			rd.blocker.BlockReads(rd.running.Load() == 0)
		}
		r := readMessage(rd.br, rd.s.cfg.MaxRequestBytes)
		var job func()
		if r.tooLong > 0 {
			rd.ss.write(errorMessage(guessID(r.head, r.tail), mcp.INVALID_REQUEST,
				fmt.Sprintf("the message is %d bytes, over the limit of %d [%s]", r.tooLong, rd.s.cfg.MaxRequestBytes, CodeTooLarge)))
		} else if len(bytes.TrimSpace(r.line)) > 0 {
			if !rd.ss.serve(func() { job = rd.s.dispatch(rd.ctx, rd.ss, r.line) }) {
				close(rd.done)
				return
			}
		}
		if job != nil && r.err != nil {
			rd.pool.run(rd.counted(job)) // the input ends with it: nothing more to read
		} else if job != nil && !rd.runHere(t, job) {
			return // another goroutine reads now
		}
		if r.err != nil {
			if !errors.Is(r.err, io.EOF) {
				rd.s.log.Debug("stdio input ended", "error", r.err)
			}
			close(rd.done)
			return
		}
	}
}

// runHere runs job on the reader's goroutine, or on a worker when more input waits (or the
// pool has stopped), and reports whether this goroutine still reads.
func (rd *stdioReader) runHere(t *readerTurn, job func()) bool {
	if rd.br.Buffered() > 0 || !rd.pool.hold() {
		rd.pool.run(rd.counted(job))
		return true
	}
	n := rd.jobs.Add(1)
	t.state.Store(turnRunning)
	if rd.armed.CompareAndSwap(false, true) {
		rd.arm(n)
	}
	rd.running.Add(1)
	job()
	rd.running.Add(-1)
	rd.pool.release()
	return t.state.CompareAndSwap(turnRunning, turnReading)
}

// counted returns job counted in running while it runs.
func (rd *stdioReader) counted(job func()) func() {
	rd.running.Add(1)
	return func() {
		defer rd.running.Add(-1)
		job()
	}
}

// arm sets the watch timer off, for the request numbered n or a later one.
func (rd *stdioReader) arm(n uint64) {
	rd.seen.Store(n)
	rd.startTimers.Do(func() { rd.watchTimer = time.AfterFunc(handOffAfter, rd.watch) })
	rd.watchTimer.Reset(handOffAfter)
}

// watch hands the reading on when the request that ran when the timer was armed still runs,
// and otherwise arms the timer again while one runs.
func (rd *stdioReader) watch() {
	t := rd.turn.Load()
	if t.state.Load() == turnRunning {
		n := rd.jobs.Load()
		if n != rd.seen.Load() {
			rd.arm(n) // a later request: its time starts now
			return
		}
		rd.handOff(t)
	}
	rd.armed.Store(false)
	// A request that began since the state was read found the timer armed: watch it.
	if t := rd.turn.Load(); t.state.Load() == turnRunning && rd.armed.CompareAndSwap(false, true) {
		rd.arm(rd.jobs.Load())
	}
}

// stopWatch stops the watch timer, once no request runs on a reader's goroutine.
func (rd *stdioReader) stopWatch() {
	rd.startTimers.Do(func() {})
	if rd.watchTimer != nil {
		rd.watchTimer.Stop()
	}
}

// handOff starts a new reader if turn t is running a request.
func (rd *stdioReader) handOff(t *readerTurn) {
	if t.state.CompareAndSwap(turnRunning, turnHandedOff) {
		go rd.read(&readerTurn{})
	}
}

// yield hands the reading on at once if the reader's goroutine runs a request: one that waits
// for the client.
func (rd *stdioReader) yield() {
	if t := rd.turn.Load(); t != nil {
		rd.handOff(t)
	}
}

// dispatch handles one message: a response to a request the server sent, a notification
// (at once, in order), or a request, whose serving it returns (nil for the others).
func (s *Server) dispatch(ctx context.Context, ss *stdioSession, line []byte) func() {
	if fc, ok := s.parseFastCall(line); ok && !ss.canElicit() {
		return s.request(ctx, ss, fc.rawID, func(rctx context.Context) any { return s.serveFast(rctx, fc) })
	}
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("[")) {
			ss.write(errorMessage(nil, mcp.INVALID_REQUEST, "batches are not supported over stdio: send one message per line"))
			return nil
		}
		ss.write(errorMessage(nil, mcp.PARSE_ERROR, "the message is not JSON: "+err.Error()))
		return nil
	}
	id := idKey(head.ID)
	switch {
	case head.Method == "" && (head.Result != nil || head.Error != nil):
		ss.deliver(id, line)
	case head.Method == "":
		ss.write(errorMessage(head.ID, mcp.INVALID_REQUEST, "a request needs a method"))
	case id == "":
		if head.Method == string(mcp.MethodNotificationCancelled) {
			var n struct {
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &n) == nil {
				ss.cancelRequest(idKey(n.Params.RequestID))
			}
		}
		s.mcp.HandleMessage(ctx, line)
	default:
		return s.request(ctx, ss, head.ID, func(rctx context.Context) any { return s.mcp.HandleMessage(rctx, line) })
	}
	return nil
}

// request returns the serving of a request: serve answers it (nil for no answer), unless
// the client cancels it meanwhile. It returns nil, having answered, when MaxCalls are being
// served.
func (s *Server) request(ctx context.Context, ss *stdioSession, rawID json.RawMessage, serve func(context.Context) any) func() {
	id := idKey(rawID)
	rctx, ok := ss.start(ctx, id)
	if !ok {
		ss.write(errorMessage(rawID, mcp.INTERNAL_ERROR, fmt.Sprintf("%d requests are being served, the most at once; try again when one ends [%s]", s.cfg.MaxCalls, CodeBusy)))
		return nil
	}
	return func() {
		resp := serve(rctx)
		if ss.finish(id) && resp != nil {
			ss.write(resp)
		}
	}
}

// idKey is a JSON-RPC id as a map key: its JSON text; "" for none or null.
func idKey(raw json.RawMessage) string {
	t := string(bytes.TrimSpace(raw))
	if t == "null" {
		return ""
	}
	return t
}

func errorMessage(id json.RawMessage, code int, msg string) map[string]any {
	var idv any
	if len(id) > 0 {
		idv = id
	}
	return map[string]any{"jsonrpc": "2.0", "id": idv, "error": map[string]any{"code": code, "message": msg}}
}

// A readResult is one line of input: the line, or for one over the limit its length and
// its first and last bytes (to find its id), and the read error that ended the input.
type readResult struct {
	line       []byte
	tooLong    int64
	head, tail []byte
	err        error
}

const keep = 1 << 10

// readMessage reads one line of at most max bytes. A longer line is read to its end but
// not kept.
func readMessage(br *bufio.Reader, max int64) readResult {
	var r readResult
	var buf []byte
	var n int64
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		switch {
		case r.tooLong == 0 && n <= max+1:
			buf = append(buf, chunk...)
		case r.tooLong == 0:
			buf = append(buf, chunk...)
			r.head = append([]byte(nil), buf[:min(len(buf), keep)]...)
			r.tooLong = n
			buf = nil
			r.tail = lastBytes(nil, chunk)
		default:
			r.tooLong = n
			r.tail = lastBytes(r.tail, chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		r.err = err
		if r.tooLong == 0 {
			r.line = buf
		}
		return r
	}
}

// lastBytes keeps the last keep bytes of prev followed by b.
func lastBytes(prev, b []byte) []byte {
	if len(b) >= keep {
		return append([]byte(nil), b[len(b)-keep:]...)
	}
	out := append(prev, b...)
	if len(out) > keep {
		out = append([]byte(nil), out[len(out)-keep:]...)
	}
	return out
}

var idPattern = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.){0,128}")`)

// guessID finds the id of a message too large to read whole, so the error can answer it:
// the top-level "id" before "params" at its start, or the last one at its end (clients write
// it first or last). nil when neither is found.
func guessID(head, tail []byte) json.RawMessage {
	h := head
	if i := bytes.Index(h, []byte(`"params"`)); i >= 0 {
		h = h[:i]
	}
	if m := idPattern.FindSubmatch(h); m != nil {
		return m[1]
	}
	if i := bytes.LastIndex(tail, []byte(`}`)); i >= 0 {
		ms := idPattern.FindAllSubmatch(tail[:i], -1)
		if len(ms) > 0 {
			return ms[len(ms)-1][1]
		}
	}
	return nil
}

// A stdioSession is the one client of a stdio connection, as mcp-go's server sees it.
type stdioSession struct {
	s *Server
	// reader reads the connection's input.
	reader *stdioReader
	// serving guards closed: once ServeStdio ends, the reader dispatches nothing more.
	serving sync.Mutex
	closed  bool

	w      io.Writer
	wmu    sync.Mutex
	broken atomic.Bool
	gone   context.CancelFunc

	initialized atomic.Bool
	notes       chan mcp.JSONRPCNotification
	nextID      atomic.Int64

	mu       sync.Mutex
	level    mcp.LoggingLevel
	info     mcp.Implementation
	caps     mcp.ClientCapabilities
	version  string
	inflight map[string]*request
	pending  map[string]chan json.RawMessage
}

type request struct {
	cancel    context.CancelFunc
	cancelled bool
}

func newStdioSession(s *Server, w io.Writer, gone context.CancelFunc) *stdioSession {
	return &stdioSession{s: s, w: w, gone: gone, notes: make(chan mcp.JSONRPCNotification, 64),
		inflight: map[string]*request{}, pending: map[string]chan json.RawMessage{}}
}

// serve runs dispatch unless ServeStdio has ended; false when it has.
func (ss *stdioSession) serve(dispatch func()) bool {
	ss.serving.Lock()
	defer ss.serving.Unlock()
	if ss.closed {
		return false
	}
	dispatch()
	return true
}

func (ss *stdioSession) close() {
	ss.serving.Lock()
	defer ss.serving.Unlock()
	ss.closed = true
}

// write sends one message as one line. When out fails the client is gone: the session
// stops, which cancels what is running.
func (ss *stdioSession) write(msg any) error {
	b, err := marshalMessage(msg)
	if err != nil {
		ss.s.log.Error("cannot encode a message", "error", err)
		return err
	}
	b = append(b, '\n')
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	if ss.broken.Load() {
		return io.ErrClosedPipe
	}
	if _, err := ss.w.Write(b); err != nil {
		ss.broken.Store(true)
		ss.gone()
		return err
	}
	return nil
}

// start records a request being served; false when MaxCalls are.
func (ss *stdioSession) start(ctx context.Context, id string) (context.Context, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.inflight) >= ss.s.cfg.MaxCalls {
		return nil, false
	}
	rctx, cancel := context.WithCancel(ctx)
	if old := ss.inflight[id]; old != nil {
		// A client reusing an id still in flight: the new request replaces it in the table,
		// and cancelling the id cancels the newest.
		old.cancel()
	}
	ss.inflight[id] = &request{cancel: cancel}
	return rctx, true
}

// finish forgets a request; false when the client cancelled it (it gets no response).
func (ss *stdioSession) finish(id string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	r := ss.inflight[id]
	if r == nil {
		return true
	}
	delete(ss.inflight, id)
	r.cancel()
	return !r.cancelled
}

// cancelRequest cancels a request the client gave up on (notifications/cancelled).
func (ss *stdioSession) cancelRequest(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if r := ss.inflight[id]; r != nil {
		r.cancelled = true
		r.cancel()
	}
}

func (ss *stdioSession) forwardNotifications(ctx context.Context) {
	for {
		select {
		case n := <-ss.notes:
			ss.write(n)
		case <-ctx.Done():
			return
		}
	}
}

// notify writes a notification now, so it reaches the client before the response of the
// call that sent it.
func (ss *stdioSession) notify(method string, params map[string]any) error {
	return ss.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends the client a request and waits for its response's result.
func (ss *stdioSession) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := ss.nextID.Add(1)
	key := strconv.FormatInt(id, 10)
	ch := make(chan json.RawMessage, 1)
	ss.mu.Lock()
	ss.pending[key] = ch
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.pending, key)
		ss.mu.Unlock()
	}()
	if err := ss.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	if ss.reader != nil {
		ss.reader.yield() // the answer is read by the reader, which may be this goroutine
	}
	select {
	case raw := <-ch:
		var resp struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			return nil, fmt.Errorf("%s: unreadable response: %w", method, err)
		}
		if resp.Error != nil {
			return nil, fmt.Errorf("%s: the client answered error %d: %s", method, resp.Error.Code, resp.Error.Message)
		}
		return resp.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands a response to the request of the server's that waits for it.
func (ss *stdioSession) deliver(id string, raw []byte) {
	ss.mu.Lock()
	ch := ss.pending[id]
	ss.mu.Unlock()
	if ch == nil {
		ss.s.log.Debug("a response to no request of the server's", "id", id)
		return
	}
	select {
	case ch <- append(json.RawMessage(nil), raw...):
	default:
	}
}

// RequestElicitation asks the client to ask its user (elicitation/create).
func (ss *stdioSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := ss.call(ctx, string(mcp.MethodElicitationCreate), req.Params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("elicitation/create: unreadable result: %w", err)
	}
	return &res, nil
}

// canElicit reports whether the client said at initialize that it can ask its user.
func (ss *stdioSession) canElicit() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return formElicitation(&ss.caps)
}

func (ss *stdioSession) SessionID() string                                   { return "stdio" }
func (ss *stdioSession) Initialize()                                         { ss.initialized.Store(true) }
func (ss *stdioSession) Initialized() bool                                   { return ss.initialized.Load() }
func (ss *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return ss.notes }

func (ss *stdioSession) SetLogLevel(level mcp.LoggingLevel) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.level = level
}

func (ss *stdioSession) GetLogLevel() mcp.LoggingLevel {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.level
}

func (ss *stdioSession) GetClientInfo() mcp.Implementation {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.info
}

func (ss *stdioSession) SetClientInfo(info mcp.Implementation) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.info = info
}

func (ss *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.caps
}

func (ss *stdioSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.caps = caps
}

// SetProtocolVersion and ProtocolVersion keep the version initialize agreed on.
func (ss *stdioSession) SetProtocolVersion(v string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.version = v
}

func (ss *stdioSession) ProtocolVersion() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.version
}

var (
	_ server.SessionWithLogging     = (*stdioSession)(nil)
	_ server.SessionWithClientInfo  = (*stdioSession)(nil)
	_ server.SessionWithElicitation = (*stdioSession)(nil)
	_ notifier                      = (*stdioSession)(nil)
)
