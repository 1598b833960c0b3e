package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

const threeStages = `
tool S : Slow()
agent W [openai/gpt-4o-mini]

pipeline Three(x: String) -> Result:
  x
    |> W.draft("Draft it.")
    |> S.poke()
    |? System.Value("fallback")
    |* { W.a("a"), W.b("b") }
`

// TestProgressAndLogs: with a progress token, one progress notification per finished stage
// (numbered, with what it calls) arrives before the result; log notifications carry the
// run's events at the level the client set, none before it sets one.
func TestProgressAndLogs(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("version "+version, func(t *testing.T) {
			slow := newSlow()
			f := newFixtureTools(t, threeStages, nil, slow.registry(t))
			f.rt.Mock("W.draft", "a draft").Mock("W.a", "A").Mock("W.b", "B")
			var got notes
			c := f.stdio(t, version)
			c.OnNotification(got.add)

			req := mcp.CallToolRequest{}
			req.Params.Name = "Three"
			req.Params.Arguments = map[string]any{"x": "go"}
			req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			progress := got.get("notifications/progress")
			var msgs []string
			for i, n := range progress {
				p := n.Params.AdditionalFields
				if p["progressToken"] != "tok-1" || p["progress"] != float64(i+1) || p["total"] != 3.0 {
					t.Errorf("progress %d: %v", i, p)
				}
				msgs = append(msgs, fmt.Sprint(p["message"]))
			}
			want := "stage 1 of 3: W.draft | stage 2 of 3: S.poke | stage 3 of 3: W.a, W.b"
			if strings.Join(msgs, " | ") != want {
				t.Errorf("progress before the result: %q, want %q", strings.Join(msgs, " | "), want)
			}
			if logs := got.get("notifications/message"); len(logs) != 0 {
				t.Errorf("%d log notifications before the client set a level", len(logs))
			}

			if err := c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelInfo}}); err != nil {
				t.Fatal(err)
			}
			callTool(t, c, "Three", map[string]any{"x": "go"})
			var types []string
			for _, n := range got.get("notifications/message") {
				p := n.Params.AdditionalFields
				data, _ := p["data"].(map[string]any)
				if p["logger"] != "halo" || p["level"] != "info" {
					t.Errorf("log notification %v", p)
				}
				types = append(types, fmt.Sprint(data["type"]))
			}
			if got := strings.Join(types, " "); got != "llm stage tool stage llm llm stage run" {
				t.Errorf("log notifications of types %q", got)
			}

			if err := c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelError}}); err != nil {
				t.Fatal(err)
			}
			before := len(got.get("notifications/message"))
			callTool(t, c, "Three", map[string]any{"x": "go"})
			if after := len(got.get("notifications/message")); after != before {
				t.Errorf("%d info notifications at level error", after-before)
			}
		})
	}
}

// TestNoNotificationsOverHTTP: the HTTP transport answers with one JSON document, so a
// progress token gets the result alone.
func TestNoNotificationsOverHTTP(t *testing.T) {
	slow := newSlow()
	f := newFixtureTools(t, threeStages, nil, slow.registry(t))
	f.rt.Mock("W.draft", "a draft").Mock("W.a", "A").Mock("W.b", "B")
	c := f.httpClient(t, HTTPConfig{}, "2025-06-18")
	var got notes
	c.OnNotification(got.add)
	req := mcp.CallToolRequest{}
	req.Params.Name = "Three"
	req.Params.Arguments = map[string]any{"x": "go"}
	req.Params.Meta = &mcp.Meta{ProgressToken: 7}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	if n := len(got.list); n != 0 {
		t.Errorf("%d notifications over HTTP", n)
	}
}
