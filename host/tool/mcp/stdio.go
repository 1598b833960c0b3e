package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/tool"
)

// Why our own stdio transport rather than mcp-go's transport.Stdio:
//
//   - transport.Stdio's default command appends os.Environ() to the environment it is
//     given, so every host secret would reach the server. Its CommandFunc hook avoids that,
//     but the transport still signals only the leader process on Close (an `npx` server's
//     node child survives), and whether its server is still running is not exported, so a
//     server that exited between two calls is found out only by a failed request.
//   - here the server starts the way plugins do (proc.go): in a session of its own, with a
//     parent-death signal, no capabilities, no_new_privs and the plugins' seccomp filter; its
//     environment is exactly Config.Env, and we own the pipes: the read loop ending is the
//     liveness signal the provider uses to restart a server that exited.
//   - each message is decoded once, and a write gives up at the call's deadline when the
//     server stops reading its input.
//   - a message is bounded (Config.MaxResultBytes, and tool.MaxDepth of nesting), and an
//     answer that breaks a limit or is not JSON fails the call it answers at once.
//   - the read loop never waits: notification handlers must not block (the provider's queue
//     progress), and answers to the server's own requests are written from goroutines of
//     their own, so no answer waits behind a slow reader or a full pipe.
//
// It implements mcp-go's transport.Interface, so the mcp-go client runs over it unchanged.

// Shutdown timing: stdin is closed first (the MCP way to ask a stdio server to exit), then
// the group is sent SIGTERM, then SIGKILL.
const (
	gracefulExit = 1 * time.Second
	termExit     = 2 * time.Second
	stderrTail   = 4 << 10
)

// errServerExited is the cause of every call that meets a server that is gone.
var errServerExited = errors.New("the MCP server exited")

type stdioTransport struct {
	name    string // the declared tool, for messages
	argv    []string
	env     []string
	dir     string
	logger  hclog.Logger
	maxLine int // the longest message the server may send, in bytes
	sandbox *Confinement

	cmd     *exec.Cmd
	stdin   *os.File
	stdout  *os.File
	stderr  *os.File
	writeMu sync.Mutex

	mu        sync.Mutex
	pending   map[string]chan reply
	onNotify  func(mcp.JSONRPCNotification)
	onRequest transport.RequestHandler

	done    chan struct{} // closed when the server's stdout has ended
	endErr  error         // why reading stopped, when the server broke a limit; set before done is closed
	exited  chan struct{} // closed when the process has been waited for
	exitErr error         // set before exited is closed

	tailMu sync.Mutex
	tail   []byte // the last bytes of stderr, for error messages

	handlerCtx    context.Context // for requests the server sends us; cancelled on Close
	cancelHandler context.CancelFunc
	wg            sync.WaitGroup // the read, stderr, wait and handler goroutines
	closeOnce     sync.Once
	closeErr      error
}

var _ transport.BidirectionalInterface = (*stdioTransport)(nil)

// reply is what a pending request gets: the server's response, or why the answer that came
// cannot be read (too large, too deep, not JSON).
type reply struct {
	resp *transport.JSONRPCResponse
	err  error
}

// lineDepth is how deeply a message line may nest: the value inside it may nest
// tool.MaxDepth levels, below the envelope ({"result": {"structuredContent": ...}}).
const lineDepth = tool.MaxDepth + 4

func newStdioTransport(cfg Config, logger hclog.Logger) *stdioTransport {
	env := make([]string, 0, len(cfg.Env))
	for k, v := range cfg.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	ctx, cancel := context.WithCancel(context.Background())
	maxLine := cfg.MaxResultBytes
	if maxLine <= 0 {
		maxLine = tool.DefaultMaxResultBytes
	}
	return &stdioTransport{
		name:          cfg.Name,
		sandbox:       cfg.Sandbox,
		argv:          cfg.Command,
		env:           env,
		dir:           cfg.Dir,
		logger:        logger,
		maxLine:       maxLine,
		pending:       map[string]chan reply{},
		done:          make(chan struct{}),
		exited:        make(chan struct{}),
		handlerCtx:    ctx,
		cancelHandler: cancel,
	}
}

