package mcpserver

import (
	"sync"
	"sync/atomic"
)

// maxIdleWorkers is how many workers wait for requests at most; more, left by a burst of
// concurrent requests, end. A waiting worker costs its stack (tens of kilobytes); with 4,
// 16 clients calling at once had most calls on new goroutines, and growing their stacks
// was a tenth of halo mcp's processor time.
const maxIdleWorkers = 64

// workers runs requests on goroutines that outlive one request. A tools/call runs a whole
// pipeline, and the goroutine's stack grows to tens of kilobytes on the way; a new goroutine
// per request grows (copies) its stack again each time, which profiles of halo mcp put at
// several percent of its CPU.
type workers struct {
	jobs chan func()
	done chan struct{}
	idle atomic.Int32
	// started counts the workers started.
	started atomic.Int32
	wg      sync.WaitGroup
	mu      sync.Mutex
	// stopped says stop was called: a job given after it runs on the caller's goroutine
	// (ServeStdio gives none then).
	stopped bool
}

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), done: make(chan struct{})}
}

// run runs job on an idle worker, or on a new one.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
		return
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		w.mu.Unlock()
		job()
		w.mu.Lock()
		return
	}
	w.started.Add(1)
	w.wg.Go(func() { w.work(job) })
}

func (w *workers) work(job func()) {
	for {
		job()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case job = <-w.jobs:
			w.idle.Add(-1)
		case <-w.done:
			return
		}
	}
}

// hold counts a job its caller runs on its own goroutine as one of the pool's, which stop
// waits for, until release; false once stop was called (the job is then given to run).
func (w *workers) hold() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false
	}
	w.wg.Add(1)
	return true
}

// release ends what hold began.
func (w *workers) release() { w.wg.Done() }

// stop returns once every job given to run has finished, and the workers have ended.
func (w *workers) stop() {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		close(w.done)
	}
	w.mu.Unlock()
	w.wg.Wait()
}
