//go:build unix

package mcp

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Nonblocking reports whether fd's open file is non-blocking (for the package's external
// tests too).
func Nonblocking(t *testing.T, fd uintptr) bool { return nonblocking(t, fd) }

func nonblocking(t *testing.T, fd uintptr) bool {
	t.Helper()
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return flags&syscall.O_NONBLOCK != 0
}

// A pipe is read through the poller while halo mcp serves, and is blocking again afterwards,
// as the shell or client that shares it expects.
func TestPollableStdinPipe(t *testing.T) {
	// Made as a shell makes it: blocking. (os.Pipe's are non-blocking, for the poller.)
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	defer r.Close()
	defer w.Close()
	if nonblocking(t, r.Fd()) {
		t.Fatal("a new pipe is non-blocking")
	}
	in, restore := pollable(r)
	if in == io.Reader(r) {
		t.Fatal("a pipe was not switched to the poller")
	}
	if !nonblocking(t, r.Fd()) {
		t.Fatal("the pipe is not non-blocking while served")
	}
	if _, err := w.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(in, buf); err != nil || string(buf) != "ping\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	restore()
	if nonblocking(t, r.Fd()) {
		t.Fatal("the pipe was left non-blocking")
	}
	// The original descriptor still works: restore closed only halo's own copy.
	if _, err := w.Write([]byte("pong\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "pong\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
}

// A regular file (or a terminal) is read as it is: its open file may be shared with the
// shell.
func TestPollableStdinFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in, restore := pollable(f)
	defer restore()
	if in != io.Reader(f) || nonblocking(t, f.Fd()) {
		t.Fatal("a regular file was switched")
	}
}

// blockingPipe makes a pipe as a shell makes it (blocking) and halo mcp's input of its read
// end; restore is left to the caller.
func blockingPipe(t *testing.T) (p *pipeInput, w *os.File, restore func()) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin"), os.NewFile(uintptr(fds[1]), "client")
	t.Cleanup(func() { r.Close(); w.Close() })
	in, restore := pollable(r)
	p, ok := in.(*pipeInput)
	if !ok {
		t.Fatalf("a pipe gave %T", in)
	}
	return p, w, restore
}

// readAsync reads once from in on its own goroutine.
func readAsync(in io.Reader) chan string {
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, err := in.Read(buf)
		if err != nil {
			got <- "error: " + err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	return got
}

// The server switches the input between read(2) and the poller (mcpserver.ReadBlocker):
// O_NONBLOCK follows, and both ways read what the client writes.
func TestPipeInputSwitchesModes(t *testing.T) {
	p, w, restore := blockingPipe(t)
	defer restore()
	for _, block := range []bool{true, false, true} {
		p.BlockReads(block)
		if nonblocking(t, uintptr(p.fd)) == block {
			t.Fatalf("BlockReads(%v): O_NONBLOCK is %v", block, !block)
		}
		got := readAsync(p)
		time.Sleep(10 * time.Millisecond) // the read waits before the client writes
		if _, err := w.Write([]byte("call\n")); err != nil {
			t.Fatal(err)
		}
		select {
		case s := <-got:
			if s != "call\n" {
				t.Fatalf("BlockReads(%v): read %q", block, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("BlockReads(%v): the read did not end", block)
		}
	}
}

// restore does not wait for a read under way: a read waiting in read(2) gets the client's
// next bytes and halo's copy of the descriptor is closed after it; one parked in the poller
// ends at once. Either way the next read is refused and the pipe is blocking again.
func TestPipeInputRestoreDuringRead(t *testing.T) {
	for _, block := range []bool{true, false} {
		p, w, restore := blockingPipe(t)
		p.BlockReads(block)
		got := readAsync(p)
		time.Sleep(10 * time.Millisecond)
		ended := make(chan struct{})
		go func() { restore(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Fatalf("block %v: restore waited for the read", block)
		}
		if block {
			if _, err := w.Write([]byte("late\n")); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case s := <-got:
			if block && s != "late\n" || !block && !strings.HasPrefix(s, "error: ") {
				t.Fatalf("block %v: the read under way gave %q", block, s)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("block %v: the read under way did not end", block)
		}
		if p.f.Fd() != ^uintptr(0) {
			t.Fatalf("block %v: halo's copy of the descriptor is still open", block)
		}
		if _, err := p.Read(make([]byte, 8)); err == nil {
			t.Fatalf("block %v: a read after restore went ahead", block)
		}
		if nonblocking(t, uintptr(p.orig)) {
			t.Fatalf("block %v: the pipe was left non-blocking", block)
		}
	}
}