// lookPath finds name the way a shell would with the server's own PATH, never the host's.
func lookPath(name, path, dir string) (string, error) {
	if strings.ContainsRune(name, '/') {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		if err := isExecutable(p); err != nil {
			return "", err
		}
		return name, nil
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found in the server's PATH (%s)", name, path)
}

func isExecutable(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// Start starts the server process. The context is not kept: a server outlives the call
// that started it and is stopped by Close.
func (t *stdioTransport) Start(context.Context) error {
	pathVar := ""
	for _, kv := range t.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	// Checked first: starting in a missing folder fails with ENOENT, which exec reports as
	// the command not being found.
	if t.dir != "" {
		if st, err := os.Stat(t.dir); err != nil || !st.IsDir() {
			msg := "no such folder"
			if err == nil {
				msg = "not a folder"
			} else if !errors.Is(err, fs.ErrNotExist) {
				msg = err.Error()
			}
			return &tool.Error{Code: tool.CodeToolConfig, Message: fmt.Sprintf("cannot start the MCP server: cwd %s: %s", t.dir, msg), Err: err}
		}
	}
	path, err := lookPath(t.argv[0], pathVar, t.dir)
	if err != nil {
		return &tool.Error{Code: tool.CodeToolConfig, Message: "cannot start the MCP server: " + err.Error(), Err: err}
	}
	argv := t.argv
	if t.sandbox != nil {
		if path, argv, err = t.sandbox.wrap(path, argv, t.dir); err != nil {
			return &tool.Error{Code: tool.CodeToolConfig, Message: "cannot confine the MCP server: " + err.Error(), Err: err}
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return err
	}
	t.cmd = &exec.Cmd{
		Path:        path,
		Args:        argv,
		Env:         t.env,
		Dir:         t.dir,
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: sysProcAttr(),
	}
	err = startServer(t.cmd, t.exited)
	// The child has its own copies now; ours would keep the pipes open after it exits.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return &tool.Error{Code: tool.CodeToolConfig, Message: "cannot start the MCP server: " + err.Error(), Err: err}
	}
	t.stdin, t.stdout, t.stderr = inW, outR, errR
	t.wg.Add(3)
	go t.wait()
	go t.readLoop()
	go t.stderrLoop()
	return nil
}

func (t *stdioTransport) wait() {
	defer t.wg.Done()
	t.exitErr = t.cmd.Wait()
	close(t.exited)
	// What the server left behind in its group (the node process behind npx, a helper it
	// forked) may hold its stdout open: then the read loop would never see the end, and a
	// call in flight would wait for its whole timeout for an answer nobody will write. The
	// group goes with its leader, so stdout ends as soon as the pipe is drained.
	if err := syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.logger.Debug("stopping what the exited server left in its process group", "error", err)
	}
}

// alive reports whether the server process is still running and its stdout open.
func (t *stdioTransport) alive() bool {
	select {
	case <-t.done:
		return false
	case <-t.exited:
		return false
	default:
		return true
	}
}

// pid is the server's process id, which is also its process group id.
func (t *stdioTransport) pid() int { return t.cmd.Process.Pid }

// stderrText returns the last lines the server wrote to stderr.
func (t *stdioTransport) stderrText() string {
	t.tailMu.Lock()
	defer t.tailMu.Unlock()
	return strings.TrimSpace(string(t.tail))
}

// exitText says how the server ended, with its last stderr lines, for error messages.
func (t *stdioTransport) exitText() string {
	var b strings.Builder
	select {
	case <-t.exited:
		if t.exitErr != nil {
			fmt.Fprintf(&b, " (%v)", t.exitErr)
		} else {
			b.WriteString(" (exit status 0)")
		}
	case <-time.After(100 * time.Millisecond):
	}
	if s := t.stderrText(); s != "" {
		b.WriteString("; its stderr ends with: ")
		b.WriteString(s)
	}
	return b.String()
}

// readLoop reads one JSON-RPC message per line until the server's stdout ends, or until
// the server sends a line longer than the limit: then the server is stopped (the stream
// cannot be read past such a line) and every call waiting on it fails with TOOL_LIMIT.
func (t *stdioTransport) readLoop() {
	defer t.wg.Done()
	defer close(t.done)
	// A large buffer lets a 16 KB result arrive in one read and be decoded from the
	// buffer without copying it line by line.
	br := bufio.NewReaderSize(t.stdout, 256<<10)
	// A line longer than the buffer is kept as the buffer-sized pieces it came in and joined
	// once at its end: growing one slice as it comes would allocate several times the line.
	var long [][]byte
	longLen := 0
	for {
		line, err := br.ReadSlice('\n')
		if longLen+len(line) > t.maxLine+1 { // +1: the newline
			t.endErr = tool.LimitError("MCP tool %s: the server sent a message longer than %s (%s: raises the limit); the server was stopped and starts again on the next call",
				t.name, tool.Size(t.maxLine), tool.MaxResultOption)
			t.logger.Debug("the server sent a message over the limit; stopping it", "limit", t.maxLine)
			_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
			return
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, bytes.Clone(line))
			longLen += len(line)
			continue
		}
		if long != nil {
			joined := make([]byte, 0, longLen+len(line))
			for _, piece := range long {
				joined = append(joined, piece...)
			}
			line = append(joined, line...)
			long, longLen = nil, 0
		}
		if len(bytes.TrimSpace(line)) > 0 {
			t.dispatch(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				t.logger.Debug("reading the MCP server's stdout", "error", err)
			}
			return
		}
	}
}

