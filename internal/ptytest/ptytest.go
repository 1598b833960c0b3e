//go:build linux

// Package ptytest gives attack tests a terminal to attack: a new pseudo-terminal, and a way to
// start a process (a host the test drives) with it as its controlling terminal, as halo has
// the user's terminal when run from a shell. What reaches the terminal is recorded:
// characters queued into its input (TIOCSTI) are echoed there, and so is anything written
// to it.
package ptytest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// A Terminal is a pseudo-terminal: the test holds the master side, a process started with
// Start holds the other as its controlling terminal.
type Terminal struct {
	master *os.File
	slave  *os.File

	mu   sync.Mutex
	seen bytes.Buffer
	done chan struct{}
}

// Open makes a pseudo-terminal and starts recording what reaches it.
func Open() (*Terminal, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	unlock := 0
	if err := ioctl(master, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		master.Close()
		return nil, fmt.Errorf("unlockpt: %w", err)
	}
	var n uint32
	if err := ioctl(master, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		master.Close()
		return nil, fmt.Errorf("ptsname: %w", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, err
	}
	t := &Terminal{master: master, slave: slave, done: make(chan struct{})}
	go t.record()
	return t, nil
}

func ioctl(f *os.File, req, arg uintptr) error {
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, arg)
	if errno != 0 {
		return errno
	}
	return nil
}

// record reads the master side until every process has closed the terminal.
func (t *Terminal) record() {
	defer close(t.done)
	buf := make([]byte, 4096)
	for {
		n, err := t.master.Read(buf)
		t.mu.Lock()
		t.seen.Write(buf[:n])
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Start starts cmd in a new session whose controlling terminal is t, as its standard input
// (its output stays where cmd says). The test's own copy of the terminal is closed, so
// Seen can tell when cmd and what it started are done with it.
func (t *Terminal) Start(cmd *exec.Cmd) error {
	cmd.Stdin = t.slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	err := cmd.Start()
	t.slave.Close()
	return err
}

// Seen returns what reached the terminal, once every process holding it has closed it (or
// after wait, whichever is first).
func (t *Terminal) Seen(wait time.Duration) string {
	select {
	case <-t.done:
	case <-time.After(wait):
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen.String()
}

// Close closes the master side.
func (t *Terminal) Close() error {
	err := t.master.Close()
	<-t.done
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}
