package mcpserver

import (
	"context"
	"io"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/runtime"
)

// stackRecorder is a mock that keeps the stack of the goroutine each call ran on.
type stackRecorder struct {
	mu     sync.Mutex
	stacks []string
}

func (s *stackRecorder) mock(r runtime.MockRequest) (any, error) {
	buf := make([]byte, 64<<10)
	buf = buf[:goruntime.Stack(buf, false)]
	s.mu.Lock()
	s.stacks = append(s.stacks, string(buf))
	s.mu.Unlock()
	return "Hello!", nil
}

// TestStdioShortCallsOnReader: the calls of a client that waits for each answer run on the
// reader's goroutine, none on a worker (handing each to a worker woke a second thread for
// every call).
func TestStdioShortCallsOnReader(t *testing.T) {
	rec := &stackRecorder{}
	f := newFixture(t, flow, map[string]runtime.MockFunc{"Greeter.greet": rec.mock})
	c := f.stdio(t, "")
	const calls = 20
	for i := range calls {
		if res := callTool(t, c, "Hello", map[string]any{"name": "Ada"}); res.IsError {
			t.Fatalf("call %d: %s", i, textOfResult(res))
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.stacks) != calls {
		t.Fatalf("%d calls reached the model, want %d", len(rec.stacks), calls)
	}
	onReader := 0
	for _, st := range rec.stacks {
		if strings.Contains(st, "(*stdioReader).runHere") {
			onReader++
		}
	}
	// A call may meet the hand-off timer (a slow machine, the race detector); most do not.
	if onReader < calls/2 {
		t.Errorf("%d of %d calls ran on the reader's goroutine; the first's stack:\n%s", onReader, calls, rec.stacks[0])
	}
}

// TestStdioReadsWhileACallRuns: a call that runs on the reader's goroutine and does not end
// hands the reading on: the client's next request is answered while the first still runs,
// and the first then ends with its own answer.
func TestStdioReadsWhileACallRuns(t *testing.T) {
	slow := newSlow()
	f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
	c := f.stdio(t, "2025-06-18")
	first := callWait(t, c, 1)
	waitStarted(t, slow, 1)
	// The first call holds its goroutine until released: the second is read only if the
	// reading was handed on.
	second := callWait(t, c, 2)
	waitStarted(t, slow, 1) // the second
	select {
	case <-first:
		t.Fatal("the first call ended before it was released")
	default:
	}
	close(slow.release)
	for i, ch := range []chan *mcp.CallToolResult{first, second} {
		select {
		case res := <-ch:
			if res == nil || res.IsError || textOfResult(res) != `{"n":`+string(rune('1'+i))+`}` {
				t.Errorf("call %d: %+v", i+1, res)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("call %d was not answered", i+1)
		}
	}
}

// callWait calls Wait with n on its own goroutine; its answer arrives on the channel.
func callWait(t *testing.T, c *client.Client, n int) chan *mcp.CallToolResult {
	answer := make(chan *mcp.CallToolResult, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "Wait"
		req.Params.Arguments = map[string]any{"n": n}
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		answer <- res
	}()
	return answer
}

// blockRecorder is a server input that records what ServeStdio asks of it (ReadBlocker).
type blockRecorder struct {
	io.Reader
	mu   sync.Mutex
	asks []bool
}

func (b *blockRecorder) BlockReads(block bool) {
	b.mu.Lock()
	b.asks = append(b.asks, block)
	b.mu.Unlock()
}

// last returns the newest ask, and whether there is one.
func (b *blockRecorder) last() (block, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.asks) == 0 {
		return false, false
	}
	return b.asks[len(b.asks)-1], true
}

// waitLast waits until the newest ask is want.
func (b *blockRecorder) waitLast(t *testing.T, want bool, when string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if got, ok := b.last(); ok && got == want {
			return
		}
		if time.Now().After(deadline) {
			got, ok := b.last()
			t.Fatalf("%s: the reader last asked for blocking reads %v (asked: %v), want %v", when, got, ok, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestStdioBlocksReadsWhenIdle: an input that can wait in read(2) or in the poller
// (ReadBlocker) is asked for read(2) while no request runs, and for the poller while one
// runs (a call that holds its goroutine, whose reading was handed on).
func TestStdioBlocksReadsWhenIdle(t *testing.T) {
	slow := newSlow()
	f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
	rec := &blockRecorder{}
	c, _ := f.stdioConnWith(t, "2025-06-18", func(in io.Reader) io.Reader { rec.Reader = in; return rec })
	rec.waitLast(t, true, "after initialize")
	first := callWait(t, c, 1)
	waitStarted(t, slow, 1)
	rec.waitLast(t, false, "while a call runs")
	close(slow.release)
	if res := <-first; res == nil || res.IsError {
		t.Fatalf("first call: %+v", res)
	}
	// The reader parked while the first ran sees the next request, runs it, and waits for
	// the one after in read(2), unless that call too ran past handOffAfter (the race
	// detector, a slow machine) and handed the reading on: then call again.
	for n := 2; ; n++ {
		if res := <-callWait(t, c, n); res == nil || res.IsError {
			t.Fatalf("call %d: %+v", n, res)
		}
		waitStarted(t, slow, 1)
		deadline := time.Now().Add(200 * time.Millisecond)
		for time.Now().Before(deadline) {
			if block, _ := rec.last(); block {
				return
			}
			time.Sleep(time.Millisecond)
		}
		if n == 50 {
			rec.waitLast(t, true, "once no call runs, after 50 calls")
			return
		}
	}
}
