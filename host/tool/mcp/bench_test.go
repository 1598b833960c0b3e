package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp/internal/testserver"
	"halolang.dev/halo/internal/cputime"
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
	serverPid := 0
	if tr == "stdio" {
		serverPid = p.sess.stdio.pid()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu, serverCPU := cputime.Self(), procCPU(serverPid)
	for i := 0; i < b.N; i++ {
		out, err := p.Call(ctx, req)
		if err != nil || len(out) != size+2 {
			b.Fatalf("got %d bytes, %v", len(out), err)
		}
	}
	reportCPU(b, cpu)
	if serverPid != 0 {
		// The server's side of the same calls, for telling the two apart.
		b.ReportMetric(float64(procCPU(serverPid)-serverCPU)/float64(b.N), "server-cpu-ns/op")
	}
}

// procCPU is the CPU time process pid has used, from /proc (in clock ticks of 10 ms).
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(cputime.Self()-since)/float64(b.N), "cpu-ns/op")
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
	cpu := cputime.Self()
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

// BenchmarkDecode isolates the client's decoding of one tools/call response line, without
// pipes or processes: the provider's path (one envelope decode, then the result, with text
// passed through) beside mcp-go's (its stdio transport's decodes, then ParseCallToolResult).
func BenchmarkDecode(b *testing.B) {
	for _, size := range []int{100, 16 << 10} {
		resp := map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{
			"content": []any{map[string]any{"type": "text", "text": testserver.Payload(size)}}}}
		line, _ := json.Marshal(resp)
		b.Run(fmt.Sprintf("provider/%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			defer reportCPU(b, cputime.Self())
			for i := 0; i < b.N; i++ {
				var m message
				if err := json.Unmarshal(line, &m); err != nil {
					b.Fatal(err)
				}
				if _, err := toolResult("payload", m.Result); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("mcp-go/%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			defer reportCPU(b, cputime.Self())
			for i := 0; i < b.N; i++ {
				// What transport.Stdio.readResponses does with a line, then the client.
				var base struct {
					JSONRPC string         `json:"jsonrpc"`
					ID      *mcp.RequestId `json:"id,omitempty"`
					Method  string         `json:"method,omitempty"`
				}
				if err := json.Unmarshal(line, &base); err != nil {
					b.Fatal(err)
				}
				var r transport.JSONRPCResponse
				if err := json.Unmarshal(line, &r); err != nil {
					b.Fatal(err)
				}
				raw := json.RawMessage(r.Result)
				if _, err := mcp.ParseCallToolResult(&raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
