package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/tool"
)

// chaosFlag makes the test binary act as the stress test's server.
const chaosFlag = "-halo-mcp-chaos"

// chaosText is the text the chaos server answers call k with: k first, then filler up to
// size bytes, so a result delivered to the wrong call, cut or joined shows.
func chaosText(k, size int) string {
	head := strconv.Itoa(k) + ":"
	if size <= len(head) {
		return head
	}
	return head + strings.Repeat(string(rune('a'+k%26)), size-len(head))
}

// serveChaos is an MCP server that is correct but as awkward as the protocol allows: it
// answers calls concurrently and out of order after random pauses, reports progress before
// each answer, asks the client for pings in between, splits each message into writes of
// random sizes (so lines arrive in pieces) and sometimes writes two messages at once.
func serveChaos() int {
	var (
		wmu     sync.Mutex
		pending []byte // a message held back to go out with the next one
		rng     = rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
		pings   atomic.Int64
	)
	write := func(msg []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		msg = append(msg, '\n')
		if pending == nil && rng.IntN(8) == 0 {
			pending = msg
			return
		}
		msg = append(pending, msg...)
		pending = nil
		for len(msg) > 0 {
			n := len(msg)
			if n > 1 && rng.IntN(3) == 0 {
				n = 1 + rng.IntN(n-1)
			}
			if _, err := os.Stdout.Write(msg[:n]); err != nil {
				return
			}
			msg = msg[n:]
		}
	}
	flush := func() {
		wmu.Lock()
		defer wmu.Unlock()
		if pending != nil {
			os.Stdout.Write(pending)
			pending = nil
		}
	}
	// A held-back message must not wait for a next one that never comes.
	go func() {
		for range time.Tick(2 * time.Millisecond) {
			flush()
		}
	}()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	var wg sync.WaitGroup
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					K    int `json:"k"`
					Size int `json:"size"`
				} `json:"arguments"`
				Meta struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"chaos","version":"1"}}}`, m.ID, ProtocolVersion))
		case "tools/call":
			wg.Add(1)
			pause := time.Duration(rng.IntN(300)) * time.Microsecond
			ping := rng.IntN(20) == 0
			go func() {
				defer wg.Done()
				a := m.Params.Arguments
				if tok := m.Params.Meta.ProgressToken; tok != nil {
					t, _ := json.Marshal(tok)
					for i := 1; i <= 2; i++ {
						write(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%s,"progress":%d,"total":2,"message":"call %d"}}`, t, i, a.K))
					}
				}
				if ping {
					write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"ping-%d","method":"ping"}`, pings.Add(1)))
				}
				time.Sleep(pause)
				text, _ := json.Marshal(chaosText(a.K, a.Size))
				write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, m.ID, text))
			}()
		}
	}
	wg.Wait()
	flush()
	return 0
}

// TestStdioStress runs 10,000 calls of random sizes, 16 at a time, against the chaos
// server. Every call must get its own answer, whole, and every progress report of its own,
// in order; none may wait for its timeout. A lost wake-up or a mixed-up answer shows as a
// TIMEOUT or a wrong text, not as a slow benchmark.
func TestStdioStress(t *testing.T) {
	calls, workers := 10000, 16
	if testing.Short() {
		calls = 1000
	}
	cmd := append(serverCommand(t)[:1], chaosFlag)
	p := openT(t, Config{Name: "S", Command: cmd, Env: serverEnv(), Timeout: 20 * time.Second})
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for k := range next {
				if err := stressCall(p, rng, k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	start := time.Now()
feed:
	for k := range calls {
		select {
		case next <- k:
		case err := <-errs:
			t.Error(err)
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d calls in %v", calls, time.Since(start))
}

// stressCall makes call k with a random size: mostly small, some past the read buffer.
func stressCall(p *Provider, rng *rand.Rand, k int) error {
	var size int
	switch r := rng.IntN(1000); {
	case r < 2:
		size = 256<<10 + rng.IntN(64<<10) // longer than the read loop's buffer
	case r < 50:
		size = rng.IntN(16 << 10)
	default:
		size = rng.IntN(512)
	}
	var (
		mu  sync.Mutex
		got []tool.Progress
	)
	req := tool.Request{Method: "payload", Args: json.RawMessage(fmt.Sprintf(`{"k": %d, "size": %d}`, k, size))}
	withProgress := k%3 == 0
	if withProgress {
		req.Progress = func(pr tool.Progress) {
			mu.Lock()
			got = append(got, pr)
			mu.Unlock()
		}
	}
	out, err := p.Call(context.Background(), req)
	if err != nil {
		return fmt.Errorf("call %d (%d bytes): %w", k, size, err)
	}
	var text string
	if err := json.Unmarshal(out, &text); err != nil || text != chaosText(k, size) {
		return fmt.Errorf("call %d got %.40q… (%d bytes), want its own %d bytes", k, text, len(text), size)
	}
	if withProgress {
		mu.Lock()
		defer mu.Unlock()
		want := fmt.Sprintf("call %d", k)
		if len(got) != 2 || got[0].Filled != 1 || got[1].Filled != 2 || got[0].Message != want || got[1].Message != want {
			return fmt.Errorf("call %d: progress %+v, want its own two reports in order, before the answer", k, got)
		}
	}
	return nil
}

// A server that dies while a process it started still holds its stdout (an npx child, a
// helper in the background) fails the call in flight with TOOL_CRASHED when it dies, not
// at the call's timeout: the read loop would never see the end of that stdout.
func TestExitWithStdoutHeldOpen(t *testing.T) {
	cmd := serverCommand(t)
	p := openT(t, Config{Name: "T", Timeout: 20 * time.Second, Env: serverEnv(),
		Command: []string{"/bin/sh", "-c", `sleep 300 & exec "$0" "$1"`, cmd[0], cmd[1]}})
	mustCall(t, p, "add-numbers", `{"a": 1, "b": 2}`)
	start := time.Now()
	_, err := call(t, p, "exit", `{}`)
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeToolCrashed {
		t.Fatalf("got %v after %v, want TOOL_CRASHED", err, time.Since(start))
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call failed after %v: it waited for its timeout", d)
	}
	if got := mustCall(t, p, "add-numbers", `{"a": 2, "b": 3}`); got != "5" {
		t.Errorf("after the crash: %s", got)
	}
}

// A caller slow to take its progress reports holds up neither its own answer's arrival nor
// any other call: reports wait in the call's queue, not on the connection's read loop.
func TestSlowProgressReader(t *testing.T) {
	p := openT(t, Config{Name: "T", Command: serverCommand(t), Env: serverEnv(), Timeout: 20 * time.Second})
	mustCall(t, p, "add-numbers", `{"a": 0, "b": 0}`)
	var (
		release  = make(chan struct{})
		blocked  = make(chan struct{})
		once     sync.Once
		returned atomic.Bool
	)
	slow := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), tool.Request{Method: "progress", Args: json.RawMessage(`{}`),
			Progress: func(tool.Progress) {
				once.Do(func() { close(blocked) })
				select {
				case <-release:
				case <-time.After(5 * time.Second):
				}
				returned.Store(true)
			}})
		slow <- err
	}()
	<-blocked
	// While the slow reader sits on its first report, other calls go through.
	for i := range 20 {
		if got := mustCall(t, p, "add-numbers", fmt.Sprintf(`{"a": %d, "b": 1}`, i)); got != strconv.Itoa(i+1) {
			t.Fatalf("call %d: %s", i, got)
		}
	}
	if returned.Load() {
		t.Errorf("the other calls waited for the slow progress reader")
	}
	close(release)
	if err := <-slow; err != nil {
		t.Errorf("the slow call: %v", err)
	}
}
