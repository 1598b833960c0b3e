// Package testserver is a small MCP server (mark3labs/mcp-go's server) that the mcp
// package's tests and benchmarks run over stdio and Streamable HTTP. Its tools report the
// environment the server sees, return payloads of a chosen size, fail, crash, stall and
// carry each combination of annotations, so every mapping the provider does can be checked
// against a server written in the same run.
package testserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ConfigURI is the one resource the server offers: a JSON document.
const ConfigURI = "halo://test/config.json"

// New returns the server with all of its tools.
func New() *server.MCPServer {
	s := server.NewMCPServer("halo-testserver", "1.0.0",
		server.WithToolCapabilities(false), server.WithResourceCapabilities(false, false))

	s.AddTool(mcp.NewTool("env", mcp.WithDescription("Report the server's environment"),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			env := map[string]string{}
			for _, kv := range os.Environ() {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			wd, _ := os.Getwd()
			return mcp.NewToolResultStructured(map[string]any{"env": env, "cwd": wd, "pid": os.Getpid()}, "environment"), nil
		})

	s.AddTool(mcp.NewTool("payload", mcp.WithDescription("Return a text of size bytes"),
		mcp.WithNumber("size", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("size", 0)
			return mcp.NewToolResultText(Payload(n)), nil
		})

	s.AddTool(mcp.NewTool("add-numbers", mcp.WithDescription("Add a and b"),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})

	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text back"),
		mcp.WithString("text", mcp.Required()), mcp.WithString("prefix")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("prefix", "") + req.GetString("text", "")), nil
		})

	s.AddTool(mcp.NewTool("json-text", mcp.WithDescription("Return JSON as text content"),
		mcp.WithDestructiveHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(`{"ok": true, "n": 12345678901234567890}`), nil
		})

	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Always fail with a message"),
		mcp.WithOpenWorldHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("quota exceeded; try again tomorrow"), nil
		})

	s.AddTool(mcp.NewTool("image", mcp.WithDescription("Return a tiny image"),
		mcp.WithReadOnlyHintAnnotation(false), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent("aGFsbw==", "image/png")}}, nil
		})

	s.AddTool(mcp.NewTool("sleep", mcp.WithDescription("Sleep for ms milliseconds"),
		mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-time.After(time.Duration(req.GetInt("ms", 0)) * time.Millisecond):
			case <-ctx.Done():
			}
			return mcp.NewToolResultText("slept"), nil
		})

	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Report progress twice, then finish"),
		mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				srv := server.ServerFromContext(ctx)
				for i := 1; i <= 2; i++ {
					_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": 2, "message": fmt.Sprintf("step %d", i)})
				}
				// mcp-go's server sends notifications from another goroutine than results;
				// give them a head start so they arrive first.
				time.Sleep(50 * time.Millisecond)
			}
			return mcp.NewToolResultText("done"), nil
		})

	s.AddTool(mcp.NewTool("exit", mcp.WithDescription("Exit the server process during the call")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			os.Exit(3)
			return nil, nil
		})

	// A server tool named like a built-in: Halo's own list_tools must win.
	s.AddTool(mcp.NewTool("list_tools", mcp.WithDescription("A server tool that Halo's built-in hides")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("the server's own list_tools"), nil
		})

	s.AddResource(mcp.NewResource(ConfigURI, "config", mcp.WithMIMEType("application/json")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: ConfigURI, MIMEType: "application/json", Text: `{"region": "eu", "replicas": 3}`}}, nil
		})
	return s
}

// Payload is the text the payload tool returns for n bytes: printable, and not JSON.
func Payload(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 "
	var b strings.Builder
	b.Grow(n)
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[i%len(alphabet)])
	}
	return b.String()
}

// ServeStdio serves New() on the process's stdin and stdout until stdin ends.
func ServeStdio() error {
	return server.ServeStdio(New())
}

// Handler serves New() over Streamable HTTP at /mcp.
func Handler() http.Handler {
	return server.NewStreamableHTTPServer(New())
}
