package serve_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
	"halolang.dev/halo/internal/usertest"
)

// envTrickleServer makes the test binary halo serve's process for TestTrickle.
const envTrickleServer = "HALO_TRICKLE_SERVER"

// trickleFDs is the server process's file descriptor limit: low, as a busy machine's or a
// container's may be, so that the attack needs only thousands of connections to use them up.
const trickleFDs = 1024

// TestTrickle is issue 27 item 5's attack, as a stranger on the network makes it: thousands
// of connections to halo serve (loopback only), each sending a request a byte at a time and
// opened again as soon as one is closed. The server used to take every one until its file
// descriptors ran out, and /healthz stopped answering. Now it keeps at most its cap of
// connections open, closing the stranger's half-sent ones first to make room: /healthz and a
// request with the token are answered throughout, well within the header timeout. The
// server runs in a process of its own with a limit of 1,024 file descriptors; the attack is
// bounded in connections and in time. It runs again as halo-test.
func TestTrickle(t *testing.T) {
	if os.Getenv(envTrickleServer) != "" {
		trickleServer(t)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestTrickle$", "-test.count=1")
	cmd.Env = append(os.Environ(), envTrickleServer+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var addr string
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the server process did not start:\n%s", stderr.String())
	}

	// The attack: up to n connections at a time, each trickling "POST /approve/x ..." one
	// byte every 200 ms; a closed one is dialled again. It stops when the checks are done,
	// or after 30 s.
	n := 3000
	if lim := fdLimit(); lim > 0 && lim-400 < n {
		n = lim - 400
	}
	stop := make(chan struct{})
	var dialled, failed atomic.Int64
	var attack sync.WaitGroup
	const line = "POST /approve/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n"
	deadline := time.Now().Add(30 * time.Second)
	for w := range 8 {
		attack.Go(func() {
			var conns []net.Conn
			sent := []int{}
			defer func() {
				for _, c := range conns {
					c.Close()
				}
			}()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for time.Now().Before(deadline) {
				// At most 40 new connections a tick each: 1,600 a second in all.
				for k := 0; len(conns) < n/8+w%2 && k < 40; k++ {
					c, err := net.DialTimeout("tcp", addr, time.Second)
					dialled.Add(1)
					if err != nil {
						failed.Add(1)
						break
					}
					c.Write([]byte(line[:1]))
					conns, sent = append(conns, c), append(sent, 1)
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				for i := 0; i < len(conns); i++ {
					conns[i].SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
					if _, err := conns[i].Write([]byte{line[sent[i]%len(line)]}); err != nil {
						// Closed by the server: drop it, and dial another next time.
						conns[i].Close()
						conns[i], sent[i] = conns[len(conns)-1], sent[len(sent)-1]
						conns, sent = conns[:len(conns)-1], sent[:len(sent)-1]
						i--
						continue
					}
					sent[i]++
				}
			}
		})
	}

	// Under the attack: wait until it has as many connections open as the server has
	// descriptors, then ask.
	for dialled.Load() < int64(trickleFDs+500) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	// Answered well within the 10 s a stranger's connection may hold its headers: before,
	// nothing was answered until the server closed some of those. The race detector slows
	// the server several times over, so there the wait is longer.
	wait := 5 * time.Second
	if raceOn {
		wait = 20 * time.Second
	}
	client := &http.Client{Timeout: wait, Transport: &http.Transport{DisableKeepAlives: true}}
	ask := func(method, path, token, body string) (int, error) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("%s %s after %v: %w", method, path, time.Since(start).Round(time.Millisecond), err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	var problems []string
	for i := range 3 {
		for _, c := range []struct {
			method, path, token, body string
			want                      int
		}{
			{"GET", "/healthz", "", "", 200},
			{"GET", "/api/runs", "tok-trickle", "", 200},
			{"POST", "/api/runs", "tok-trickle", `{"pipeline": "Three", "inputs": {"x": "go"}}`, 202},
		} {
			st, err := ask(c.method, c.path, c.token, c.body)
			if err != nil || st != c.want {
				problems = append(problems, fmt.Sprintf("round %d: %s %s: %d %v", i, c.method, c.path, st, err))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	attack.Wait()
	stdin.Close()
	stats := ""
	for lines.Scan() {
		if s, ok := strings.CutPrefix(lines.Text(), "STATS "); ok {
			stats = s
		}
	}
	werr := cmd.Wait()
	t.Logf("attack: %d connections dialled, %d failed; server: %s", dialled.Load(), failed.Load(), stats)
	if len(problems) > 0 {
		t.Errorf("under the attack:\n%s", strings.Join(problems, "\n"))
	}
	if werr != nil || !strings.Contains(stats, "evicted") || strings.Contains(stats, "evicted=0 ") {
		t.Errorf("the server process: %v (stats %q): the attack never reached the cap?\n%s", werr, stats, stderr.String())
	}
	usertest.Rerun(t)
}

// trickleServer is halo serve for TestTrickle: the API with a token, on 127.0.0.1, in a
// process whose file descriptors are limited to trickleFDs. It prints ADDR, serves until its
// standard input closes, then prints its connection counts as STATS.
func trickleServer(t *testing.T) {
	lim := syscall.Rlimit{Cur: trickleFDs, Max: trickleFDs}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	store, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	mocks := runtime.NewMocks()
	for _, target := range []string{"A.one", "A.two", "A.three"} {
		mocks.Set(target, "ok")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(context.Background(), serve.Config{
		Program: program(t, src), Store: store, Token: "tok-trickle", Addr: ln.Addr().String(),
		Runtime: runtime.Config{Mocks: mocks, File: "flows.halo"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("ADDR %s\n", ln.Addr())
	io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	srv.Close(5 * time.Second)
	<-served
	st := srv.Conns()
	fmt.Printf("STATS cap=%d open=%d evicted=%d refused=%d\n", st.Cap, st.Open, st.Evicted, st.Refused)
}

// fdLimit is this process's file descriptor limit, 0 when unknown.
func fdLimit() int {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
