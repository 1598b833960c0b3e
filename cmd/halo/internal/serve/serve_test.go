package serve_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/cmd/halo/internal/root"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/pgtest"
	"halolang.dev/halo/internal/smallfs"
)

// TestMain lets the tests run this test binary as `halo` (and the built-in plugins, which
// are halo re-executed), and stops the PostgreSQL cluster the tests started.
func TestMain(m *testing.M) {
	testscript.Main(stopAfter{m}, map[string]func(){
		"halo": func() { os.Exit(root.Main(os.Args[1:], root.ProcessSystem())) },
		// An MCP stdio server (pool_test.go).
		"mcp-echo": echoServer,
	})
}

// stopAfter runs the tests, then stops the cluster they started (testscript.Main exits the
// process itself once they have run).
type stopAfter struct{ m *testing.M }

func (s stopAfter) Run() int {
	code := s.m.Run()
	pgtest.Stop()
	return code
}

const flows = `
agent A [openai/gpt-4o]
tool Sh : Bash(cwd: ".", timeout_ms: 120000)

pipeline Ask(x: String) -> Result:
  x |> A.draft("Draft.") as draft |! yield("Approve {{draft}}?") as answer |> System.Value({ d: draft, a: answer })

pipeline Slow(x: String) -> Result:
  x |> A.one("One.") |> Sh.run(command: "sleep 60")

pipeline Three(x: String) -> Result:
  x |> A.one("One.") |> A.two("Two.") |> A.three("Three.")
`

const mocks = `{"A.draft": "a draft", "A.one": "one", "A.two": "two", "A.three": "three"}`

func project(t *testing.T) string {
	dir := t.TempDir()
	for name, text := range map[string]string{"flows.halo": flows, "mocks.json": mocks} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A proc is a running `halo serve`.
type proc struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	errb bytes.Buffer
	done chan struct{}
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errb.String()
}

// logged waits up to 10 seconds for halo serve to log a line holding want (the request log
// is written off the requests' path, a moment after the answer), and reports whether it did.
func (p *proc) logged(want string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(p.stderr(), want) {
			return true
		}
	}
	return false
}

var listening = regexp.MustCompile(`listening: url=(http://\S+)`)

// startServe starts `halo serve --addr 127.0.0.1:0 ARGS` in dir, in a process group of its
// own, and waits until it listens.
func startServe(t *testing.T, dir string, env []string, args ...string) *proc {
	t.Helper()
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(halo, append([]string{"serve", "--addr", "127.0.0.1:0", "--mocks", "mocks.json", "--grace", "2s"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"NO_COLOR=1", "GORACE=atexit_sleep_ms=0"}, env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.errb.WriteString(line + "\n")
			p.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
			t.Errorf("halo serve did not stop on SIGTERM:\n%s", p.stderr())
		}
	})
	select {
	case p.url = <-urls:
	case <-p.done:
		t.Fatalf("halo serve exited: %s", p.stderr())
	case <-time.After(60 * time.Second):
		t.Fatalf("halo serve did not listen in 60s: %s", p.stderr())
	}
	return p
}

// do sends a JSON request and decodes the answer.
func (p *proc) do(method, path, body string) (int, map[string]any) {
	p.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, p.url+path, r)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", method, path, err, p.stderr())
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		p.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, m
}

