package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/halo-lang/halo/host/tool"
	"github.com/halo-lang/halo/host/tool/mcp/internal/testserver"
)

// BenchmarkCall measures a warm tools/call round trip through the provider beside the same
// call through a bare mcp-go client (the floor), against the in-repo test server, over
// stdio and Streamable HTTP, for a 100 B and a 16 KB result. Besides wall time per call
// it reports cpu-ns/op, the CPU this process spent per call (the client's side only), which
// a loaded machine distorts far less than wall time.
//
//	go test -run '^$' -bench Call -benchtime 2000x ./host/tool/mcp
func BenchmarkCall(b *testing.B) {
	for _, tr := range []string{"stdio", "http"} {
		b.Run(tr, func(b *testing.B) {
			var url string
			if tr == "http" {
				srv := httptest.NewServer(testserver.Handler())
				b.Cleanup(srv.Close)
				url = srv.URL + "/mcp"
			}
			for _, size := range []int{100, 16 << 10} {
				name := fmt.Sprintf("%dB", size)
				if size >= 1<<10 {
					name = fmt.Sprintf("%dKB", size>>10)
				}
				b.Run("raw/"+name, func(b *testing.B) { benchRaw(b, tr, url, size) })
				b.Run("provider/"+name, func(b *testing.B) { benchProvider(b, tr, url, size) })
			}
		})
	}
}

func benchProvider(b *testing.B, tr, url string, size int) {
	cfg := Config{Name: "B", Command: serverCommand(b), Env: serverEnv()}
	if tr == "http" {
		cfg = Config{Name: "B", URL: url}
	}
	p := openT(b, cfg)
	req := tool.Request{Method: "payload", Args: json.RawMessage(fmt.Sprintf(`{"size": %d}`, size))}
	ctx := context.Background()
	if _, err := p.Call(ctx, req); err != nil { // connect outside the timed loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		out, err := p.Call(ctx, req)
		if err != nil || len(out) != size+2 {
			b.Fatalf("got %d bytes, %v", len(out), err)
		}
	}
	reportCPU(b, cpu)
}

// cpuTime is the CPU time this process has used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(cpuTime()-since)/float64(b.N), "cpu-ns/op")
}

func benchRaw(b *testing.B, tr, url string, size int) {
	var t transport.Interface
	if tr == "http" {
		h, err := transport.NewStreamableHTTP(url)
		if err != nil {
			b.Fatal(err)
		}
		t = h
	} else {
		cmd := serverCommand(b)
		t = transport.NewStdio(cmd[0], []string{"GORACE=atexit_sleep_ms=0"}, cmd[1:]...)
	}
	c := client.NewClient(t, client.WithProtocolVersion(ProtocolVersion))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: ProtocolVersion,
		ClientInfo: mcp.Implementation{Name: "bench", Version: "0"}}}); err != nil {
		b.Fatal(err)
	}
	req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "payload", Arguments: map[string]any{"size": size}}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	defer reportCPU(b, cpu)
	for i := 0; i < b.N; i++ {
		res, err := c.CallTool(ctx, req)
		if err != nil || len(res.Content) != 1 {
			b.Fatal(err)
		}
		if txt, ok := res.Content[0].(mcp.TextContent); !ok || len(txt.Text) != size {
			b.Fatalf("got %T", res.Content[0])
		}
	}
}
