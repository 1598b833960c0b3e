package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/postgres"
	hruntime "halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
	"halolang.dev/halo/internal/cputime"
	"halolang.dev/halo/internal/pgtest"
)

func benchMocks() *hruntime.Mocks {
	m := hruntime.NewMocks()
	for _, target := range []string{"A.one", "A.two", "A.three", "A.draft"} {
		m.Set(target, "answer of "+target)
	}
	return m
}

// BenchmarkAPIRun is what halo serve adds to one run of a mocked three-stage pipeline: the
// floors (the runtime alone, and with halo run's record file) beside POST /api/runs?wait
// over HTTP with the folder store and with PostgreSQL (a local server on a Unix socket,
// fsync off). One client, one run at a time.
func BenchmarkAPIRun(b *testing.B) {
	prog := program(b, src)
	in := map[string]any{"x": "bench"}
	b.Run("floor=runtime", func(b *testing.B) {
		rt, err := hruntime.New(prog, hruntime.Config{Mocks: benchMocks()})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := rt.Run(context.Background(), "Three", in); err != nil || res.Status != hruntime.Completed {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("floor=runtime+record", func(b *testing.B) {
		store, err := runstore.OpenSQLite(b.TempDir(), runstore.SQLiteOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		rt, err := hruntime.New(prog, hruntime.Config{Mocks: benchMocks(), Store: store})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if res, err := rt.Run(context.Background(), "Three", in); err != nil || res.Status != hruntime.Completed {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("serve=folder", func(b *testing.B) {
		f, err := runstore.OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
		if err != nil {
			b.Fatal(err)
		}
		benchServe(b, f)
	})
	b.Run("serve=postgres", func(b *testing.B) {
		s, err := postgres.Open(context.Background(), pgtest.DB(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		benchServe(b, s)
	})
}

func benchServe(b *testing.B, store runstore.Store) {
	defer store.Close()
	hs := httptest.NewUnstartedServer(nil)
	srv, err := serve.New(context.Background(), serve.Config{
		Program: program(b, src), Store: store, Addr: hs.Listener.Addr().String(),
		Runtime: hruntime.Config{Mocks: benchMocks()},
	})
	if err != nil {
		b.Fatal(err)
	}
	srv.Start()
	hs.Config.Handler = srv.Handler()
	hs.Start()
	defer func() { hs.Close(); srv.Close(0) }()
	body, _ := json.Marshal(map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "bench"}})
	client := hs.Client()
	for b.Loop() {
		resp, err := client.Post(hs.URL+"/api/runs?wait=30s", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status)
		}
	}
}

// noSaves is a store that keeps no run: Start and Save do nothing, the rest is the SQLite
// store's. BenchmarkMCP's floor: what /mcp costs around the save.
type noSaves struct{ runstore.Store }

func (noSaves) Start(context.Context, *hruntime.Record) error { return nil }
func (noSaves) Save(*hruntime.Record) error                   { return nil }
func (noSaves) LocalEvents() bool                             { return true }

// mcpFlow is the one-stage pipeline the /mcp benchmarks call, a mock answering its agent.
const mcpFlow = `
agent Greeter [openai/gpt-4o-mini]

# Say hello.
pipeline Greet(name: String) -> String:
  name |> Greeter.greet("Say hello to {{name}}.")
`

// mcpCall is the tools/call the /mcp benchmarks send.
var mcpCall = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Greet","arguments":{"name":"Ada"}}}`)

// BenchmarkMCPHandler is one tools/call through the handler halo serve mounts at /mcp, the
// handler called directly (no connection, no HTTP parsing), runs saved nowhere: what the
// handler chain, the call's reading and answer, the run tracker and the run cost, allocations
// included. cpu-µs/op is the process's processor time per call.
func BenchmarkMCPHandler(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	f, err := runstore.OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	m := hruntime.NewMocks()
	m.Set("Greeter.greet", "Hello!")
	s, err := serve.New(context.Background(), serve.Config{
		Program: program(b, mcpFlow), Store: noSaves{f}, Addr: "127.0.0.1:1", MCP: true,
		Runtime: hruntime.Config{Mocks: m}, Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard}),
		AccessLog: io.Discard,
	})
	if err != nil {
		b.Fatal(err)
	}
	s.Start()
	defer s.Close(0)
	h := s.Handler()
	header := http.Header{"Content-Type": {"application/json"}}
	b.ReportAllocs()
	cpu0 := cputime.Self()
	for b.Loop() {
		r := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/mcp"}, Host: "127.0.0.1:1", Header: header,
			Body: io.NopCloser(bytes.NewReader(mcpCall)), ContentLength: int64(len(mcpCall)), RemoteAddr: "127.0.0.1:2"}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(context.Background()))
		if w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`Hello!`)) {
			b.Fatal(w.Code, w.Body.String())
		}
	}
	b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkMCP is one tools/call through the handler halo serve mounts at /mcp, over
// loopback HTTP in this process, from 1 and 16 concurrent callers: a one-stage mocked
// pipeline saved in the SQLite store as halo serve saves it (store=sqlite), the same with
// the run saved nowhere (store=none: what /mcp costs around the save), beside mcp-go's
// stateless Streamable HTTP server with a constant tool (mcpgo). Clients and servers share
// the process, which collects garbage as halo serve does: cpu-µs/op is the process's
// processor time per call, both sides, and allocs/op count both too.
func BenchmarkMCP(b *testing.B) {
	flow, body := mcpFlow, mcpCall
	// The collector halo serve runs with (cmd/halo's cmdutil.ServerGCPercent).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	for _, srv := range []string{"mcpgo", "store=sqlite", "store=none"} {
		for _, n := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", srv, n), func(b *testing.B) {
				hs := httptest.NewUnstartedServer(nil)
				switch srv {
				case "mcpgo":
					s := mcpgoserver.NewMCPServer("mcpgo-constant", "1")
					s.AddTool(mcp.NewTool("Greet", mcp.WithDescription("Say hello."), mcp.WithString("name", mcp.Required())),
						func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
							return mcp.NewToolResultText("Hello!"), nil
						})
					hs.Config.Handler = mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true))
				default:
					f, err := runstore.OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
					if err != nil {
						b.Fatal(err)
					}
					var store runstore.Store = f
					if srv == "store=none" {
						store = noSaves{f}
					}
					m := hruntime.NewMocks()
					m.Set("Greeter.greet", "Hello!")
					s, err := serve.New(context.Background(), serve.Config{
						Program: program(b, flow), Store: store, Addr: hs.Listener.Addr().String(), MCP: true,
						Runtime: hruntime.Config{Mocks: m}, Logger: hclog.New(&hclog.LoggerOptions{Output: io.Discard}),
						AccessLog: io.Discard,
					})
					if err != nil {
						b.Fatal(err)
					}
					s.Start()
					hs.Config.Handler = s.Handler()
					defer func() { s.Close(0); f.Close() }()
				}
				hs.Start()
				defer hs.Close()
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
				defer client.CloseIdleConnections()
				call := func() error {
					resp, err := client.Post(hs.URL+"/mcp", "application/json", bytes.NewReader(body))
					if err != nil {
						return err
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`Hello!`)) {
						return fmt.Errorf("%s %s %v", resp.Status, b, err)
					}
					return nil
				}
				for range 20 { // warm up
					if err := call(); err != nil {
						b.Fatal(err)
					}
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				b.ReportAllocs()
				cpu0 := cputime.Self()
				b.ResetTimer()
				for range n {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							if err := call(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}
