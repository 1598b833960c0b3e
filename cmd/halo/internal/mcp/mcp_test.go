package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	mcpcmd "halolang.dev/halo/cmd/halo/internal/mcp"
	"halolang.dev/halo/cmd/halo/internal/root"
	servecmd "halolang.dev/halo/cmd/halo/internal/serve"
	"halolang.dev/halo/host/mcpserver"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/sqlitedb"
	"halolang.dev/halo/internal/usertest"
	"halolang.dev/halo/registry"
)

// TestMain lets the tests run this test binary as `halo` (and the built-in plugins, which
// are halo re-executed).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"halo": func() { os.Exit(profiled(func() int { return root.Main(os.Args[1:], root.ProcessSystem()) })) },
		// halo mcp with runs not saved, for the benchmarks (see BenchmarkToolsCall).
		"halo-mcp-norecords": func() {
			os.Exit(profiled(func() int {
				f := root.ProcessSystem()
				f.Logger = hclog.NewNullLogger()
				cmdutil.ServerGC(f.Env)
				srv, err := mcpcmd.Open(f, &mcpcmd.Options{F: f, Paths: os.Args[1:], Mocks: "mocks.json", NoRecords: true})
				if err == nil {
					err = srv.ServeStdio(context.Background(), f.IO.In, f.IO.Out)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
				return 0
			}))
		},
		// halo serve with runs not saved, for the benchmarks (serve-norecords in
		// BenchmarkToolsCall): what /mcp costs around the save.
		"halo-serve-norecords": func() {
			os.Exit(profiled(func() int {
				f := root.ProcessSystem()
				f.Logger = hclog.New(&hclog.LoggerOptions{Name: "halo", Level: hclog.Info, Output: f.IO.ErrOut, Color: hclog.ColorOff, TimeFormat: "15:04:05.000"})
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				cmd := servecmd.NewCmdServe(f, func(ctx context.Context, o *servecmd.Options) error {
					o.NoRecords = true
					return servecmd.Run(ctx, o)
				})
				cmd.SetArgs(os.Args[1:])
				if err := cmd.ExecuteContext(ctx); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
				return 0
			}))
		},
		// The benchmarks' floor: mcp-go's own stdio server with a constant tool.
		"mcpgo-constant": func() {
			if err := server.ServeStdio(constantServer()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			os.Exit(0)
		},
		// The same over Streamable HTTP (stateless, JSON), a process of its own: it prints
		// its URL and serves until SIGTERM, which ends it as it ends halo serve, with its
		// CPU profile written (see profiled), so both sides of the comparison can be profiled.
		"mcpgo-http": func() {
			os.Exit(profiled(func() int {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
				cmdutil.ServerGC(cmdutil.EnvFromList(os.Environ()))
				stop := make(chan os.Signal, 1)
				signal.Notify(stop, syscall.SIGTERM)
				var served sync.WaitGroup
				served.Go(func() { http.Serve(ln, server.NewStreamableHTTPServer(constantServer(), server.WithStateLess(true))) })
				fmt.Printf("http://%s/mcp\n", ln.Addr())
				<-stop
				ln.Close()
				served.Wait()
				return 0
			}))
		},
	})
}

