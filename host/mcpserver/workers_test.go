package mcpserver

import (
	"runtime"
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
	const blocked = maxIdleWorkers + 10 // more than may wait after
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

// TestWorkersStayForConcurrentCalls: the workers 32 jobs held at once needed serve the next
// 32 held at once; none is started again (but for a worker counted idle and not yet waiting).
func TestWorkersStayForConcurrentCalls(t *testing.T) {
	w := newWorkers()
	defer w.stop()
	const held = 32
	round := func() {
		release := make(chan struct{})
		var started sync.WaitGroup
		started.Add(held)
		for range held {
			w.run(func() {
				started.Done()
				<-release
			})
		}
		started.Wait()
		close(release)
		for w.idle.Load() < min(held, maxIdleWorkers) { // every worker that stays is waiting
			runtime.Gosched()
		}
	}
	round()
	first := w.started.Load()
	round()
	if again := w.started.Load() - first; again > 4 {
		t.Errorf("%d of %d workers were started again for the second round", again, held)
	}
}
