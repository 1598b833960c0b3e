package plugin

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// The calls socket (plugin.proto, "The calls socket") carries the Calls stream's messages on
// a Unix socket of their own. On the gRPC stream a call crossed five goroutines between the
// caller and the plugin's method (the stream's writer and reader on each side, and back);
// here the caller writes its request itself, the plugin's reader hands it to a worker that
// writes the answer itself, and one hand-off remains, from the host's reader to the caller.
// The socket is authenticated as the gRPC connection is: the host connects only to a socket
// in the plugin's folder that the plugin process itself listens on, and sends the secret
// first, which the plugin checks before it reads anything else.

// openCallsSocket asks the plugin for a calls socket and connects to it. Any error means the
// process's calls go on the gRPC Calls stream; UNIMPLEMENTED is a plugin built with an SDK
// older than the socket.
func (p *process) openCallsSocket() (*socketCalls, error) {
	ctx, cancel := context.WithTimeout(context.Background(), pluginv1.CallsSocketAnswerTimeout)
	defer cancel()
	resp, err := p.rpc.OpenCallsSocket(ctx, &pluginv1.OpenCallsSocketRequest{})
	if err != nil {
		return nil, err
	}
	path := resp.GetPath()
	if err := checkAddress("unix", path, p.runner.socketDir); err != nil {
		// A plugin that names a socket elsewhere would have the host send its secret and its
		// calls to whoever listens there.
		return nil, fmt.Errorf("the plugin names the calls socket %q, outside the folder the host made for it (%s)", path, p.runner.socketDir)
	}
	conn, err := dialPlugin(ctx, path, p.runner.PID())
	if err != nil {
		return nil, fmt.Errorf("calls socket: %w", err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	r := bufio.NewReaderSize(conn, 64<<10)
	if _, err := conn.Write(pluginv1.AppendRawFrame(nil, []byte(p.token))); err != nil {
		conn.Close()
		return nil, fmt.Errorf("calls socket: sending the secret: %w", err)
	}
	if ack, err := pluginv1.ReadFrame(r, nil, 0); err != nil || len(ack) != 0 {
		conn.Close()
		return nil, fmt.Errorf("calls socket: the plugin did not take the secret: %v", err)
	}
	_ = conn.SetDeadline(time.Time{})
	return &socketCalls{conn: conn, r: r, limit: p.recvLimit}, nil
}

// socketCalls is the host's callsTransport on a calls socket. Its errors read as the gRPC
// stream's would: io.EOF from Send for a broken socket, UNAVAILABLE for one that ended,
// RESOURCE_EXHAUSTED for a message over the limit (callError makes it TOOL_LIMIT).
//
// Callers read it in turns (callOnSocket), and a caller who gives up stops reading in the
// middle of a frame: the part read waits in head and body for the next reader.
type socketCalls struct {
	conn  net.Conn
	r     *bufio.Reader
	limit int

	head   [4]byte
	headN  int
	body   []byte // the frame being read, once its length is known
	bodyN  int
	inBody bool
	rbuf   []byte // body's storage, kept between small frames

	w pluginv1.FrameWriter // Send's, under callStream.sendMu

	closeOnce sync.Once
}

func (t *socketCalls) Send(m *pluginv1.CallsRequest) error {
	err := t.w.Write(t.conn, m)
	var werr *pluginv1.WriteError
	if errors.As(err, &werr) {
		// Part of a frame may be on the socket: nothing more can be sent on it. Closing it
		// makes the reader see the end, and report it to every call.
		t.close()
		return io.EOF
	}
	return err
}

// Recv reads the next event. It returns os.ErrDeadlineExceeded, and keeps what it read of a
// frame, when interrupt stopped it.
func (t *socketCalls) Recv() (*pluginv1.CallsResponse, error) {
	b, err := t.readFrame()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return nil, err
	}
	if err != nil {
		t.close()
		var tooLarge *pluginv1.FrameTooLargeError
		if errors.As(err, &tooLarge) {
			return nil, status.Errorf(codes.ResourceExhausted, "calls socket: %v", err)
		}
		return nil, status.Errorf(codes.Unavailable, "calls socket: %v", err)
	}
	resp := &pluginv1.CallsResponse{}
	if err := proto.Unmarshal(b, resp); err != nil {
		t.close()
		return nil, status.Errorf(codes.Unavailable, "calls socket: a frame that is not a CallsResponse: %v", err)
	}
	return resp, nil
}

// readFrame reads the rest of the current frame and returns its bytes, valid until the next
// call.
func (t *socketCalls) readFrame() ([]byte, error) {
	for t.headN < len(t.head) {
		n, err := t.r.Read(t.head[t.headN:])
		t.headN += n
		if err != nil {
			if errors.Is(err, io.EOF) && t.headN > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	if !t.inBody {
		size := int(binary.BigEndian.Uint32(t.head[:]))
		if size > t.limit {
			return nil, &pluginv1.FrameTooLargeError{Size: size, Limit: t.limit}
		}
		if cap(t.rbuf) >= size {
			t.body = t.rbuf[:size]
		} else {
			t.body = make([]byte, size)
			if size <= pluginv1.KeepBuffer {
				t.rbuf = t.body
			}
		}
		t.bodyN, t.inBody = 0, true
	}
	for t.bodyN < len(t.body) {
		n, err := t.r.Read(t.body[t.bodyN:])
		t.bodyN += n
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	t.headN, t.inBody = 0, false
	return t.body, nil
}

// recv is Recv for a caller who stops reading when ctx ends: it then returns ctx's error.
func (t *socketCalls) recv(ctx context.Context) (*pluginv1.CallsResponse, error) {
	if ctx.Done() == nil {
		return t.Recv()
	}
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		// A deadline in the past makes the blocked read return at once.
		_ = t.conn.SetReadDeadline(time.Unix(1, 0))
		close(interrupted)
	})
	msg, err := t.Recv()
	if !stop() {
		<-interrupted
		_ = t.conn.SetReadDeadline(time.Time{})
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ctx.Err()
		}
	}
	return msg, err
}

// close ends the socket: the plugin cancels the calls still running on it.
func (t *socketCalls) close() { t.closeOnce.Do(func() { t.conn.Close() }) }

// callOnSocket runs one call on the calls socket. There is no goroutine that reads the
// socket: the callers take turns. The caller that reads hands each event to the call it
// belongs to and returns with its own outcome, and another waiting caller reads on. A lone
// caller (most calls) thus reads its own answer, with no goroutine in between.
func (cs *callStream) callOnSocket(ctx context.Context, req *pluginv1.CallRequest, progress func(*pluginv1.Progress)) (*pluginv1.CallResponse, error) {
	id, pc, err := cs.start(req)
	if err != nil {
		// This caller may have been woken to read next: someone else must.
		cs.handOff()
		return nil, err
	}
	for {
		if out, err, done := pc.take(progress); done {
			return out, err
		}
		cs.mu.Lock()
		lead := !cs.reading && cs.err == nil
		if lead {
			cs.reading = true
		} else {
			// Set with the look at reading, under one lock: a reader that stops after it
			// sees this caller waiting, and wakes it.
			pc.waiting = true
		}
		cs.mu.Unlock()
		if lead {
			if err := cs.lead(ctx, id, pc); err != nil {
				return nil, err
			}
			continue
		}
		select {
		case <-pc.wake:
			cs.mu.Lock()
			pc.waiting = false
			cs.mu.Unlock()
		case <-ctx.Done():
			cs.mu.Lock()
			pc.waiting = false
			cs.mu.Unlock()
			if cs.forget(id) {
				go cs.sendCancel(id)
			}
			// This caller may have been woken to read next: someone else must.
			cs.handOff()
			return nil, ctx.Err()
		}
	}
}

// lead reads the socket for every caller until something comes for call id (an event, its
// outcome, or the socket's end), and then lets another caller read: the caller runs its
// progress callbacks, which may be slow, as a caller that does not read. An error is ctx's,
// which ended while the caller read.
func (cs *callStream) lead(ctx context.Context, id uint64, pc *pendingCall) error {
	defer func() {
		cs.mu.Lock()
		cs.reading = false
		cs.mu.Unlock()
		cs.handOff()
	}()
	for {
		if pc.arrived() {
			return nil
		}
		msg, err := cs.socket.recv(ctx)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				if cs.forget(id) {
					go cs.sendCancel(id)
				}
				return ctxErr
			}
			// The socket ended: every pending call, this one included, gets why.
			cs.end(err)
			continue
		}
		cs.dispatch(msg)
	}
}

