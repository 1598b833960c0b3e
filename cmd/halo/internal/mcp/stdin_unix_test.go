//go:build unix

package mcp

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

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
