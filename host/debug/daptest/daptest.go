// Package daptest is a Debug Adapter Protocol client for tests: it sends requests (and bytes
// that are not requests at all) to an adapter and waits for its responses and events, as an
// editor would. host/debug's tests drive ServeDAP in-process with it, and cmd/halo's the real
// `halo debug --dap` process.
package daptest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/go-dap"
)

// Timeout is how long a Client waits for one response or event.
const Timeout = 30 * time.Second

// A Client talks to one adapter.
type Client struct {
	t   testing.TB
	w   io.Writer
	in  chan dap.Message
	err error

	mu      sync.Mutex
	seq     int
	backlog []dap.Message
	done    chan struct{}
}

// New starts reading the adapter's messages from r; requests go to w. The reading ends
// when r does (Wait waits for it).
func New(t testing.TB, r io.Reader, w io.Writer) *Client {
	c := &Client{t: t, w: w, in: make(chan dap.Message, 64), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer close(c.in)
		br := bufio.NewReader(r)
		for {
			m, err := dap.ReadProtocolMessage(br)
			if err != nil {
				c.err = err
				return
			}
			c.in <- m
		}
	}()
	return c
}

// Wait waits until the adapter's output has ended.
func (c *Client) Wait() {
	select {
	case <-c.done:
	case <-time.After(Timeout):
		c.t.Fatalf("daptest: the adapter's output did not end in %s", Timeout)
	}
}

// Raw sends b as it is.
func (c *Client) Raw(b string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, b); err != nil {
		c.t.Fatalf("daptest: write: %v", err)
	}
}

// Frame sends body as one message's content, with its Content-Length header.
func (c *Client) Frame(body string) {
	c.t.Helper()
	c.Raw(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

// Request sends a request and returns its seq.
func (c *Client) Request(command string, args any) int {
	c.t.Helper()
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	msg := map[string]any{"seq": seq, "type": "request", "command": command}
	if args != nil {
		msg["arguments"] = args
	}
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.Frame(string(b))
	return seq
}

// next returns the first message, from the backlog or the adapter, that ok accepts; the
// others wait in the backlog.
func (c *Client) next(what string, ok func(dap.Message) bool) dap.Message {
	c.t.Helper()
	c.mu.Lock()
	for i, m := range c.backlog {
		if ok(m) {
			c.backlog = append(c.backlog[:i], c.backlog[i+1:]...)
			c.mu.Unlock()
			return m
		}
	}
	c.mu.Unlock()
	deadline := time.After(Timeout)
	for {
		select {
		case m, open := <-c.in:
			if !open {
				c.t.Fatalf("daptest: the adapter's output ended (%v) while waiting for %s", c.err, what)
			}
			if ok(m) {
				return m
			}
			c.mu.Lock()
			c.backlog = append(c.backlog, m)
			c.mu.Unlock()
		case <-deadline:
			c.t.Fatalf("daptest: no %s in %s", what, Timeout)
		}
	}
}

// Response waits for the response to request seq.
func (c *Client) Response(seq int) dap.ResponseMessage {
	c.t.Helper()
	return c.next(fmt.Sprintf("response to request %d", seq), func(m dap.Message) bool {
		r, ok := m.(dap.ResponseMessage)
		return ok && r.GetResponse().RequestSeq == seq
	}).(dap.ResponseMessage)
}

// Call sends a request and waits for its response, which must be a success.
func (c *Client) Call(command string, args any) dap.ResponseMessage {
	c.t.Helper()
	r := c.Response(c.Request(command, args))
	if !r.GetResponse().Success {
		c.t.Fatalf("daptest: %s failed: %s", command, r.GetResponse().Message)
	}
	return r
}

// Fail sends a request and waits for its response, which must be an error response.
func (c *Client) Fail(command string, args any) *dap.ErrorResponse {
	c.t.Helper()
	r := c.Response(c.Request(command, args))
	er, ok := r.(*dap.ErrorResponse)
	if !ok || er.Success {
		c.t.Fatalf("daptest: %s succeeded, want an error response", command)
	}
	return er
}

// Event waits for the next event called name.
func (c *Client) Event(name string) dap.EventMessage {
	c.t.Helper()
	return c.next("event "+name, func(m dap.Message) bool {
		e, ok := m.(dap.EventMessage)
		return ok && e.GetEvent().Event == name
	}).(dap.EventMessage)
}

// ErrorResponse waits for an error response to request seq (0 for a message the adapter
// could not read a seq from).
func (c *Client) ErrorResponse(seq int) *dap.ErrorResponse {
	c.t.Helper()
	r := c.Response(seq)
	er, ok := r.(*dap.ErrorResponse)
	if !ok {
		c.t.Fatalf("daptest: request %d succeeded, want an error response", seq)
	}
	return er
}

// Scope returns the variables of the scope called name in frame, by name; it fails the test
// when the frame has no such scope.
func (c *Client) Scope(frame int, name string) map[string]dap.Variable {
	c.t.Helper()
	scopes := c.Call("scopes", map[string]any{"frameId": frame}).(*dap.ScopesResponse).Body.Scopes
	for _, s := range scopes {
		if s.Name != name {
			continue
		}
		vars := c.Call("variables", map[string]any{"variablesReference": s.VariablesReference}).(*dap.VariablesResponse).Body.Variables
		out := map[string]dap.Variable{}
		for _, v := range vars {
			out[v.Name] = v
		}
		return out
	}
	c.t.Fatalf("daptest: frame %d has no scope %s (%+v)", frame, name, scopes)
	return nil
}
