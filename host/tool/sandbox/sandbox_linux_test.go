package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// The parts of sandbox_test.go that read Linux's own interfaces: capability sets, prctl,
// thread ids and /proc/self/task.

func reportCredentials() int {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		fmt.Println("capget:", err)
		return 1
	}
	set := func(lo, hi uint32) uint64 { return uint64(hi)<<32 | uint64(lo) }
	var bnd uint64
	for c := 0; c < 64; c++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err == nil && r == 1 {
			bnd |= 1 << c
		}
	}
	var amb uint64
	for c := 0; c < 64; c++ {
		if r, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && r == 1 {
			amb |= 1 << c
		}
	}
	nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	fmt.Printf("CapInh:\t%016x\nCapPrm:\t%016x\nCapEff:\t%016x\nCapBnd:\t%016x\nCapAmb:\t%016x\nNoNewPrivs:\t%d\n",
		set(data[0].Inheritable, data[1].Inheritable), set(data[0].Permitted, data[1].Permitted), set(data[0].Effective, data[1].Effective), bnd, amb, nnp)
	return 0
}

// TestConfineThreadLeavesTheRestAlone: confining one locked thread confines that thread and
// what it starts, never the rest of the process, not even the threads the runtime starts
// afterwards.
func TestConfineThreadLeavesTheRestAlone(t *testing.T) {
	needLandlock(t)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Threads earlier tests confined either ended with their goroutines or, had one run on
	// the main thread, which the runtime cannot end, stay parked for good.
	before := noNewPrivsThreads(t)
	type result struct {
		tid int
		err error
	}
	confined, release := make(chan result), make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := ConfineThread(Policy{}, "/bin/true", nil); err != nil {
			confined <- result{err: err}
			return
		}
		if _, err := os.ReadFile(outside); err == nil {
			confined <- result{err: errors.New("the confined thread read a file outside its policy")}
			return
		}
		confined <- result{tid: unix.Gettid()}
		<-release
	}()
	r := <-confined
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer close(release)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { // each on a thread of its own while it runs, some of them new
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if _, err := os.ReadFile(outside); err != nil {
				t.Errorf("a thread of the process: %v", err)
			}
		}()
	}
	wg.Wait()
	after := noNewPrivsThreads(t)
	if !after[r.tid] {
		t.Errorf("the confined thread %d has no no_new_privs", r.tid)
	}
	for tid := range after {
		if tid != r.tid && !before[tid] {
			t.Errorf("thread %d has no_new_privs too: the confinement spread", tid)
		}
	}
}

// noNewPrivsThreads returns the ids of this process's threads that have no_new_privs.
func noNewPrivsThreads(t *testing.T) map[int]bool {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]bool{}
	for _, f := range tasks {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), "NoNewPrivs:\t1") {
			tid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			out[tid] = true
		}
	}
	return out
}
