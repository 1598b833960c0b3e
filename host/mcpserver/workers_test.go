package mcpserver

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestWorkers: every job runs once, jobs held at once each get a worker (none waits for
// another to end), no more than maxIdleWorkers wait, and stop waits for every job.
func TestWorkers(t *testing.T) {
	w := newWorkers()
	var ran atomic.Int32
	release := make(chan struct{})
	var started sync.WaitGroup
	const blocked = 10
	started.Add(blocked)
	for range blocked { // all held at once: each needs a worker of its own
		w.run(func() {
			started.Done()
			<-release
			ran.Add(1)
		})
	}
	started.Wait()
	close(release)
	for range 100 {
		w.run(func() { ran.Add(1) })
	}
	w.stop()
	if got := ran.Load(); got != blocked+100 {
		t.Errorf("%d jobs ran, want %d", got, blocked+100)
	}
	if n := w.idle.Load(); n > maxIdleWorkers {
		t.Errorf("%d idle workers, want at most %d", n, maxIdleWorkers)
	}
	w.run(func() { ran.Add(1) }) // after stop: on the caller's goroutine
	if got := ran.Load(); got != blocked+101 {
		t.Errorf("a job after stop did not run before run returned")
	}
}
