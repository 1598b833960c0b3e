package wire

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// The calls socket (plugin.proto, "The calls socket"): the Calls stream's messages on a Unix
// socket of their own, read and written by the goroutines that use them, so a call crosses
// no gRPC goroutine on its way in or out.

// EnableCallsSocket lets the host open calls sockets in dir (the folder go-plugin's
// PLUGIN_UNIX_SOCKET_DIR names), each opened by a connection whose first frame is token.
func (s *Server) EnableCallsSocket(dir, token string) {
	s.socketDir, s.token = dir, token
}

// WaitCallsSockets waits until every calls socket has ended, its calls with it. The host ends
// them by closing its side, or by stopping the process.
func (s *Server) WaitCallsSockets() { s.sockets.Wait() }

// OpenCallsSocket listens on a new socket in the socket folder and serves the first
// connection that sends the secret.
func (s *Server) OpenCallsSocket(context.Context, *pluginv1.OpenCallsSocketRequest) (*pluginv1.OpenCallsSocketResponse, error) {
	if s.socketDir == "" {
		return nil, status.Error(codes.Unimplemented, "this plugin was not started with a socket folder")
	}
	var b [5]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, status.Errorf(codes.Internal, "calls socket: %v", err)
	}
	path := filepath.Join(s.socketDir, "calls"+hex.EncodeToString(b[:]))
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "calls socket: %v", err)
	}
	// Only this user may connect (the folder is the host's, 0700, too).
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, status.Errorf(codes.Unavailable, "calls socket: %v", err)
	}
	s.sockets.Add(1)
	go func() {
		defer s.sockets.Done()
		conn := s.acceptHost(ln)
		ln.Close()
		if conn == nil {
			s.logger.Warn("no host connected to the calls socket; calls go on the Calls stream")
			return
		}
		s.serveSocket(conn)
	}()
	return &pluginv1.OpenCallsSocketResponse{Path: path}, nil
}

// acceptHost accepts connections until one sends the secret, and returns it; nil when none
// did in time. A connection that sends anything else is closed: a process that found the
// socket cannot hold it, nor learn anything from it.
func (s *Server) acceptHost(ln *net.UnixListener) net.Conn {
	deadline := time.Now().Add(pluginv1.CallsSocketAcceptTimeout)
	if err := ln.SetDeadline(deadline); err != nil {
		return nil
	}
	want := []byte(s.token)
	for {
		conn, err := ln.Accept()
		if err != nil {
			return nil
		}
		// A connection that sends nothing holds up the next one at most a second.
		connDeadline := time.Now().Add(time.Second)
		if deadline.Before(connDeadline) {
			connDeadline = deadline
		}
		_ = conn.SetDeadline(connDeadline)
		got, err := pluginv1.ReadFrame(bufio.NewReaderSize(conn, 512), nil, pluginv1.MaxSecretFrame)
		if err != nil || subtle.ConstantTimeCompare(got, want) != 1 {
			// ConstantTimeCompare answers 0 for different lengths, and for two empty
			// secrets 1: a process started without one (sdktest) authenticates nothing.
			conn.Close()
			continue
		}
		// Closing the listener removes the socket: nobody else can connect from now on.
		ln.Close()
		if _, err := conn.Write(pluginv1.AppendRawFrame(nil, nil)); err != nil {
			conn.Close()
			return nil
		}
		_ = conn.SetDeadline(time.Time{})
		return conn
	}
}

// serveSocket serves the Calls stream's messages on conn until the host closes it.
func (s *Server) serveSocket(conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := &socketTransport{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	cs := &callStream{server: s, stream: t, calls: map[uint64]*streamCall{}, workers: newWorkers()}
	ended := make(chan error, 1)
	var w *inlineWatch
	w = newInlineWatch(func() {
		// On the timer's goroutine, which becomes the reader.
		cs.workers.wg.Add(1)
		cs.readSocket(ctx, t, w, ended)
	})
	cs.workers.wg.Add(1)
	go cs.readSocket(ctx, t, w, ended)
	err := <-ended
	// No goroutine reads on: one the watch may have started meanwhile stops at once. Then
	// the calls still running are cancelled and waited for, and only then does the socket
	// close, as a Calls stream ends once its handler has returned.
	w.stop()
	_ = conn.SetReadDeadline(time.Unix(1, 0))
	cs.end()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		s.logger.Debug("calls socket ended", "error", err)
	}
}

// A calls socket runs the calls of a quick method on the goroutine that read them: they go
// in and out without a hand-off between goroutines, which on a small call costs more than
// the call (host/tool/plugin's BenchmarkRoundTrip). A method is quick while its calls take
// quickCall or less on average; the calls of other methods run on workers, as on the Calls
// stream, and the reading goes on meanwhile.
//
// A quick method's call that runs long after all holds up the calls behind it, and its own
// cancellation, for inlineFor at most: then another goroutine takes over reading. inlineFor
// is a backstop, not a schedule: a timer that fires more often than every few milliseconds
// keeps Go's system monitor polling, which cost more CPU than the hand-offs it would save.
const (
	quickCall = 200 * time.Microsecond
	inlineFor = 20 * time.Millisecond
)

