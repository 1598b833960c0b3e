package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/runtime"
)

const slowFlow = `
tool S : Slow()

pipeline Wait(n: Number) -> Result:
  n |> S.wait(n: n)
`

func waitStarted(t *testing.T, slow *slowTool, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-slow.started:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d calls started", i, n)
		}
	}
}

// TestCancel: a client's notifications/cancelled (stdio) or a dropped request (HTTP) cancels
// the run, whose record is saved as cancelled; the connection goes on serving.
func TestCancel(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		slow := newSlow()
		f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
		c := f.stdio(t, "2025-06-18")
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "Wait"
			req.Params.Arguments = map[string]any{"n": 1}
			_, err := c.CallTool(ctx, req)
			errc <- err
		}()
		waitStarted(t, slow, 1)
		cancel() // mcp-go's client sends notifications/cancelled
		<-errc
		waitCancelled(t, f, slow, 1)
		close(slow.release)
		if res := callTool(t, c, "Wait", map[string]any{"n": 2}); res.IsError || textOfResult(res) != `{"n":2}` {
			t.Errorf("a call after the cancelled one: %q", textOfResult(res))
		}
	})
	t.Run("http", func(t *testing.T) {
		slow := newSlow()
		f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
		url := f.http(t, HTTPConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Wait","arguments":{"n":1}}}`
			req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		waitStarted(t, slow, 1)
		cancel()
		<-errc
		waitCancelled(t, f, slow, 1)
	})
	t.Run("stdio closed", func(t *testing.T) {
		// A client that goes away (its end of the pipes closed) mid-call: the run is
		// cancelled and saved, and ServeStdio returns.
		slow := newSlow()
		f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
		r := f.raw(t)
		r.send(initLine)
		r.next()
		for i := 0; i < 3; i++ {
			r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Wait","arguments":{"n":%d}}}`, i+1, i))
		}
		waitStarted(t, slow, 3)
		r.w.(io.Closer).Close()
		r.pc.fromSrv.Close()
		select {
		case <-r.pc.done:
		case <-time.After(20 * time.Second):
			t.Fatal("ServeStdio did not return when its input closed mid-call")
		}
		waitCancelled(t, f, slow, 3)
	})
}

// waitCancelled waits until n calls were cancelled and n run records say so.
func waitCancelled(t *testing.T, f *fixture, slow *slowTool, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var cancelled []string
		for _, id := range f.records(t) {
			rec := f.record(t, id)
			if rec.Status == runtime.Failed && rec.Error != nil && rec.Error.Code == runtime.CodeCancelled {
				cancelled = append(cancelled, id)
			}
		}
		if int(slow.cancelled.Load()) == n && len(cancelled) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls cancelled, %d records say cancelled (%v); want %d", slow.cancelled.Load(), len(cancelled), f.records(t), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestConcurrentCalls: 100 calls at once over stdio and over HTTP all run together and all
// answer, each with its own record.
func TestConcurrentCalls(t *testing.T) {
	const n = 100
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			slow := newSlow()
			f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
			var c interface {
				CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
			}
			if tr == "stdio" {
				c = f.stdio(t, "2025-06-18")
			} else {
				c = f.httpClient(t, HTTPConfig{}, "2025-06-18")
			}
			var wg sync.WaitGroup
			errs := make(chan string, n)
			for i := 0; i < n; i++ {
				wg.Go(func() {
					req := mcp.CallToolRequest{}
					req.Params.Name = "Wait"
					req.Params.Arguments = map[string]any{"n": i}
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					res, err := c.CallTool(ctx, req)
					if err != nil || res.IsError || textOfResult(res) != fmt.Sprintf(`{"n":%d}`, i) {
						errs <- fmt.Sprintf("call %d: %v %+v", i, err, res)
					}
				})
			}
			waitStarted(t, slow, n)
			if p := slow.peak.Load(); p != n {
				t.Errorf("%d calls ran at once, want %d", p, n)
			}
			close(slow.release)
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			if got := len(f.records(t)); got != n {
				t.Errorf("%d run records, want %d", got, n)
			}
		})
	}
}

// TestTooManyCalls: past MaxCalls, a request is refused at once, and serving goes on.
func TestTooManyCalls(t *testing.T) {
	slow := newSlow()
	f := newFixtureTools(t, slowFlow, nil, slow.registry(t))
	f.srv.cfg.MaxCalls = 2
	r := f.raw(t)
	r.send(initLine)
	r.next()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Wait","arguments":{"n":1}}}`)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Wait","arguments":{"n":2}}}`)
	waitStarted(t, slow, 2)
	r.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if m := r.next(); m["id"] != 3.0 || !strings.Contains(errMessage(m), "TOO_MANY_REQUESTS") {
		t.Errorf("third request: %v", m)
	}
	close(slow.release)
	got := map[any]bool{}
	for i := 0; i < 2; i++ {
		got[r.next()["id"]] = true
	}
	if !got[1.0] || !got[2.0] {
		t.Errorf("answers %v", got)
	}
}
