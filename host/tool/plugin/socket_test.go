package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
)

// TestCallsSocket: a plugin built with this SDK takes its calls on a calls socket; one that
// does not serve it (an older SDK) takes them on the Calls stream, and works the same.
func TestCallsSocket(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"sdk", nil, "socket"},
		{"older sdk", []string{"--count"}, "stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: tc.args}, plugin.Options{})
			p := openProbe(t, c)
			if got := c.CallsPath(); got != "" {
				t.Fatalf("before the first call: %q", got)
			}
			res, err := call(t, p, "echo", `{"data":"hi"}`)
			if err != nil || string(res) != `{"data":"hi"}` {
				t.Fatalf("echo: %s %v", res, err)
			}
			if got := c.CallsPath(); got != tc.want {
				t.Fatalf("calls go on the %q, want the %q", got, tc.want)
			}
		})
	}
}

// TestCallsSocketElsewhere: a plugin that answers the host's request for a calls socket with
// a socket outside its folder (one another process listens on) gets no connection there; the
// host takes the calls on the Calls stream instead.
func TestCallsSocketElsewhere(t *testing.T) {
	requireLinux(t)
	path := filepath.Join(t.TempDir(), "elsewhere")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	accepted := countConnections(ln)
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: []string{"--calls-socket=elsewhere:" + path}}, plugin.Options{})
	p := openProbe(t, c)
	if res, err := call(t, p, "echo", `{"data":"hi"}`); err != nil || string(res) != `{"data":"hi"}` {
		t.Fatalf("echo: %s %v", res, err)
	}
	if got := c.CallsPath(); got != "stream" {
		t.Fatalf("calls go on the %q, want the stream", got)
	}
	if n := accepted(); n != 0 {
		t.Fatalf("the host connected %d times to the socket the plugin named outside its folder", n)
	}
}

// TestCallerGivesUpWhileReading: the callers of a calls socket read it in turns. The one
// reading gives up (its context ends) while another call waits for its outcome: the waiting
// call still gets it, and the socket serves the calls after.
func TestCallerGivesUpWhileReading(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	p := openProbe(t, c)
	if _, err := call(t, p, "echo", `{"data":"warm"}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		// The only call in flight: its caller reads the socket.
		_, err := p.Call(ctx, tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":60000}`)})
		first <- err
	}()
	time.Sleep(50 * time.Millisecond)
	second := make(chan error, 1)
	go func() {
		res, err := p.Call(context.Background(), tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":400}`)})
		if err == nil && !strings.Contains(string(res), "slept") {
			err = fmt.Errorf("result %s", res)
		}
		second <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-first:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the call given up on: %v, want it cancelled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a caller blocked reading the socket did not return when its context ended")
	}
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("the call that waited: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call that waited never got its outcome: nobody read the socket after the reader gave up")
	}
	if res, err := call(t, p, "echo", `{"data":"after"}`); err != nil || string(res) != `{"data":"after"}` {
		t.Fatalf("echo after: %s %v", res, err)
	}
	if got := c.CallsPath(); got != "socket" {
		t.Fatalf("calls go on the %q", got)
	}
}

// TestCallsSocketStress runs calls of random sizes from many goroutines at once, some with a
// deadline that ends them in the middle (a caller reading the socket then stops inside a
// frame): every call that ends in time gets its own echo, and no call sees a crash.
func TestCallsSocketStress(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	p := openProbe(t, c)
	const workers, calls = 8, 60
	var wg sync.WaitGroup
	var timedOut, answered atomic.Int64
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for i := range calls {
				size := rng.IntN(128 << 10)
				data := fmt.Sprintf("%d-%d-", w, i) + strings.Repeat("x", size)
				args, _ := json.Marshal(map[string]string{"data": data})
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if rng.IntN(5) == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Duration(rng.IntN(2000))*time.Microsecond)
				}
				res, err := p.Call(ctx, tool.Request{Method: "echo", Args: args})
				cancel()
				var te *tool.Error
				switch {
				case err == nil:
					var got map[string]string
					if json.Unmarshal(res, &got) != nil || got["data"] != data {
						errs <- fmt.Errorf("call %d-%d got another call's answer (%d bytes)", w, i, len(res))
						return
					}
					answered.Add(1)
				case errors.As(err, &te) && te.Code == tool.CodeTimeout, errors.Is(err, context.DeadlineExceeded):
					timedOut.Add(1)
				default:
					errs <- fmt.Errorf("call %d-%d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d answered, %d ran out of time", answered.Load(), timedOut.Load())
	if got := c.CallsPath(); got != "socket" {
		t.Fatalf("calls went on the %q", got)
	}
}

// countConnections accepts and closes every connection to ln until it is called, then closes
// ln and returns how many there were.
func countConnections(ln net.Listener) func() int64 {
	var n atomic.Int64
	done := make(chan struct{})
	go func() { // ends when ln is closed
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return func() int64 {
		ln.Close()
		<-done
		return n.Load()
	}
}