// message is any JSON-RPC message, decoded once.
type message struct {
	ID     *mcp.RequestId           `json:"id,omitempty"`
	Method string                   `json:"method,omitempty"`
	Params json.RawMessage          `json:"params,omitempty"`
	Result json.RawMessage          `json:"result,omitempty"`
	Error  *mcp.JSONRPCErrorDetails `json:"error,omitempty"`
}

// dispatch hands one message line to whoever waits for it. It never blocks: it runs on the
// read loop, and every answer behind it waits until it returns.
func (t *stdioTransport) dispatch(line []byte) {
	if tool.DepthExceeds(line, lineDepth) {
		t.fail(line, tool.LimitError("MCP tool %s: the server's answer nests objects and arrays more than %d deep", t.name, tool.MaxDepth))
		return
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		t.logger.Debug("the MCP server wrote a line that is not JSON-RPC", "line", truncate(string(line), 200))
		t.fail(line, tool.Errorf(tool.CodeToolError, "MCP tool %s: the server's answer is not valid JSON-RPC: %v", t.name, err))
		return
	}
	switch {
	case m.Method != "" && m.ID == nil:
		var n mcp.JSONRPCNotification
		if json.Unmarshal(line, &n) != nil {
			return
		}
		t.mu.Lock()
		h := t.onNotify
		t.mu.Unlock()
		if h != nil {
			h(n)
		}
	case m.Method != "":
		t.mu.Lock()
		h := t.onRequest
		t.mu.Unlock()
		req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID, Method: m.Method, Params: m.Params}
		// Answered from a goroutine of its own: writing may wait for the server to read
		// its input, and the server may be waiting for us to read its output.
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			if h == nil {
				t.respond(*transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "no handler for "+m.Method, nil))
				return
			}
			resp, err := h(t.handlerCtx, req)
			if err != nil {
				t.respond(*transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil))
				return
			}
			if resp != nil {
				t.respond(*resp)
			}
		}()
	case m.ID != nil:
		t.deliver(*m.ID, reply{resp: &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: *m.ID, Result: m.Result, Error: m.Error}})
	}
}

// deliver hands r to the request with id id, if one waits for it.
func (t *stdioTransport) deliver(id mcp.RequestId, r reply) {
	key := id.String()
	t.mu.Lock()
	ch, ok := t.pending[key]
	delete(t.pending, key)
	t.mu.Unlock()
	if ok {
		ch <- r // capacity 1, and the entry is gone: never blocks
	}
}

// fail answers the request a line that cannot be read was meant for with err, so the call
// fails now instead of at its timeout. The id is found without decoding the line.
func (t *stdioTransport) fail(line []byte, err error) {
	raw, ok := tool.TopLevelField(line, "id")
	if _, isRequest := tool.TopLevelField(line, "method"); isRequest {
		// The server's own request or notification: its id is in the server's numbering,
		// not an answer to one of ours.
		ok = false
	}
	if !ok {
		t.logger.Debug("dropped a message from the server", "error", err)
		return
	}
	var id mcp.RequestId
	if json.Unmarshal(raw, &id) != nil || id.IsNil() {
		return
	}
	t.deliver(id, reply{err: err})
}

func (t *stdioTransport) respond(resp transport.JSONRPCResponse) {
	b, err := json.Marshal(resp)
	if err != nil {
		t.logger.Debug("encoding a response to the MCP server", "error", err)
		return
	}
	if err := t.write(t.handlerCtx, b); err != nil {
		t.logger.Debug("writing a response to the MCP server", "error", err)
	}
}

