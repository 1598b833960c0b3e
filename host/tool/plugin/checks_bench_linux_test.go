package plugin

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"halolang.dev/halo/host/tool/sandbox"
)

// BenchmarkStartChecks measures, one by one, what the host does at each plugin start for the
// checks issue 11 added, beside what they replace or sit on: a new connection secret;
// opening the pinned executable with its inotify watch and the duplicate descriptor that is
// executed (the hash itself was done before too); the plugin's pids cgroup (made, joined by
// the starting thread, removed), where the host may make one; connecting to the plugin's
// socket with the peer check, beside a plain connect; and the thread a plugin starts from,
// with the capability drop and the seccomp filter, beside a bare locked thread.
func BenchmarkStartChecks(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("token", func(b *testing.B) {
		for b.Loop() {
			if _, err := newToken(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pin-watch-and-descriptor", func(b *testing.B) {
		for b.Loop() {
			f, err := os.Open(exe)
			if err != nil {
				b.Fatal(err)
			}
			p := &pinned{f: f, watch: watchWrites(f), execFD: -1}
			if err := p.execPinned(&exec.Cmd{}); err != nil {
				b.Fatal(err)
			}
			if changed, _ := p.watch.changed(); changed {
				b.Fatal("changed")
			}
			p.Close()
		}
	})
	b.Run("pids-cgroup", func(b *testing.B) {
		if pidsCgroups().base == "" {
			b.Skipf("skipped: no pids cgroup hierarchy this process may write (%s)", pidsStatus())
		}
		for b.Loop() {
			cg, err := newPidsCgroup(DefaultMaxProcs)
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error)
			go func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				err := cg.join()
				done <- err
			}()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			cg.remove()
		}
	})
	sock := filepath.Join(b.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	b.Run("connect/plain", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("unix", sock)
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	b.Run("connect/peer-check", func(b *testing.B) {
		for b.Loop() {
			c, err := dialPlugin(b.Context(), sock, os.Getpid())
			if err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
	})
	ended := make(chan struct{})
	close(ended)
	b.Run("thread/bare", func(b *testing.B) {
		for b.Loop() {
			if err := sandbox.StartFromThread(func() error { return nil }, func() error { return nil }, ended); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("thread/restricted", func(b *testing.B) {
		for b.Loop() {
			if err := sandbox.StartFromThread(sandbox.RestrictThread, func() error { return nil }, ended); err != nil {
				b.Fatal(err)
			}
		}
	})
}
