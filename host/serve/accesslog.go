package serve

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// maxQueuedLines bounds the request lines waiting to be written. A log that cannot keep up
// (a blocked terminal, a full pipe) drops lines past it, and says how many, rather than
// hold up requests or grow without bound.
const maxQueuedLines = 8192

// gatherFor is how long the log waits, once a line is queued, for more lines to write with
// it: a busy server writes (and wakes the log's goroutine) about 1/gatherFor times a second,
// not once a request. A line reaches the log at most this late.
const gatherFor = 20 * time.Millisecond

// An accessLine is one request's log line before it is formatted.
type accessLine struct {
	method, path, remote string
	status               int
	bytes                int64
	duration             time.Duration
}

// An accessLog writes the request log off the request path: a request hands its line's
// fields to the queue and goes on; the server's goroutine (run) waits gatherFor for more,
// formats the lines and, when Config.AccessLog is set, writes all that is queued in one write. Lines look as the
// server's logger writes them. Before the server starts and after it closed, a line is
// written at once.
type accessLog struct {
	log hclog.Logger // formats the lines: into buf when out is set
	buf *bytes.Buffer
	out io.Writer

	// wmu is held while lines are formatted and written: by run, or by a line written
	// after close.
	wmu sync.Mutex

	mu      sync.Mutex
	queue   []accessLine
	dropped int
	started bool // run runs: lines are queued for it
	closed  bool
	wake    chan struct{}
	stop    chan struct{}
	once    sync.Once
}

// newAccessLog makes the request log of a server whose logger is log. out, when not nil, is
// where log's lines go, written in batches: the lines are formatted by a copy of log that
// writes into a buffer (when log can be pointed at one; otherwise log writes each line).
func newAccessLog(log hclog.Logger, out io.Writer) *accessLog {
	a := &accessLog{log: log, wake: make(chan struct{}, 1), stop: make(chan struct{})}
	if out != nil {
		copied := log.With()
		if r, ok := copied.(hclog.OutputResettable); ok {
			a.buf = &bytes.Buffer{}
			if r.ResetOutput(&hclog.LoggerOptions{Output: a.buf, Color: hclog.ColorOff}) == nil {
				a.log, a.out = copied, out
			} else {
				a.buf = nil
			}
		}
	}
	return a
}

// add queues one line, or writes it at once when run does not run (before Start, after
// close).
func (a *accessLog) add(l accessLine) {
	a.mu.Lock()
	if a.closed || !a.started {
		a.mu.Unlock()
		a.write([]accessLine{l}, 0)
		return
	}
	if len(a.queue) >= maxQueuedLines {
		a.dropped++
		a.mu.Unlock()
		return
	}
	a.queue = append(a.queue, l)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// start says run is about to run: lines are queued from now on.
func (a *accessLog) start() {
	a.mu.Lock()
	a.started = true
	a.mu.Unlock()
}

// run writes queued lines until close, then what is left. The server owns it (Server.bg).
func (a *accessLog) run() {
	var lines []accessLine
	gather := time.NewTimer(gatherFor)
	gather.Stop()
	for {
		stopping := false
		select {
		case <-a.wake:
			// The lines of the next moment go in the same write.
			gather.Reset(gatherFor)
			select {
			case <-gather.C:
			case <-a.stop:
				gather.Stop()
				stopping = true
			}
		case <-a.stop:
			stopping = true
		}
		a.mu.Lock()
		lines, a.queue = a.queue, lines[:0]
		dropped := a.dropped
		a.dropped = 0
		if stopping {
			a.closed = true
		}
		a.mu.Unlock()
		a.write(lines, dropped)
		if stopping {
			return
		}
	}
}

// close has run write what is queued and return; later lines are written at once.
func (a *accessLog) close() { a.once.Do(func() { close(a.stop) }) }

// write formats lines, and writes them in one go when the log has a writer of its own.
func (a *accessLog) write(lines []accessLine, dropped int) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if dropped > 0 {
		a.log.Warn("request log lines dropped: the log could not keep up", "lines", dropped)
	}
	for _, l := range lines {
		// The duration as its text: the logger writes it so either way, but formats any other
		// value through fmt's reflection.
		a.log.Info("request", "method", l.method, "path", l.path, "status", l.status, "bytes", l.bytes, "duration", l.duration.String(), "remote", l.remote)
	}
	if a.out != nil && a.buf.Len() > 0 {
		a.out.Write(a.buf.Bytes())
		a.buf.Reset()
	}
}
