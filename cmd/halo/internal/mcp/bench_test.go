package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	mcpcmd "halolang.dev/halo/cmd/halo/internal/mcp"
	"halolang.dev/halo/host/mcpserver"
)

// constantServer is an mcp-go server whose one tool answers a constant.
func constantServer() *server.MCPServer {
	s := server.NewMCPServer("mcpgo-constant", "1")
	s.AddTool(mcp.NewTool("Greet", mcp.WithDescription("Say hello."), mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Hello!"), nil
		})
	return s
}

// The pipeline halo serves in the benchmarks: one stage, an agent call a mock answers. Each
// call is a whole run, saved in .halo/runs as always (a line of the run log, appended and
// synced by a group commit beside the calls, after the answer).
const benchFlow = `
agent Greeter [openai/gpt-4o-mini]

# Say hello.
pipeline Greet(name: String) -> String:
  name |> Greeter.greet("Say hello to {{name}}.")
`

// BenchmarkToolsCall measures tools/call over stdio and over HTTP, from 1 and 16 concurrent
// callers, on halo (a one-stage mocked pipeline), on mcp-go's own server with a constant
// handler (the floor: halo's overhead over the library), and on the official TypeScript
// SDK's server with a constant handler. Every server is its own process over stdio; over
// HTTP the Go servers run in the benchmark's process (httptest) and the TypeScript one in
// node; and over HTTP, as processes of their own too, a real `halo serve` (its /mcp, with its
// request log, run tracking and record saving: serve; the same with runs not saved:
// serve-norecords, what /mcp costs around the save) beside mcp-go's HTTP server alone
// (mcpgo-process), the comparison of issue 29's goal. The client is mcp-go's, at protocol
// 2025-06-18 for all. halo-norecords is halo with
// the run record not saved, which tells the cost of saving the record from the rest. Each
// sub-benchmark reports p50 and p99 latency and calls per second, and over stdio on Linux the
// server process's processor time per call (server-cpu-µs), which what else the machine runs
// changes much less than the others. Run it on a quiet machine:
//
//	go test -run '^$' -bench ToolsCall -benchtime 2000x ./cmd/halo/internal/mcp
//
// Each sub-benchmark starts its server once, for the short first run the testing package
// makes and for the measured one, and every project folder is removed when the whole
// benchmark ends: removing files just before the next sub-benchmark is measured slows its
// file creation for a minute or more on ext4 without a journal (it looks past recently
// freed inodes), which would measure the benchmark's own clean-up, not halo.
func BenchmarkToolsCall(b *testing.B) {
	type server struct {
		calls []func() error
		cpu   func() (time.Duration, bool)
	}
	started := map[string]server{}
	if dev, ok := journallessExt4(os.TempDir()); ok {
		b.Logf("run records are saved in %s, on ext4 without a journal (%s): syncing costs there differ from a usual filesystem's, and making a file (the folders of the projects, a run log) looks past every inode freed in the last seconds; for figures that say what halo costs on a usual filesystem, set TMPDIR to a folder on a filesystem with a journal (scripts/bench-mcp.sh does)", os.TempDir(), dev)
	}
	for _, tr := range []string{"stdio", "http"} {
		if tr == "http" { // the Go servers run in this process: give it the collector halo serve has
			if prev, set := cmdutil.ServerGC(cmdutil.EnvFromList(os.Environ())); set {
				defer debug.SetGCPercent(prev)
			}
		}
		servers := []string{"halo", "halo-norecords", "mcpgo", "typescript"}
		if tr == "http" {
			// Real processes over loopback: halo serve's /mcp, and mcp-go's server alone.
			servers = append(servers, "serve", "serve-norecords", "mcpgo-process")
		}
		for _, srv := range servers {
			for _, n := range []int{1, 16} {
				name := fmt.Sprintf("%s/%s/clients=%d", tr, srv, n)
				b.Run(name, func(sb *testing.B) {
					s, ok := started[name]
					if !ok {
						s.calls, s.cpu = connectBench(lasting{sb, b}, tr, srv, n)
						started[name] = s
						for _, c := range s.calls { // warm up
							for i := 0; i < 20; i++ {
								if err := c(); err != nil {
									sb.Fatal(err)
								}
							}
						}
					}
					measure(sb, s.calls, s.cpu)
				})
			}
		}
	}
}

// lasting is a sub-benchmark whose clean-ups, temporary folders and environment last until
// its parent benchmark ends.
type lasting struct {
	testing.TB // the sub-benchmark
	parent     *testing.B
}

func (l lasting) Cleanup(f func())   { l.parent.Cleanup(f) }
func (l lasting) TempDir() string    { return l.parent.TempDir() }
func (l lasting) Setenv(k, v string) { l.parent.Setenv(k, v) }