// readSocket reads the socket and runs each quick call it reads itself, until the socket
// ends (it then reports why to ended) or a call runs past inlineFor (the watch then starts a
// new readSocket goroutine, and this one returns when its call is done). One goroutine reads at a
// time; each is counted in cs.workers.wg, which serveSocket waits for.
func (cs *callStream) readSocket(ctx context.Context, t *socketTransport, w *inlineWatch, ended chan<- error) {
	defer cs.workers.wg.Done()
	// A goroutine that took over the reading must not read into the buffer that the call
	// still running on the previous reader may be using.
	t.rbuf = nil
	for {
		req, aliased, err := t.recv()
		if err != nil {
			report(ended, err)
			return
		}
		switch kind := req.GetKind().(type) {
		case *pluginv1.CallsRequest_Call:
			id := req.GetCallId()
			callCtx, c, err := cs.register(ctx, id)
			if err != nil {
				report(ended, err)
				return
			}
			m := cs.server.method(kind.Call)
			if m != nil && time.Duration(m.took.Load()) > quickCall {
				// A method whose calls take a while runs apart from the start, with its own
				// copy of the arguments: the next read reuses the buffer.
				if aliased {
					kind.Call.Args = bytes.Clone(kind.Call.Args)
				}
				cs.workers.run(func() {
					start := time.Now()
					cs.run(callCtx, id, c, kind.Call)
					m.ran(time.Since(start))
				})
				continue
			}
			ic := w.begin()
			cs.run(callCtx, id, c, kind.Call)
			inTime := w.end(ic)
			if m != nil {
				m.ran(time.Since(ic.started))
			}
			if !inTime {
				return
			}
		case *pluginv1.CallsRequest_Cancel:
			if req.GetCallId() == 0 {
				report(ended, errors.New("a cancel with call id 0"))
				return
			}
			cs.cancel(req.GetCallId())
		default:
			// A kind of message a newer host added; this plugin has nothing to do with it.
		}
	}
}

// An inlineWatch notices a call that runs past inlineFor on the socket's reading goroutine,
// and starts another to read on. It is one timer per socket, armed by the first inline call
// and left to fire rather than stopped after each: a timer armed and stopped per call woke
// the runtime's network poller each time, which cost more than the hand-off it avoids.
type inlineWatch struct {
	read func() // starts a new reading goroutine

	mu      sync.Mutex
	timer   *time.Timer
	armed   bool
	running *inlineCall // the call running inline; nil when none
	stopped bool
}

// inlineCall is one call run on the reading goroutine.
type inlineCall struct {
	started time.Time
	// state: 0 running inline; 1 ended in time (its goroutine reads on); 2 ran long (a new
	// goroutine reads).
	state atomic.Int32
}

func newInlineWatch(read func()) *inlineWatch {
	w := &inlineWatch{read: read}
	w.timer = time.AfterFunc(time.Hour, w.fire)
	w.timer.Stop()
	return w
}

// begin records a call about to run inline.
func (w *inlineWatch) begin() *inlineCall {
	ic := &inlineCall{started: time.Now()}
	w.mu.Lock()
	w.running = ic
	if !w.armed && !w.stopped {
		w.armed = true
		w.timer.Reset(inlineFor)
	}
	w.mu.Unlock()
	return ic
}

// end reports whether the goroutine that ran ic reads on: false when ic ran long and another
// goroutine took over reading.
func (w *inlineWatch) end(ic *inlineCall) bool {
	if !ic.state.CompareAndSwap(0, 1) {
		return false
	}
	w.mu.Lock()
	if w.running == ic {
		w.running = nil
	}
	w.mu.Unlock()
	return true
}

// fire checks the call running inline, if any: one that has run inlineFor gets its reading
// goroutine replaced; one that has not is checked again when it will have.
func (w *inlineWatch) fire() {
	w.mu.Lock()
	w.armed = false
	ic := w.running
	if ic == nil || w.stopped {
		w.mu.Unlock()
		return
	}
	if left := inlineFor - time.Since(ic.started); left > 0 {
		w.armed = true
		w.timer.Reset(left)
		w.mu.Unlock()
		return
	}
	w.running = nil
	w.mu.Unlock()
	if ic.state.CompareAndSwap(0, 2) {
		w.read()
	}
}

// stop stops the watch for good: it starts no reading goroutine after it returns.
func (w *inlineWatch) stop() {
	w.mu.Lock()
	w.stopped = true
	w.timer.Stop()
	w.mu.Unlock()
}

// report sends why the socket ended, once: one goroutine reads at a time, and the first
// report ends the serving.
func report(ended chan<- error, err error) {
	select {
	case ended <- err:
	default:
	}
}

// socketTransport is a callsTransport on a calls socket. Send is called by one goroutine at a
// time (callStream.sendMu), Recv by the serving loop alone.
type socketTransport struct {
	conn net.Conn
	r    *bufio.Reader
	rbuf []byte
	w    pluginv1.FrameWriter
}

func (t *socketTransport) Send(m *pluginv1.CallsResponse) error {
	err := t.w.Write(t.conn, m)
	var werr *pluginv1.WriteError
	if errors.As(err, &werr) {
		// Part of a frame may have gone: nothing more can be read right on this socket.
		t.conn.Close()
	}
	return err
}

func (t *socketTransport) Recv() (*pluginv1.CallsRequest, error) {
	req, aliased, err := t.recv()
	if aliased {
		// The caller may keep the arguments past the next read.
		req.GetCall().Args = bytes.Clone(req.GetCall().GetArgs())
	}
	return req, err
}

// recv reads the next message. When aliased, a call's arguments are in the transport's read
// buffer, good until the next read: the reader either runs the call before it reads again,
// or copies them.
func (t *socketTransport) recv() (req *pluginv1.CallsRequest, aliased bool, err error) {
	b, err := pluginv1.ReadFrame(t.r, t.rbuf, -1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			// The host closed its side.
			return nil, false, io.EOF
		}
		return nil, false, err
	}
	if cap(b) <= pluginv1.KeepBuffer {
		t.rbuf = b
		if req, ok := decodeCall(b); ok {
			return req, true, nil
		}
	}
	req = &pluginv1.CallsRequest{}
	if err := proto.Unmarshal(b, req); err != nil {
		return nil, false, fmt.Errorf("a frame that is not a CallsRequest: %w", err)
	}
	return req, false, nil
}
