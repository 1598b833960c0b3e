//go:build unix

package mcp

import (
	"io"
	"os"
	"syscall"
)

// pollable returns a reader of in that waits for input in Go's network poller rather than
// in a blocking read(2), when in is a pipe or a socket (what an MCP client gives halo mcp),
// and a function that puts in back the way it was.
//
// A goroutine blocked in read(2) holds a thread in a system call. Go's system monitor
// notices such a thread every 20 µs and hands its processor to another thread, and stays
// awake at that rate while it does: with a client that sends a call, waits for the answer
// and sends the next, that was most of the server's idle CPU and a tenth of each call's
// latency. Through the poller the reading goroutine parks instead, and nothing spins.
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
	polled := os.NewFile(uintptr(fd), f.Name())
	return polled, func() {
		// Blocking again, for whoever shares the open file after halo (a shell's pipe).
		_ = syscall.SetNonblock(fd, false)
		polled.Close()
	}
}
