package mcpserver

import (
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestProtocolVersions: a client of each version the server answers gets that version and
// can call a pipeline, over stdio and over HTTP.
func TestProtocolVersions(t *testing.T) {
	f := newFixture(t, flow, greeter())
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"} {
		for _, tr := range []string{"stdio", "http"} {
			t.Run(tr+" "+v, func(t *testing.T) {
				want, ask := v, v
				if v == mcp.LATEST_PROTOCOL_VERSION {
					ask = "" // the newest is reached through server/discover, not initialize
				}
				c := f.stdio
				if tr == "http" {
					c = func(t testing.TB, version string, _ ...clientOption) *mcpClient {
						return f.httpClient(t, HTTPConfig{}, version)
					}
				}
				cl := c(t, ask)
				if cl.ProtocolVersion() != want {
					t.Errorf("negotiated %s", cl.ProtocolVersion())
				}
				if res := callTool(t, cl, "Hello", map[string]any{"name": "Ada"}); textOfResult(res) != "Hello, Ada!" {
					t.Errorf("call: %q", textOfResult(res))
				}
			})
		}
	}
}
