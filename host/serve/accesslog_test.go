package serve

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// gate is a log destination that blocks every Write until it is opened, as a terminal or a
// pipe nobody reads does, and counts the Writes.
type gate struct {
	open    chan struct{}
	entered chan struct{} // closed at the first Write
	once    sync.Once
	mu      sync.Mutex
	b       bytes.Buffer
	writes  int
}

func (g *gate) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	g.writes++
	return g.b.Write(p)
}

func (g *gate) text() (string, int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.String(), g.writes
}

// TestAccessLogOffTheRequestPath: a request hands its line to the log and goes on, however
// slow the log's destination; the lines queued meanwhile are written in one write, in the
// server logger's format; past the queue's bound, lines are dropped and counted, not waited
// for; closing writes what is left, and a line after that is written at once.
func TestAccessLogOffTheRequestPath(t *testing.T) {
	g := &gate{open: make(chan struct{}), entered: make(chan struct{})}
	logger := hclog.New(&hclog.LoggerOptions{Name: "halo.serve", Output: g, Level: hclog.Info, TimeFormat: "15:04:05.000"})
	a := newAccessLog(logger, g)
	a.start()
	done := make(chan struct{})
	go func() { a.run(); close(done) }()
	start := time.Now()
	a.add(accessLine{method: "POST", path: "/mcp", status: 200, bytes: 10, duration: time.Millisecond, remote: "127.0.0.1:1"})
	// run takes the first line and blocks writing it; these wait in the queue, or past its
	// bound are dropped.
	<-g.entered
	for i := 0; i < maxQueuedLines+10; i++ {
		a.add(accessLine{method: "GET", path: "/api/runs", status: 200, remote: "127.0.0.1:2"})
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("adding lines took %s while the log was blocked", d)
	}
	close(g.open)
	a.close()
	<-done
	a.add(accessLine{method: "GET", path: "/late", status: 404})
	text, writes := g.text()
	if !strings.Contains(text, "[INFO]  halo.serve: request: method=POST path=/mcp status=200 bytes=10 duration=1ms remote=127.0.0.1:1\n") {
		t.Errorf("the first line is not in the logger's format:\n%.300s", text)
	}
	if n := strings.Count(text, "path=/api/runs"); n != maxQueuedLines {
		t.Errorf("%d queued lines written, want the queue's %d", n, maxQueuedLines)
	}
	if !strings.Contains(text, "request log lines dropped: the log could not keep up: lines=") {
		t.Errorf("the dropped lines are not counted in the log")
	}
	if !strings.Contains(text, "path=/late") {
		t.Errorf("a line after close was not written")
	}
	if writes > 5 {
		t.Errorf("%d writes for %d lines: the queued lines were not written together", writes, maxQueuedLines+2)
	}
}