// arrived reports whether anything was delivered to the call since its caller last took it.
func (pc *pendingCall) arrived() bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	return len(pc.progress) > 0 || pc.outcome != nil || pc.err != nil
}

// handOff wakes a waiting caller to read the socket, when none does. Only a caller that
// waits: one busy with its progress callbacks (which may wait for another call) looks at
// reading again when it is done, and one that reads gave up the reading to get here.
func (cs *callStream) handOff() {
	cs.mu.Lock()
	var next *pendingCall
	if !cs.reading {
		for _, pc := range cs.calls {
			if pc.waiting {
				next = pc
				break
			}
		}
	}
	cs.mu.Unlock()
	if next != nil {
		select {
		case next.wake <- struct{}{}:
		default:
		}
	}
}

// take runs the progress events delivered to the call and reports its outcome, or why the
// stream ended, when either has come (done).
func (pc *pendingCall) take(progress func(*pluginv1.Progress)) (out *pluginv1.CallResponse, err error, done bool) {
	pc.mu.Lock()
	events, out, err := pc.progress, pc.outcome, pc.err
	pc.progress = nil
	pc.mu.Unlock()
	if progress != nil {
		for _, ev := range events {
			progress(ev)
		}
	}
	if out != nil {
		return out, nil, true
	}
	return nil, err, err != nil
}
