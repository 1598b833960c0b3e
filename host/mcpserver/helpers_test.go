package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

type (
	mcpClient    = client.Client
	clientOption = client.ClientOption
)

// fixture is a server over one program, its run records in a folder of its own.
type fixture struct {
	srv   *Server
	rt    *runtime.Runtime
	runs  string
	store *runstore.SQLite
	prog  *lang.Program
	calls atomic.Int32
}

func newFixture(t testing.TB, src string, mocks map[string]runtime.MockFunc) *fixture {
	return newFixtureTools(t, src, mocks, nil)
}

func newFixtureTools(t testing.TB, src string, mocks map[string]runtime.MockFunc, reg *tool.Registry) *fixture {
	t.Helper()
	f, diags := lang.Parse("flow.halo", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("parse: %v", diags)
	}
	prog := &lang.Program{Files: []*lang.File{f}}
	if d := runtime.Validate(prog, reg); d.HasErrors() {
		t.Fatalf("validate: %v", d)
	}
	runs := filepath.Join(t.TempDir(), "runs")
	store, err := runstore.OpenSQLite(runs, runstore.SQLiteOptions{GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var n atomic.Int64
	rt, err := runtime.New(prog, runtime.Config{
		Tools:       reg,
		OnInterrupt: OnInterrupt,
		Store:       store,
		NewID:       func() string { return fmt.Sprintf("run%04d", n.Add(1)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for target, fn := range mocks {
		rt.MockFunc(target, fn)
	}
	srv, err := New(Config{Program: prog, Runtime: rt, Tools: reg, Name: "halo-test", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, rt: rt, runs: runs, store: store, prog: prog}
}

// records lists the run records saved so far.
func (f *fixture) records(t testing.TB) []string {
	t.Helper()
	page, err := f.store.List(context.Background(), runstore.Query{Limit: runstore.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range page.Runs {
		out = append(out, r.RunID)
	}
	return out
}

func (f *fixture) record(t testing.TB, id string) *runtime.Record {
	t.Helper()
	rec, err := f.store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// pipeConn is a stdio connection to f's server inside the test: the server reads what the
// client writes and the other way round.
type pipeConn struct {
	done      chan struct{} // closed when ServeStdio returned
	toServer  *io.PipeWriter
	fromSrv   *io.PipeReader
	clientOut *io.PipeWriter
}

// stdio starts ServeStdio on pipes and returns a client for it, initialized with
// version ("" for the newest, the stateless 2026-07-28 core).
func (f *fixture) stdio(t testing.TB, version string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, _ := f.stdioConn(t, version, opts...)
	return c
}

func (f *fixture) stdioConn(t testing.TB, version string, opts ...client.ClientOption) (*client.Client, *pipeConn) {
	t.Helper()
	return f.stdioConnWith(t, version, nil, opts...)
}

// stdioConnWith is stdioConn with the server reading wrap(its input) when wrap is not nil.
func (f *fixture) stdioConnWith(t testing.TB, version string, wrap func(io.Reader) io.Reader, opts ...client.ClientOption) (*client.Client, *pipeConn) {
	t.Helper()
	pipeIn, toServer := io.Pipe()
	var srvIn io.Reader = pipeIn
	if wrap != nil {
		srvIn = wrap(pipeIn)
	}
	fromSrv, srvOut := io.Pipe()
	pc := &pipeConn{done: make(chan struct{}), toServer: toServer, fromSrv: fromSrv, clientOut: srvOut}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		if err := f.srv.ServeStdio(ctx, srvIn, srvOut); err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		srvOut.Close()
		close(pc.done)
	}()
	tr := transport.NewIO(fromSrv, toServer, nil)
	c := client.NewClient(tr, opts...)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		toServer.Close()
		select {
		case <-pc.done:
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return after its input closed")
		}
		cancel()
	})
	initialize(t, c, version)
	return c, pc
}

func initialize(t testing.TB, c *client.Client, version string) {
	t.Helper()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	want := version
	if want == "" {
		want = mcp.LATEST_PROTOCOL_VERSION
	}
	if c.ProtocolVersion() != want {
		t.Fatalf("negotiated %s, want %s", c.ProtocolVersion(), want)
	}
}

// http serves f's server with httptest and returns the URL of /mcp.
func (f *fixture) http(t testing.TB, cfg HTTPConfig) string {
	t.Helper()
	h, err := f.srv.HTTPHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func (f *fixture) httpClient(t testing.TB, cfg HTTPConfig, version string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	url := f.http(t, cfg)
	var hopts []transport.StreamableHTTPCOption
	if cfg.Token != "" {
		hopts = append(hopts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + cfg.Token}))
	}
	tr, err := transport.NewStreamableHTTP(url, hopts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initialize(t, c, version)
	return c
}

func callTool(t testing.TB, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func textOfResult(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// notes collects the notifications a client receives.
type notes struct {
	mu   sync.Mutex
	list []mcp.JSONRPCNotification
}

func (n *notes) add(x mcp.JSONRPCNotification) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = append(n.list, x)
}

func (n *notes) get(method string) []mcp.JSONRPCNotification {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, x := range n.list {
		if x.Method == method {
			out = append(out, x)
		}
	}
	return out
}