// profiled runs main, with a CPU profile written to $HALO_BENCH_CPUPROFILE.PID when that is
// set (each server process of the benchmarks: where the time of a call goes), and the
// profile of what it allocated to $HALO_BENCH_CPUPROFILE.PID.allocs.
func profiled(main func() int) int {
	path := os.Getenv("HALO_BENCH_CPUPROFILE")
	if path == "" {
		return main()
	}
	f, err := os.Create(path + "." + strconv.Itoa(os.Getpid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pprof.StopCPUProfile()
	defer func() {
		if af, err := os.Create(f.Name() + ".allocs"); err == nil {
			_ = pprof.Lookup("allocs").WriteTo(af, 0)
			af.Close()
		}
	}()
	return main()
}

// A proc is a real `halo mcp` process and an mcp-go client speaking to it.
type proc struct {
	cmd    *exec.Cmd
	c      *client.Client
	stdin  io.WriteCloser
	stdout *bytes.Buffer // everything the process wrote to stdout
	outMu  *sync.Mutex
	stderr *bytes.Buffer
	done   chan struct{}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startMCP starts `halo mcp args...` in dir and initializes a client with version ("" for
// the newest).
func startMCP(t *testing.T, dir, version string, opts []client.ClientOption, args ...string) *proc {
	t.Helper()
	return startMCPEnv(t, dir, nil, version, opts, args...)
}

// startMCPEnv is startMCP with the variables env added to halo mcp's environment.
func startMCPEnv(t *testing.T, dir string, env []string, version string, opts []client.ClientOption, args ...string) *proc {
	t.Helper()
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(halo, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "NO_COLOR=1", "GORACE=atexit_sleep_ms=0"), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, stdout: &bytes.Buffer{}, outMu: &sync.Mutex{}, stderr: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = lockedWriter{p.outMu, p.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	tee := io.TeeReader(out, lockedWriter{p.outMu, p.stdout})
	tr := transport.NewIO(tee, stdin, nil)
	p.c = client.NewClient(tr, opts...)
	if err := p.c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.c.Close()
		stdin.Close()
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("halo mcp did not exit when its stdin closed; stderr:\n%s", p.errText())
		}
	})
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := p.c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v; stderr:\n%s", err, p.errText())
	}
	return p
}

func (p *proc) errText() string {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	return p.stderr.String()
}

func (p *proc) outText() string {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	return p.stdout.String()
}

func call(t *testing.T, p *proc, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := p.c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v; stderr:\n%s", name, err, p.errText())
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func project(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// record reads run runID's record as halo's own readers do (halo replay, halo resume). halo
// mcp writes a completed or failed run's record a commit after its answer (a paused run's
// before it is reported), so with want it waits for the record to say that status.
func record(t *testing.T, dir, runID string, want ...string) map[string]any {
	t.Helper()
	store, err := runstore.OpenSQLite(filepath.Join(dir, ".halo", "runs"), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, err := store.Load(runID)
	for deadline := time.Now().Add(10 * time.Second); (err != nil || len(want) > 0 && string(r.Status) != want[0]) && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
		r, err = store.Load(runID)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

func runID(r *mcp.CallToolResult) string {
	if r.Meta == nil {
		return ""
	}
	id, _ := r.Meta.AdditionalFields["halo/runId"].(string)
	return id
}

const flows = `
agent Editor [openai/gpt-4o-mini]

# Shout a draft, ask before publishing it.
pipeline Publish(draft: String) -> JSON:
  draft
    |> Editor.shout("Shout it.") as text
    |! yield("Publish {{text}}?") as answer
    |> System.Value({ text: text, answer: answer })

pipeline Sum(a: Number, b: Number) -> JSON:
  a |> System.Value({ a: a, b: b })

pipeline Broken() -> String:
  "x" |> System.Fail("out of coffee")
`

const helpers = `
# In another file of the folder: one server serves both.
pipeline Echo(s: String) -> String:
  s |> System.Value()
`

// TestProcess: a real halo mcp over stdio, serving a folder of two files: every pipeline is
// listed, each result kind comes back, runs are saved in .halo/runs of the folder it started
// in, and a paused run is continued with the halo resume command the result names.
func TestProcess(t *testing.T) {
	for _, version := range []string{"", "2025-06-18", "2024-11-05"} {
		t.Run("version "+version, func(t *testing.T) {
			dir := project(t, map[string]string{"flows/main.halo": flows, "flows/more.halo": helpers,
				"mocks.json": `{"Editor.shout": "HELLO"}`})
			// Started elsewhere, as desktop clients do, with --dir naming the project.
			p := startMCP(t, t.TempDir(), version, nil, "--dir", dir, "--mocks", "mocks.json", "flows")
			list, err := p.c.ListTools(context.Background(), mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range list.Tools {
				names = append(names, tl.Name)
			}
			if strings.Join(names, " ") != "Publish Sum Broken Echo" && len(names) != 4 {
				t.Errorf("tools %v", names)
			}

			res := call(t, p, "Sum", map[string]any{"a": 1, "b": 2})
			if res.IsError || text(res) != `{"a":1,"b":2}` || record(t, dir, runID(res), "completed")["status"] != "completed" {
				t.Errorf("Sum: %q", text(res))
			}
			// A run that finished is a row of the store's database, and halo replay reads it
			// from there.
			sum := runID(res)
			if _, err := os.Stat(filepath.Join(dir, ".halo", "runs", runstore.DBName)); err != nil {
				t.Errorf("the run store's database: %v", err)
			}
			replay := exec.Command("halo", "replay", "flows", sum, "--json")
			replay.Dir = dir
			if out, err := replay.CombinedOutput(); err != nil || !strings.Contains(string(out), `"status": "completed"`) || !strings.Contains(string(out), sum) {
				t.Errorf("halo replay of a logged run: %v\n%s", err, out)
			}
			res = call(t, p, "Echo", map[string]any{"s": "hi"})
			if text(res) != "hi" {
				t.Errorf("Echo: %q", text(res))
			}
			echo := runID(res)
			res = call(t, p, "Broken", nil)
			if !res.IsError || !strings.Contains(text(res), "out of coffee [PIPELINE_FAILED]") || record(t, dir, runID(res), "failed")["status"] != "failed" {
				t.Errorf("Broken: %q", text(res))
			}
			// The store made the runs' ids: their rows' keys follow one another.
			record(t, dir, echo, "completed")
			db, err := sqlitedb.Open(filepath.Join(dir, ".halo", "runs", runstore.DBName), false)
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range []string{sum, echo, runID(res)} {
				var key int64
				if err := db.QueryRow(`SELECT key FROM halo_runs WHERE id = ?`, id).Scan(&key); err != nil || key != int64(i+1) {
					t.Errorf("run %s: key %d (%v), want %d", id, key, err, i+1)
				}
			}
			db.Close()
			res = call(t, p, "Publish", map[string]any{"draft": "hello"})
			id := runID(res)
			want := "Continue it in " + dir + " with: halo resume flows " + id + " --payload <answer>"
			if res.IsError || !strings.Contains(text(res), "Paused waiting for yield, run id "+id+": Publish HELLO?") || !strings.Contains(text(res), want) {
				t.Fatalf("Publish: %q", text(res))
			}
			resume := exec.Command("halo", "resume", "flows", id, "--payload", "yes", "--mocks", "mocks.json", "--json")
			resume.Dir = dir
			out, err := resume.CombinedOutput()
			if err != nil || !strings.Contains(string(out), `"answer": "yes"`) {
				t.Errorf("halo resume as the result says: %v\n%s", err, out)
			}
		})
	}
}

// TestStdoutIsMCPOnly: with every log line on (trace) and plugins starting, everything halo
// mcp writes to stdout is a JSON-RPC message; the logs went to stderr.
func TestStdoutIsMCPOnly(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": `
tool Sh : Bash(timeout_ms: 20000)
pipeline Shell(cmd: String) -> Result:
  cmd |> Sh.run(command: cmd)
`})
	p := startMCP(t, dir, "", nil, "--log-level", "trace", "flow.halo")
	res := call(t, p, "Shell", map[string]any{"cmd": "echo to-stdout; echo to-stderr >&2"})
	if res.IsError || !strings.Contains(text(res), "to-stdout") {
		t.Fatalf("Shell: %q", text(res))
	}
	p.c.Close()
	p.stdin.Close()
	<-p.done
	lines := strings.Split(strings.TrimSpace(p.outText()), "\n")
	if len(lines) < 2 {
		t.Fatalf("stdout: %q", p.outText())
	}
	for _, l := range lines {
		var m struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || m.JSONRPC != "2.0" {
			t.Errorf("stdout line that is not a JSON-RPC message: %q", l)
		}
	}
	if !strings.Contains(p.errText(), "[TRACE]") && !strings.Contains(p.errText(), "[DEBUG]") {
		t.Errorf("no logs on stderr at trace level:\n%s", p.errText())
	}
}

// sleepers returns the pids of processes running `sleep marker`.
func sleepers(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), "sleep\x00"+marker) {
			// A zombie has an empty cmdline, so this process still runs.
			out = append(out, pid)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const sleeper = `
tool Sh : Bash(timeout_ms: 120000)
pipeline Nap(marker: String) -> Result:
  marker |> Sh.run(command: "sleep {{marker}}")
`

// TestCancelKillsBash: a client cancelling a call (notifications/cancelled) stops the run
// and kills the Bash command it started; the run is saved as cancelled, and the server goes
// on serving.
func TestCancelKillsBash(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": sleeper})
	p := startMCP(t, dir, "2025-06-18", nil, "flow.halo")
	marker := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "Nap"
		req.Params.Arguments = map[string]any{"marker": marker}
		_, err := p.c.CallTool(ctx, req)
		errc <- err
	}()
	waitFor(t, "the Bash command to start", func() bool { return len(sleepers(t, marker)) > 0 })
	cancel()
	if err := <-errc; err == nil {
		t.Error("the cancelled call returned no error")
	}
	waitFor(t, "the Bash command to be killed", func() bool { return len(sleepers(t, marker)) == 0 })
	waitFor(t, "the run record to say cancelled", func() bool { return cancelledRuns(t, dir) == 1 })
	if res := call(t, p, "Nap", map[string]any{"marker": "0"}); res.IsError {
		t.Errorf("a call after the cancel: %q", text(res))
	}
}

// cancelledRuns counts the runs saved as cancelled, in files and in run logs.
func cancelledRuns(t *testing.T, dir string) int {
	runs := filepath.Join(dir, ".halo", "runs")
	n := 0
	cancelled := func(rec *runtime.Record) {
		if rec.Status == runtime.Failed && rec.Error != nil && strings.Contains(fmt.Sprint(*rec.Error), "CANCELLED") {
			n++
		}
	}
	store, err := runstore.OpenSQLite(runs, runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.List(context.Background(), runstore.Query{Status: runtime.Failed, Limit: runstore.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range page.Runs {
		if rec, err := store.Load(s.RunID); err == nil {
			cancelled(rec)
		}
	}
	return n
}

// TestDisconnectKillsBash: a client that goes away mid-call (its pipes closed) leaves no
// process behind: the runs are cancelled and saved, and halo mcp exits.
func TestDisconnectKillsBash(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": sleeper})
	p := startMCP(t, dir, "", nil, "flow.halo")
	marker := fmt.Sprintf("%d.%d", 4000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	for i := 0; i < 3; i++ {
		go func() {
			req := mcp.CallToolRequest{}
			req.Params.Name = "Nap"
			req.Params.Arguments = map[string]any{"marker": marker}
			p.c.CallTool(context.Background(), req)
		}()
	}
	waitFor(t, "the Bash commands to start", func() bool { return len(sleepers(t, marker)) == 3 })
	p.c.Close()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("halo mcp did not exit; stderr:\n%s", p.errText())
	}
	if n := len(sleepers(t, marker)); n != 0 {
		t.Errorf("%d Bash commands left running after halo mcp exited", n)
	}
	if n := cancelledRuns(t, dir); n != 3 {
		t.Errorf("%d runs saved as cancelled, want 3", n)
	}
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signaled() {
		t.Errorf("halo mcp ended by a signal: %v", p.cmd.ProcessState)
	}
}

// TestInvalidFiles: a file that does not validate is reported on stderr and halo mcp exits 1
// without serving.
func TestInvalidFiles(t *testing.T) {
	dir := project(t, map[string]string{"bad.halo": "pipeline P(x: String) -> Result:\n  x |> Nope.call()\n", "good.halo": helpers})
	cmd := exec.Command("halo", "mcp", ".")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v", err)
	}
	if !strings.Contains(stderr.String(), "bad.halo:2:") || stdout.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}

// answerer accepts every question with answer, or declines when answer is "".
type answerer struct {
	answer string
	asked  []string
}

func (a *answerer) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.asked = append(a.asked, req.Params.Message)
	if a.answer == "" {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"answer": a.answer}}}, nil
}

// TestElicitProcess: a client that can ask its user is asked the yield's question, and the
// run goes on with the answer; declined, the run stays paused for halo resume.
func TestElicitProcess(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("version "+version, func(t *testing.T) {
			dir := project(t, map[string]string{"flow.halo": flows, "mocks.json": `{"Editor.shout": "HELLO"}`})
			a := &answerer{answer: "ship it"}
			p := startMCP(t, dir, version, []client.ClientOption{client.WithElicitationHandler(a)}, "--mocks", "mocks.json", "flow.halo")
			res := call(t, p, "Publish", map[string]any{"draft": "hello"})
			if res.IsError || text(res) != `{"answer":"ship it","text":"HELLO"}` || len(a.asked) != 1 || !strings.Contains(a.asked[0], "Publish HELLO?") {
				t.Errorf("accepted: %q, asked %q", text(res), a.asked)
			}
			if rec := record(t, dir, runID(res), "completed"); rec["status"] != "completed" {
				t.Errorf("record %v", rec["status"])
			}
			a.answer = ""
			res = call(t, p, "Publish", map[string]any{"draft": "hello"})
			if res.IsError || !strings.Contains(text(res), "was declined") || !strings.Contains(text(res), "halo resume flow.halo "+runID(res)) {
				t.Errorf("declined: %q", text(res))
			}
			if rec := record(t, dir, runID(res), "paused"); rec["status"] != "paused" {
				t.Errorf("declined record %v", rec["status"])
			}
		})
	}
}

// approver answers every approval question with content (approve, and a reason).
type approver struct {
	content map[string]any
	asked   []string
}

func (a *approver) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.asked = append(a.asked, req.Params.Message)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: a.content}}, nil
}

// TestElicitApprovalProcess: a tool call an agent's policies put up for approval is asked
// through a client that can ask its user (docs/mcp.md, "Asking the person"): approved, the
// write runs; declined with a reason, it does not, and the model reads the reason.
func TestElicitApprovalProcess(t *testing.T) {
	dir := project(t, map[string]string{
		"tidy.halo": `
policy Careful : AllowTools("Files.*") & ApproveEffects(write)
tool Files : Workspace("./notes", write: true)
agent Clerk [openai/gpt-4o-mini]
  equips Files
  requires Careful
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files])
`,
		"notes/notes.md": "a\n",
		// One script for the process: each call takes two answers.
		"mocks.json": `{"Clerk.work": [{"$useTool": "Files.write", "args": {"path": "merged.md", "content": "a"}}, "Merged.",
			{"$useTool": "Files.write", "args": {"path": "merged.md", "content": "a"}}, "Merged."]}`,
	})
	a := &approver{content: map[string]any{"approve": true}}
	p := startMCP(t, dir, "2025-06-18", []client.ClientOption{client.WithElicitationHandler(a)}, "--mocks", "mocks.json", "tidy.halo")
	res := call(t, p, "Tidy", map[string]any{"task": "merge"})
	if res.IsError || text(res) != "Merged." || len(a.asked) != 1 || !strings.Contains(a.asked[0], `Allow Clerk to call Files.write with {"content":"a","path":"merged.md"}? (policy Careful)`) {
		t.Fatalf("approved: %q, asked %q", text(res), a.asked)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes", "merged.md")); err != nil || string(b) != "a" {
		t.Errorf("the approved write: %q, %v", b, err)
	}
	os.Remove(filepath.Join(dir, "notes", "merged.md"))
	a.content = map[string]any{"approve": false, "reason": "write to drafts/ instead"}
	res = call(t, p, "Tidy", map[string]any{"task": "merge"})
	if res.IsError || text(res) != "Merged." {
		t.Fatalf("declined: %q", text(res))
	}
	if _, err := os.Stat(filepath.Join(dir, "notes", "merged.md")); err == nil {
		t.Error("a declined write ran")
	}
	b, _ := json.Marshal(record(t, dir, runID(res), "completed")["events"])
	if !strings.Contains(string(b), `"decision":"declined","detail":"write to drafts/ instead"`) {
		t.Errorf("the record's events lack the declined call and its reason: %s", b)
	}
}

// TestProgressProcess: a call with a progress token gets one notification per stage, all
// before its result.
func TestProgressProcess(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": `
agent W [openai/gpt-4o-mini]
pipeline Two(x: String) -> String:
  x |> W.draft("Draft.") |> W.polish("Polish.")
`})
	p := startMCP(t, dir, "2025-06-18", nil, "--mock", "flow.halo")
	var mu sync.Mutex
	var got []string
	p.c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			got = append(got, fmt.Sprint(n.Params.AdditionalFields["message"]))
			mu.Unlock()
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "Two"
	req.Params.Arguments = map[string]any{"x": "go"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "p1"}
	if _, err := p.c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, " | ") != "stage 1 of 2: W.draft | stage 2 of 2: W.polish" {
		t.Errorf("progress before the result: %q", got)
	}
}

// TestHTTPDropKillsBash: over HTTP, a client that drops its request cancels the run and
// kills the Bash command it started; the record is saved as cancelled.
func TestHTTPDropKillsBash(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": sleeper})
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	f := &cmdutil.Factory{Dir: dir, Env: cmdutil.EnvFromList(os.Environ()), Now: time.Now, Logger: hclog.NewNullLogger(), Executable: halo,
		IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	srv, err := mcpcmd.Open(f, &mcpcmd.Options{F: f, Paths: []string{"flow.halo"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := srv.HTTPHandler(mcpserver.HTTPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	marker := fmt.Sprintf("%d.%d", 5000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Nap","arguments":{"marker":"` + marker + `"}}}`
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the Bash command to start", func() bool { return len(sleepers(t, marker)) > 0 })
	cancel()
	<-done
	waitFor(t, "the Bash command to be killed", func() bool { return len(sleepers(t, marker)) == 0 })
	waitFor(t, "the run record to say cancelled", func() bool { return cancelledRuns(t, dir) == 1 })
}

// TestPackageTool: tool packages of the folder's halo.lock load as with halo run: a pipeline
// calls the world-time module package (a plugin process) through halo mcp.
func TestPackageTool(t *testing.T) {
	fsys, err := registry.Default()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Stat(fsys, "local/index.json"); err != nil {
		t.Fatalf("the default registry has no world-time package here: run ./scripts/setup-test-deps.sh (it builds registry/local): %v", err)
	}
	dir := project(t, map[string]string{"main.halo": `
tool Clock : WorldTime()

pipeline Tokyo(t: String) -> JSON:
  t |> Clock.convert(time: t, to: "Asia/Tokyo")
`})
	add := exec.Command("halo", "add", "world-time", "--trust")
	add.Dir = dir
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("halo add: %v\n%s", err, out)
	}
	p := startMCP(t, dir, "", nil, "main.halo")
	res := call(t, p, "Tokyo", map[string]any{"t": "2026-03-01T09:30:00Z"})
	if res.IsError || !strings.Contains(text(res), "2026-03-01T18:30:00+09:00") {
		t.Errorf("Tokyo: %q; stderr:\n%s", text(res), p.errText())
	}
}

// TestSigterm: a client that stops halo mcp with SIGTERM mid-call (as desktop clients do
// when the person quits) leaves no process behind, and the run is saved as cancelled.
func TestSigterm(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": sleeper})
	p := startMCP(t, dir, "2025-06-18", nil, "flow.halo")
	marker := fmt.Sprintf("%d.%d", 6000+os.Getpid()%1000, time.Now().UnixNano()%100000)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "Nap"
		req.Params.Arguments = map[string]any{"marker": marker}
		p.c.CallTool(context.Background(), req)
	}()
	waitFor(t, "the Bash command to start", func() bool { return len(sleepers(t, marker)) == 1 })
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("halo mcp did not exit on SIGTERM; stderr:\n%s", p.errText())
	}
	if n := len(sleepers(t, marker)); n != 0 {
		t.Errorf("%d Bash commands left running", n)
	}
	if n := cancelledRuns(t, dir); n != 1 {
		t.Errorf("%d runs saved as cancelled, want 1", n)
	}
}

// TestOpenUnwritableFolder: where .halo/runs cannot be made (a desktop client starting halo
// mcp in a folder of its own), halo mcp says so at start and how to fix it. Root may write
// anywhere, so the refusal is tried as the unprivileged user.
func TestOpenUnwritableFolder(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": `pipeline P() -> String: "x" |> System.Value()`})
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	f := &cmdutil.Factory{Dir: dir, Env: cmdutil.Env{}, Now: time.Now, Logger: hclog.NewNullLogger(),
		IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	s, err := mcpcmd.Open(f, &mcpcmd.Options{F: f, Paths: []string{"flow.halo"}})
	if os.Geteuid() == 0 {
		if err != nil {
			t.Fatalf("as root: %v", err)
		}
		s.Close()
		usertest.Rerun(t)
		return
	}
	want := "cannot save runs in " + filepath.Join(dir, ".halo", "runs") + ": permission denied: start halo mcp in the project folder, or name it with --dir"
	if err == nil || err.Error() != want {
		t.Errorf("Open in an unwritable folder: %v, want %q", err, want)
	}
}

// TestServerCollectsLessOften: halo mcp runs Go's collector at GOGC=400 (cmdutil.ServerGC):
// once it serves, a collection waits until the heap is 16 MB or more (4 MB times 400%),
// where Go's default starts at 4 MB; a GOGC the user sets wins. The runtime's own trace
// (GODEBUG=gctrace=1, on stderr) says what heap each collection aimed at.
func TestServerCollectsLessOften(t *testing.T) {
	for _, tc := range []struct {
		env      []string
		min, max int // the last collection's goal, in MB
	}{
		{[]string{"GODEBUG=gctrace=1"}, 16, 1 << 20},
		{[]string{"GODEBUG=gctrace=1", "GOGC=100"}, 0, 15},
	} {
		dir := project(t, map[string]string{"flow.halo": `pipeline Echo(s: String) -> String:
  s |> System.Value()
`})
		p := startMCPEnv(t, dir, tc.env, "", nil, "flow.halo")
		big := strings.Repeat("x", 64<<10) // each call allocates a few copies of it
		before := -1                       // collections before it served (loading the files)
		var goals []int
		for i := 0; i < 3000 && (before < 0 || len(goals) < before+2); i++ {
			if res := call(t, p, "Echo", map[string]any{"s": big}); res.IsError {
				t.Fatalf("Echo: %q", text(res))
			}
			goals = gcGoals(p.errText())
			if before < 0 {
				before = len(goals)
			}
		}
		if len(goals) < before+2 {
			t.Fatalf("%v: %d collections traced while serving; stderr:\n%.2000s", tc.env, len(goals)-before, p.errText())
		}
		if last := goals[len(goals)-1]; last < tc.min || last > tc.max {
			t.Errorf("%v: the last collection aimed at %d MB, want %d to %d", tc.env, last, tc.min, tc.max)
		}
	}
}

var gcGoal = regexp.MustCompile(`(?m)^gc \d+ @.* (\d+) MB goal`)

// gcGoals returns the heap goal of each collection Go's gctrace reported in stderr, in MB.
func gcGoals(stderr string) []int {
	var out []int
	for _, m := range gcGoal.FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.Atoi(m[1])
		out = append(out, n)
	}
	return out
}