// stderrLoop logs what the server writes to stderr and keeps its tail. It never stops
// reading while the server runs: a full pipe would block the server.
func (t *stdioTransport) stderrLoop() {
	defer t.wg.Done()
	br := bufio.NewReaderSize(t.stderr, 4<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			t.tailMu.Lock()
			t.tail = append(t.tail, line...)
			if len(t.tail) > stderrTail {
				t.tail = append([]byte(nil), t.tail[len(t.tail)-stderrTail:]...)
			}
			t.tailMu.Unlock()
			if s := strings.TrimRight(string(line), "\r\n"); s != "" {
				t.logger.Debug("server stderr", "line", s)
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// write sends one message line. A server that stops reading its input fills the pipe and
// would block the write forever: the write gives up at ctx's deadline, and since part of
// the line may already be in the pipe the stream is beyond repair, so the server is
// stopped too (the next call starts it again).
func (t *stdioTransport) write(ctx context.Context, b []byte) error {
	b = append(b, '\n')
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if err := ctx.Err(); err != nil {
		// The caller gave up while waiting for its turn: nothing was written, and nothing
		// is wrong with the server.
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = t.stdin.SetWriteDeadline(dl)
		defer t.stdin.SetWriteDeadline(time.Time{})
	}
	n, err := t.stdin.Write(b)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if n > 0 {
			// Part of the line is in the pipe: the stream is beyond repair.
			_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		}
		return fmt.Errorf("the MCP server stopped reading its input: %w", context.DeadlineExceeded)
	}
	return err
}

// SendRequest writes one request and waits for its response.
func (t *stdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	select {
	case <-t.done:
		return nil, fmt.Errorf("%w before %s was sent: %w", errServerExited, req.Method, errNotSent)
	default:
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", req.Method, err)
	}
	key := req.ID.String()
	ch := make(chan reply, 1)
	t.mu.Lock()
	t.pending[key] = ch
	t.mu.Unlock()
	forget := func() {
		t.mu.Lock()
		delete(t.pending, key)
		t.mu.Unlock()
	}
	if err := t.write(ctx, b); err != nil {
		forget()
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: write %s request: %v: %w", errServerExited, req.Method, err, errNotSent)
	}
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-t.done:
		// The response may have arrived just before stdout ended.
		select {
		case r := <-ch:
			return r.resp, r.err
		default:
		}
		forget()
		if t.endErr != nil {
			return nil, t.endErr
		}
		return nil, errServerExited
	}
}

// SendNotification writes one notification.
func (t *stdioTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	select {
	case <-t.done:
		return errServerExited
	default:
	}
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s notification: %w", n.Method, err)
	}
	return t.write(ctx, b)
}

// SetNotificationHandler sets who receives the server's notifications.
func (t *stdioTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.mu.Lock()
	t.onNotify = h
	t.mu.Unlock()
}

// SetRequestHandler sets who answers the server's requests (ping, roots, sampling).
func (t *stdioTransport) SetRequestHandler(h transport.RequestHandler) {
	t.mu.Lock()
	t.onRequest = h
	t.mu.Unlock()
}

// GetSessionId returns "": stdio has no session id.
func (t *stdioTransport) GetSessionId() string { return "" }

// Close stops the server and its whole process group, then waits for every goroutine the
// transport started. It is safe to call more than once.
func (t *stdioTransport) Close() error {
	t.closeOnce.Do(func() {
		if t.cmd == nil || t.cmd.Process == nil {
			return
		}
		pgid := t.cmd.Process.Pid
		// Not under writeMu: a writer blocked on a full pipe (a server that stopped reading)
		// holds it, and closing is what unblocks that writer.
		t.stdin.Close()
		select {
		case <-t.exited:
		case <-time.After(gracefulExit):
			t.logger.Debug("the server did not exit when its stdin closed; terminating it")
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-t.exited:
			case <-time.After(termExit):
			}
		}
		// Whatever is left of the group (an npx child, a helper the server forked) goes
		// too, so nothing holds the pipes open or outlives the host.
		if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.closeErr = fmt.Errorf("kill the MCP server's process group: %w", err)
		}
		<-t.exited
		// A process that left the group could still hold stdout or stderr; closing our ends
		// makes sure the read loops end.
		t.stdout.Close()
		t.stderr.Close()
		t.cancelHandler()
		t.wg.Wait()
	})
	return t.closeErr
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
