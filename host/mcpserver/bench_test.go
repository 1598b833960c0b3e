package mcpserver

import (
	"context"
	"io"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"halolang.dev/halo/host/runtime"
)

// BenchmarkHandle measures what serving one tools/call costs inside the server, without a
// transport: mcp-go's HandleMessage on halo's server running a one-stage mocked pipeline
// (its run record not saved; cmd/halo/internal/mcp's BenchmarkToolsCall has the whole call
// with the record), beside the same on an mcp-go server whose handler returns a constant.
func BenchmarkHandle(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Greet","arguments":{"name":"Ada"}}}`)
	floor := server.NewMCPServer("constant", "1")
	floor.AddTool(mcp.NewTool("Greet", mcp.WithString("name", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("Hello!"), nil
		})
	f := newFixture(b, `
agent Greeter [openai/gpt-4o-mini]
pipeline Greet(name: String) -> String:
  name |> Greeter.greet("Say hello to {{name}}.")
`, map[string]runtime.MockFunc{"Greeter.greet": func(runtime.MockRequest) (any, error) { return "Hello!", nil }})
	rt, err := runtime.New(f.prog, runtime.Config{})
	if err != nil {
		b.Fatal(err)
	}
	rt.Mock("Greeter.greet", "Hello!")
	srv, err := New(Config{Program: f.prog, Runtime: rt})
	if err != nil {
		b.Fatal(err)
	}
	for name, s := range map[string]*server.MCPServer{"mcpgo-constant": floor, "halo": srv.mcp} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				resp := s.HandleMessage(ctx, msg)
				if r, ok := resp.(mcp.JSONRPCResponse); !ok || r.Result == nil {
					b.Fatalf("%+v", resp)
				}
			}
		})
	}
}

// BenchmarkStdioInProcess measures a whole tools/call over stdio pipes inside one process:
// halo's transport and server (record not saved) beside mcp-go's own stdio server with a
// constant handler, both driven by mcp-go's client.
func BenchmarkStdioInProcess(b *testing.B) {
	f := newFixture(b, `
agent Greeter [openai/gpt-4o-mini]
pipeline Greet(name: String) -> String:
  name |> Greeter.greet("Say hello to {{name}}.")
`, nil)
	rt, err := runtime.New(f.prog, runtime.Config{})
	if err != nil {
		b.Fatal(err)
	}
	rt.Mock("Greeter.greet", "Hello!")
	srv, err := New(Config{Program: f.prog, Runtime: rt})
	if err != nil {
		b.Fatal(err)
	}
	f.srv = srv
	b.Run("halo", func(b *testing.B) {
		c := f.stdio(b, "2025-06-18")
		benchCalls(b, c)
	})
	b.Run("mcpgo-constant", func(b *testing.B) {
		floor := server.NewMCPServer("constant", "1")
		floor.AddTool(mcp.NewTool("Greet", mcp.WithString("name", mcp.Required())),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("Hello!"), nil
			})
		srvIn, toServer := io.Pipe()
		fromSrv, srvOut := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { server.NewStdioServer(floor).Listen(ctx, srvIn, srvOut); close(done) }()
		c := client.NewClient(transport.NewIO(fromSrv, toServer, nil))
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		initialize(b, c, "2025-06-18")
		benchCalls(b, c)
		c.Close()
		toServer.Close()
		cancel()
		<-done
	})
}

func benchCalls(b *testing.B, c *client.Client) {
	req := mcp.CallToolRequest{}
	req.Params.Name = "Greet"
	req.Params.Arguments = map[string]any{"name": "Ada"}
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
