//go:build unix

package mcp

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"halolang.dev/halo/host/mcpserver"
)

// pollable returns a reader of in that can wait for input either in a blocking read(2) or in
// Go's network poller, when in is a pipe or a socket (what an MCP client gives halo mcp),
// and a function that puts in back the way it was. The server asks for one or the other as
// its requests come and go (mcpserver.ReadBlocker).
//
// A goroutine blocked in read(2) holds a thread in a system call. Go's system monitor
// notices such a thread every 20 µs and hands its processor to another thread, and stays
// awake at that rate while it does: with requests running on workers while the reader
// waits, that was most of the server's idle CPU and a tenth of each call's latency. Through
// the poller the reading goroutine parks instead, and nothing spins. But a client that sends
// a call, waits for the answer and sends the next leaves nothing running while halo waits
// for it, and there each wait in the poller cost a read that found nothing, the poller's
// wait and the read again: waiting in read(2) then took `halo mcp`'s processor time a call
// with one client from 1.18 times mcp-go's to 1.02 (medians of 9 and 13 rounds; docs/mcp.md,
// "Waiting for the next call in read(2)").
//
// Only a pipe or a socket is switched: O_NONBLOCK belongs to the open file, which a
// terminal shares with the shell that started halo.
func pollable(in io.Reader) (io.Reader, func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return in, func() {}
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return in, func() {}
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return in, func() {}
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return in, func() {}
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	p := &pipeInput{f: os.NewFile(uintptr(fd), f.Name()), fd: fd, orig: int(f.Fd())}
	return p, p.restore
}

// A pipeInput reads a pipe or socket through the poller, or in read(2) when told to block.
// The descriptor is its own copy of the input's; its open file is the input's, whose
// O_NONBLOCK it switches.
type pipeInput struct {
	f    *os.File
	fd   int
	orig int // the input's own descriptor
	// blocking says O_NONBLOCK is clear: reads wait in read(2), on fd, not through f (a
	// read of f in read(2) would hold f open, and restore would wait for it to close f).
	blocking atomic.Bool
	// inRead counts the reads in read(2); closing is set by restore, which closes f only
	// when none is under way, or leaves it to the last to end. mu orders a switch of the
	// mode before or after restore, never on a descriptor closed meanwhile.
	inRead  atomic.Int32
	closing atomic.Bool
	mu      sync.Mutex
}

var _ mcpserver.ReadBlocker = (*pipeInput)(nil)

// BlockReads switches the open file's O_NONBLOCK when block asks for the other mode.
func (p *pipeInput) BlockReads(block bool) {
	if p.blocking.Load() == block {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing.Load() {
		return
	}
	if err := syscall.SetNonblock(p.fd, !block); err == nil {
		p.blocking.Store(block)
	}
}

func (p *pipeInput) Read(b []byte) (int, error) {
	if !p.blocking.Load() {
		return p.f.Read(b)
	}
	p.inRead.Add(1)
	defer func() {
		if p.inRead.Add(-1) == 0 && p.closing.Load() {
			p.f.Close()
		}
	}()
	if p.closing.Load() {
		return 0, os.ErrClosed
	}
	for {
		n, err := syscall.Read(p.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return p.f.Read(b) // switched back meanwhile
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: err}
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// restore closes halo's copy, now (a read parked in the poller then ends) or when the read
// in read(2) under way ends, and makes the open file blocking again, for whoever shares it
// after halo (a shell's pipe). The copy is closed first: a read of it through the poller
// that found the file blocking would wait in read(2) holding it open, and the close with it.
func (p *pipeInput) restore() {
	p.mu.Lock()
	p.closing.Store(true)
	if p.inRead.Load() == 0 {
		p.f.Close()
	}
	p.mu.Unlock()
	_ = syscall.SetNonblock(p.orig, false)
}