// waitFor polls GET /api/runs/{id} on p until cond holds.
func (p *proc) waitFor(id string, limit time.Duration, cond func(map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		status, m := p.do("GET", "/api/runs/"+id, "")
		if status == 200 && cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("run %s: %v after %s\n%s", id, m, limit, p.stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// One halo serve with the folder store: it serves, logs one line per request, and stops on
// SIGTERM with exit status 0, its runs saved.
func TestServeAndStop(t *testing.T) {
	dir := project(t)
	p := startServe(t, dir, nil)
	status, m := p.do("POST", "/api/runs?wait=20s", `{"pipeline": "Three", "inputs": {"x": "a"}}`)
	if status != 200 || m["status"] != "completed" || m["output"] != "three" {
		t.Fatalf("%d %v", status, m)
	}
	id := m["runId"].(string)
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit status %d\n%s", code, p.stderr())
	}
	store, err := runstore.OpenSQLite(filepath.Join(dir, ".halo", "runs"), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if rec, err := store.Load(id); err != nil || rec.Status != runtime.Completed {
		t.Errorf("record: %+v %v, want the run saved completed", rec, err)
	}
	log := p.stderr()
	if !strings.Contains(log, "request: method=POST path=/api/runs status=200") || !strings.Contains(log, "no HALO_SERVE_TOKEN") {
		t.Errorf("log:\n%s", log)
	}
	// A second server on the same folder is refused while the first runs.
	q := startServe(t, dir, nil)
	halo, _ := exec.LookPath("halo")
	second := exec.Command(halo, "serve", "--addr", "127.0.0.1:0", "--mock")
	second.Dir = dir
	out, err := second.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another process") {
		t.Errorf("a second halo serve on one folder: %v %s", err, out)
	}
	// halo resume beside it is refused: the server continues its runs itself.
	_, m = q.do("POST", "/api/runs?wait=20s", `{"pipeline": "Ask", "inputs": {"x": "a"}}`)
	paused := m["runId"].(string)
	resume := exec.Command(halo, "resume", "flows.halo", paused, "--payload", "yes", "--mocks", "mocks.json")
	resume.Dir = dir
	out, err = resume.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "[STORE_BUSY]") {
		t.Errorf("halo resume beside halo serve: %v %s", err, out)
	}
	if _, got := q.do("GET", "/api/runs/"+paused, ""); got["status"] != "paused" {
		t.Errorf("the run after a refused resume: %v", got)
	}
}

// The Slack signing secret comes from HALO_SLACK_SIGNING_SECRET: with it, halo serve takes
// Slack's interactions, and refuses one that is not signed with it.
func TestSlackSigningSecret(t *testing.T) {
	dir := project(t)
	p := startServe(t, dir, []string{"HALO_SLACK_SIGNING_SECRET=8f742231b10e8888abcd99yyyzzz85a5"})
	req, _ := http.NewRequest("POST", p.url+"/slack/interactions", strings.NewReader("payload=%7B%7D"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(time.Now().Unix(), 10))
	req.Header.Set("X-Slack-Signature", "v0="+strings.Repeat("ab", 32))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "SLACK_SIGNATURE") {
		t.Errorf("an unsigned interaction: %d %s", resp.StatusCode, b)
	}
}

// Two halo serve processes on one PostgreSQL database: a run paused on A, signalled on A
// and B at once, continues exactly once; B reads and lists A's runs.
func TestReplicasSignalOnce(t *testing.T) {
	url := pgtest.DB(t)
	a := startServe(t, project(t), nil, "--store", url)
	b := startServe(t, project(t), nil, "--store", url)
	status, m := a.do("POST", "/api/runs?wait=20s", `{"pipeline": "Ask", "inputs": {"x": "a"}}`)
	if status != 200 || m["status"] != "paused" {
		t.Fatalf("%d %v", status, m)
	}
	id := m["runId"].(string)
	if _, got := b.do("GET", "/api/runs/"+id, ""); got["status"] != "paused" {
		t.Fatalf("B reads %v", got)
	}
	var wg sync.WaitGroup
	var ok, refused atomic.Int32
	for i := range 10 {
		p := []*proc{a, b}[i%2]
		wg.Go(func() {
			req, _ := http.NewRequest("POST", p.url+"/api/runs/"+id+"/signal", strings.NewReader(fmt.Sprintf(`{"channel": "yield", "payload": %d}`, i)))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 202:
				ok.Add(1)
			case 409:
				refused.Add(1)
			default:
				t.Errorf("signal: %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 9 {
		t.Fatalf("%d signals continued the run, %d were refused; want 1 and 9", ok.Load(), refused.Load())
	}
	done := b.waitFor(id, 20*time.Second, func(m map[string]any) bool { return m["status"] == "completed" })
	_, evs := b.do("GET", "/api/runs/"+id+"/events", "")
	completions := 0
	for _, e := range evs["events"].([]any) {
		if e := e.(map[string]any); e["type"] == "run" && e["status"] == "completed" {
			completions++
		}
	}
	if completions != 1 {
		t.Errorf("%d completions: %v", completions, done)
	}
	if _, list := b.do("GET", "/api/runs", ""); len(list["runs"].([]any)) != 1 {
		t.Errorf("B lists %v", list)
	}
}

// kill -9 a replica mid-run: the other fails the run HOST_LOST within the lease (and the
// interval it looks at), with the events it had.
func TestKilledReplica(t *testing.T) {
	url := pgtest.DB(t)
	const lease = 2 * time.Second
	a := startServe(t, project(t), nil, "--store", url, "--lease", lease.String())
	b := startServe(t, project(t), nil, "--store", url, "--lease", lease.String())
	status, m := a.do("POST", "/api/runs", `{"pipeline": "Slow", "inputs": {"x": "a"}}`)
	if status != 202 {
		t.Fatalf("%d %v", status, m)
	}
	id := m["runId"].(string)
	b.waitFor(id, 20*time.Second, func(m map[string]any) bool { return m["status"] == "running" && m["events"].(float64) >= 1 })
	killed := time.Now()
	syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
	<-a.done
	got := b.waitFor(id, 20*time.Second, func(m map[string]any) bool { return m["status"] != "running" })
	took := time.Since(killed)
	t.Logf("the run was failed %s after the kill (lease %s)", took.Round(time.Millisecond), lease)
	if got["status"] != "failed" || got["error"].(map[string]any)["code"] != "HOST_LOST" {
		t.Fatalf("lost run: %v", got)
	}
	// Renewals come every lease/3: the lease runs out at most `lease` after the kill, and B
	// looks every lease/3; allow as much again for a loaded machine.
	if took > 2*lease+lease/3 {
		t.Errorf("the run was failed %s after the kill, more than the lease (%s) and B's interval", took, lease)
	}
	_, evs := b.do("GET", "/api/runs/"+id+"/events", "")
	list := evs["events"].([]any)
	if len(list) < 2 || list[0].(map[string]any)["type"] != "llm" || list[len(list)-1].(map[string]any)["error"].(map[string]any)["code"] != "HOST_LOST" {
		t.Errorf("events of the lost run: %v", list)
	}
}

// TestServerCollectsLessOften: halo serve runs Go's collector at GOGC=400, as halo mcp does
// (cmdutil.ServerGC): once it serves, a collection waits until the heap is 16 MB or more;
// a GOGC the user sets wins. The runtime's trace (GODEBUG=gctrace=1) says what heap each
// collection aimed at.
func TestServerCollectsLessOften(t *testing.T) {
	goal := regexp.MustCompile(`(?m)^gc \d+ @.* (\d+) MB goal`)
	goals := func(p *proc) []int {
		var out []int
		for _, m := range goal.FindAllStringSubmatch(p.stderr(), -1) {
			n, _ := strconv.Atoi(m[1])
			out = append(out, n)
		}
		return out
	}
	big, _ := json.Marshal(strings.Repeat("x", 64<<10))
	body := `{"pipeline": "Three", "inputs": {"x": ` + string(big) + `}}`
	for _, tc := range []struct {
		env      []string
		min, max int // the last collection's goal, in MB
	}{
		{[]string{"GODEBUG=gctrace=1"}, 16, 1 << 20},
		{[]string{"GODEBUG=gctrace=1", "GOGC=100"}, 0, 15},
	} {
		p := startServe(t, project(t), tc.env)
		before := -1 // collections before it served
		var got []int
		for i := 0; i < 3000 && (before < 0 || len(got) < before+2); i++ {
			if status, m := p.do("POST", "/api/runs?wait=20s", body); status != 200 || m["status"] != "completed" {
				t.Fatalf("%d %v", status, m)
			}
			got = goals(p)
			if before < 0 {
				before = len(got)
			}
		}
		if len(got) < before+2 {
			t.Fatalf("%v: %d collections traced while serving; stderr:\n%.2000s", tc.env, len(got)-before, p.stderr())
		}
		if last := got[len(got)-1]; last < tc.min || last > tc.max {
			t.Errorf("%v: the last collection aimed at %d MB, want %d to %d", tc.env, last, tc.min, tc.max)
		}
	}
}

// halo serve --mocks gives each run its own scripts (the second run of a scripted agent no
// longer finds its answers used up), and takes a mocks file by halo run's rule: its keys may
// name what the .halo files beside it declare, here b.halo, which this server does not serve.
func TestServeMocksPerRun(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"a.halo": "agent A [openai/gpt-4o]\npipeline Two(x: String) -> Result:\n  x |> A.one(\"One.\") |> A.two(\"Two.\")\n",
		"b.halo": "agent B [openai/gpt-4o]\npipeline Other(x: String) -> Result:\n  x |> B.other()\n",
		// A one-answer script each: a second run that shared them would fail with MOCK.
		"scripted.json": `{"A.one": ["one"], "A.two": ["two"], "B.other": "other"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startServe(t, dir, nil, "--mocks", "scripted.json", "a.halo")
	for i := 1; i <= 3; i++ {
		status, m := p.do("POST", "/api/runs?wait=20s", `{"pipeline": "Two", "inputs": {"x": "a"}}`)
		if status != 200 || m["status"] != "completed" || m["output"] != "two" {
			t.Fatalf("run %d: %d %v", i, status, m)
		}
	}
}

// A run halo run or halo mcp pauses beside a halo serve of the same folder: halo resume is
// refused beside the server, and the hint each prints says the two ways that work: answer it
// through the server, which shares the store, or stop the server and halo resume it.
func TestPausedBesideServe(t *testing.T) {
	dir := project(t)
	p := startServe(t, dir, nil)
	halo, _ := exec.LookPath("halo")
	command := func(args ...string) (string, error) {
		c := exec.Command(halo, args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "NO_COLOR=1")
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := command("run", "flows.halo", "Ask", "-i", "x=a", "--mocks", "mocks.json")
	m := regexp.MustCompile(`paused: run ([0-9a-f]+) waits`).FindStringSubmatch(out)
	if err == nil || m == nil || !strings.Contains(out, "(a halo serve is serving this folder's runs, and halo resume is refused beside it: answer the run through the server, on its Studio page or with POST /api/runs/") {
		t.Fatalf("halo run beside halo serve: %v\n%s", err, out)
	}
	fromRun := m[1]

	// halo mcp over stdio, in the same folder; its stdin stays open until the call answers
	// (its end would cancel the call).
	mcpCmd := exec.Command(halo, "mcp", "--mocks", "mocks.json", "flows.halo")
	mcpCmd.Dir = dir
	in, _ := mcpCmd.StdinPipe()
	stdout, _ := mcpCmd.StdoutPipe()
	if err := mcpCmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Ask","arguments":{"x":"b"}}}
`)
	var mcpOut []byte
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if line := sc.Bytes(); bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":2,`)) {
			mcpOut = append([]byte(nil), line...)
			break
		}
	}
	in.Close()
	if err := mcpCmd.Wait(); err != nil {
		t.Fatalf("halo mcp: %v", err)
	}
	m = regexp.MustCompile(`run id ([0-9a-f]+)`).FindStringSubmatch(string(mcpOut))
	want := "Continue it in " + dir + " with: halo resume flows.halo "
	if m == nil || !strings.Contains(string(mcpOut), want) || !strings.Contains(string(mcpOut), "once the halo serve that serves that folder's runs has stopped (halo resume is refused beside it), or answer it through that server now: on its Studio page, or with POST /api/runs/"+m[1]+"/signal") {
		t.Fatalf("halo mcp's pause beside halo serve:\n%s", mcpOut)
	}
	fromMCP := m[1]

	for _, id := range []string{fromRun, fromMCP} {
		if out, err := command("resume", "flows.halo", id, "--payload", "yes", "--mocks", "mocks.json"); err == nil || !strings.Contains(out, "[STORE_BUSY]") {
			t.Errorf("halo resume beside halo serve: %v\n%s", err, out)
		}
	}
	// The first way: the server answers the run halo run paused.
	if status, got := p.do("POST", "/api/runs/"+fromRun+"/signal?wait=20s", `{"channel": "yield", "payload": "yes"}`); status/100 != 2 {
		t.Errorf("the server did not take the answer to run %s: %d %v", fromRun, status, got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, got := p.do("GET", "/api/runs/"+fromRun, "")
		if got["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s answered through the server did not complete: %v", fromRun, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The second way: once the server stops, halo resume continues the run halo mcp paused.
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	<-p.done
	for _, id := range []string{fromMCP} {
		if out, err := command("resume", "flows.halo", id, "--payload", "yes", "--mocks", "mocks.json", "--json"); err != nil || !strings.Contains(out, `"status": "completed"`) {
			t.Errorf("halo resume %s once the server stopped: %v\n%s", id, err, out)
		}
	}
}

// On a full disk, halo serve answers the runs it cannot save with 503 STORE (the first
// commit's runs may be answered before it fails: within the commit window docs/cli.md
// states), keeps the runs saved before, and once stopped says that records could not be
// saved and exits 1, not 0. Needs root, for a small filesystem of its own (CI runs as root;
// host/serve's TestRunNotSavedIsReported says the same of the answers as any user).
func TestServeFullDisk(t *testing.T) {
	dir := smallfs.Mount(t, 640<<10)
	for name, text := range map[string]string{"flows.halo": flows, "mocks.json": mocks} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startServe(t, dir, nil)
	big := strings.Repeat("x", 3000)
	var first map[string]any
	var refused map[string]any
	for i := 0; i < 2000 && refused == nil; i++ {
		status, m := p.do("POST", "/api/runs?wait=20s", fmt.Sprintf(`{"pipeline": "Three", "inputs": {"x": "%s%d"}}`, big, i))
		switch {
		case status == 200 && m["status"] == "completed":
			if first == nil {
				first = m
			}
		case status == 503:
			refused = m
		default:
			t.Fatalf("run %d: %d %v", i, status, m)
		}
	}
	if first == nil || refused == nil {
		t.Fatalf("runs on a full disk: first %v, refused %v\n%s", first, refused, p.stderr())
	}
	e, _ := refused["error"].(map[string]any)
	if e["code"] != "STORE" || !strings.Contains(fmt.Sprint(e["message"]), "ended completed, but its record could not be saved") ||
		!strings.Contains(fmt.Sprint(e["message"]), "the disk is full") {
		t.Errorf("a run whose record could not be saved: %v", refused)
	}
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.stderr(), "the disk is full") || !strings.Contains(p.stderr(), "[STORE]") {
		t.Errorf("halo serve stopped with records it could not save: exit status %d, want 1 saying so\n%s", code, p.stderr())
	}
	store, err := runstore.OpenSQLite(filepath.Join(dir, ".halo", "runs"), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if rec, err := store.Load(first["runId"].(string)); err != nil || rec.Status != runtime.Completed {
		t.Errorf("the first run: %+v %v, want it saved completed", rec, err)
	}
}