// connectBench starts server srv over tr and returns one call function per caller, and how
// much processor time the server has used so far when it runs in a process of its own
// (over stdio; false when that cannot be read).
func connectBench(b testing.TB, tr, srv string, n int) ([]func() error, func() (time.Duration, bool)) {
	b.Helper()
	dir := project(b, map[string]string{"flow.halo": benchFlow, "mocks.json": `{"Greeter.greet": "Hello!"}`})
	tool := "Greet"
	var clients []*client.Client
	cpu := func() (time.Duration, bool) { return 0, false }
	switch tr {
	case "stdio":
		var argv []string
		switch srv {
		case "halo":
			argv = []string{"halo", "mcp", "--mocks", "mocks.json", "flow.halo"}
		case "halo-norecords":
			argv = []string{"halo-mcp-norecords", "flow.halo"}
		case "mcpgo":
			argv = []string{"mcpgo-constant"}
		case "typescript":
			node, npmDir := sdkDir(b)
			script, _ := filepath.Abs("testdata/ts/server.mjs")
			argv = []string{node, script, "stdio"}
			b.Setenv("HALO_NPM_DIR", npmDir)
		}
		c, pid := stdioProcess(b, dir, argv)
		cpu = func() (time.Duration, bool) { return processCPU(pid) }
		clients = append(clients, c) // one connection; n callers share it
	case "http":
		url, pid := httpServer(b, dir, srv)
		if pid != 0 {
			cpu = func() (time.Duration, bool) { return processCPU(pid) }
		}
		for i := 0; i < n; i++ {
			t, err := transport.NewStreamableHTTP(url)
			if err != nil {
				b.Fatal(err)
			}
			c := client.NewClient(t)
			if err := c.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			initBench(b, c)
			clients = append(clients, c)
		}
	}
	calls := make([]func() error, n)
	for i := range calls {
		c := clients[i%len(clients)]
		calls[i] = func() error {
			req := mcp.CallToolRequest{}
			req.Params.Name = tool
			req.Params.Arguments = map[string]any{"name": "Ada"}
			res, err := c.CallTool(context.Background(), req)
			if err != nil {
				return err
			}
			if res.IsError || len(res.Content) != 1 {
				return fmt.Errorf("result %+v", res)
			}
			return nil
		}
	}
	return calls, cpu
}

func initBench(b testing.TB, c *client.Client) {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-06-18"
	req.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, req); err != nil {
		b.Fatalf("initialize: %v", err)
	}
}

func stdioProcess(b testing.TB, dir string, argv []string) (*client.Client, int) {
	b.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(transport.NewIO(out, in, nil))
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	initBench(b, c)
	return c, cmd.Process.Pid
}

// processCPU returns the processor time process pid has used (user and system, all its
// threads), from Linux's /proc; false elsewhere.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	_, rest, ok := strings.Cut(string(b), ") ") // after the command name, which may hold spaces
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // fields 14 and 15 of stat(5), in 1/100 s
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// httpServer starts server srv over Streamable HTTP and returns its URL, and its process id
// when it is a process of its own (0 when it runs in the benchmark's process).
func httpServer(b testing.TB, dir, srv string) (string, int) {
	b.Helper()
	switch srv {
	case "serve", "serve-norecords", "mcpgo-process":
		halo, err := exec.LookPath("halo")
		if err != nil {
			b.Fatal(err)
		}
		argv := []string{"serve", "--addr", "127.0.0.1:0", "--mocks", "mocks.json", "flow.halo"}
		switch srv {
		case "serve-norecords":
			if halo, err = exec.LookPath("halo-serve-norecords"); err != nil {
				b.Fatal(err)
			}
			argv = argv[1:]
		case "mcpgo-process":
			if halo, err = exec.LookPath("mcpgo-http"); err != nil {
				b.Fatal(err)
			}
			argv = nil
		}
		cmd := exec.Command(halo, argv...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		out, _ := cmd.StdoutPipe()
		errOut, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
		urls := make(chan string, 2)
		scan := func(r io.Reader, re *regexp.Regexp) {
			sc := bufio.NewScanner(r)
			for sc.Scan() { // read to the end: halo serve logs a line per request
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					urls <- m[1]
				}
			}
		}
		go scan(errOut, regexp.MustCompile(`listening: url=(http://\S+)`))
		go scan(out, regexp.MustCompile(`^(http://\S+)$`))
		select {
		case u := <-urls:
			if srv != "mcpgo-process" {
				u += "/mcp"
			}
			return u, cmd.Process.Pid
		case <-time.After(60 * time.Second):
			b.Fatalf("%s did not say where it listens", srv)
		}
	case "halo", "halo-norecords":
		f := &cmdutil.Factory{Dir: dir, Env: cmdutil.Env{}, Now: time.Now, Logger: hclog.NewNullLogger(),
			IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
		s, err := mcpcmd.Open(f, &mcpcmd.Options{F: f, Mocks: "mocks.json", Paths: []string{"flow.halo"}, NoRecords: srv == "halo-norecords"})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		h, err := s.HTTPHandler(mcpserver.HTTPConfig{})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(h)
		b.Cleanup(ts.Close)
		return ts.URL + "/mcp", 0
	case "mcpgo":
		ts := httptest.NewServer(server.NewStreamableHTTPServer(constantServer(), server.WithStateLess(true)))
		b.Cleanup(ts.Close)
		return ts.URL + "/mcp", 0
	}
	node, npmDir := sdkDir(b)
	script, _ := filepath.Abs("testdata/ts/server.mjs")
	cmd := exec.Command(node, script, "http")
	cmd.Env = append(os.Environ(), "HALO_NPM_DIR="+npmDir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("the TypeScript server printed no URL: %v", err)
	}
	return strings.TrimSpace(line), cmd.Process.Pid
}

// measure makes b.N calls spread over the callers, all at once, and reports the latency of
// one call (p50, p99), the calls per second, and the server's processor time per call
// (server-cpu-µs) when cpu can tell: unlike the others, that does not change much with what
// else the machine is doing. The processor time counts what the server does once the calls
// have stopped (settledCPU), as halo's text index is written.
func measure(b *testing.B, calls []func() error, cpu func() (time.Duration, bool)) {
	var next atomic.Int64
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	cpu0, cpuOK := cpu()
	if cpuOK {
		cpu0 = settledCPU(cpu)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, call := range calls {
		wg.Go(func() {
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := call(); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu1, cpuOK1 := cpu()
	if cpuOK1 {
		cpu1 = settledCPU(cpu)
	}
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "calls/s")
	if cpuOK && cpuOK1 {
		b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(len(lat)), "server-cpu-µs")
	}
}
