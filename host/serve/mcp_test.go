package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// mcpCall sends one JSON-RPC tools/call to /mcp and returns the status and the answer.
func (e *env) mcpCall(name string, args map[string]any, hdr ...string) (int, map[string]any) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	resp := e.req("POST", "/mcp", string(body), hdr...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// /mcp serves the pipelines as MCP tools behind the same checks and token as /api; runs
// started there are listed and read in the API like any other; a paused run's answer says
// how a person answers it: the approval link.
func TestMCPMounted(t *testing.T) {
	e := newEnv(t, opts{token: "tok"})
	status, m := e.mcpCall("Three", map[string]any{"x": "a"})
	if status != 200 || !strings.Contains(fmt.Sprint(m["result"]), "answer of A.three") {
		t.Fatalf("tools/call: %d %v", status, m)
	}
	runs := e.do("GET", "/api/runs", nil, 200)["runs"].([]any)
	if len(runs) != 1 || runs[0].(map[string]any)["pipeline"] != "Three" || runs[0].(map[string]any)["status"] != "completed" {
		t.Fatalf("the MCP run in the API: %v", runs)
	}
	id := runs[0].(map[string]any)["runId"].(string)
	if evs := e.do("GET", "/api/runs/"+id+"/events", nil, 200)["events"].([]any); len(evs) < 4 {
		t.Errorf("events of the MCP run: %v", evs)
	}

	status, m = e.mcpCall("Ask", map[string]any{"x": "a"})
	text := fmt.Sprint(m["result"])
	if status != 200 || !strings.Contains(text, "/approve/") || !strings.Contains(text, "/api/runs/") {
		t.Errorf("a paused MCP run: %d %s", status, text)
	}
	if p := e.do("GET", "/api/runs?status=paused", nil, 200)["runs"].([]any); len(p) != 1 {
		t.Errorf("paused runs: %v", p)
	}

	// The same refusals as the API.
	for _, c := range []struct {
		hdr    []string
		status int
		code   string
	}{
		{[]string{"Authorization", ""}, 401, "UNAUTHORIZED"},
		{[]string{"Origin", "https://evil.example"}, 403, "FORBIDDEN_ORIGIN"},
		{[]string{"Host", "evil.example"}, 403, "FORBIDDEN_HOST"},
		{[]string{"Content-Type", "text/plain"}, 403, "FORBIDDEN_CONTENT_TYPE"},
	} {
		status, m := e.mcpCall("Three", map[string]any{"x": "a"}, c.hdr...)
		if status != c.status || !strings.Contains(fmt.Sprint(m), c.code) {
			t.Errorf("%v: %d %v, want %d %s", c.hdr, status, m, c.status, c.code)
		}
	}
	if n := len(e.do("GET", "/api/runs", nil, 200)["runs"].([]any)); n != 2 {
		t.Errorf("refused MCP calls started runs: %d runs", n)
	}
}

// halo.json's "mcp": false leaves /mcp unmounted.
func TestMCPOff(t *testing.T) {
	e := newEnv(t, opts{noMCP: true})
	resp := e.req("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/mcp with mcp off: %d", resp.StatusCode)
	}
}

// GET /api/pipelines describes each pipeline as /mcp does: the doc comment, a JSON Schema of
// the inputs.
func TestPipelinesDescribed(t *testing.T) {
	e := newEnv(t, opts{})
	ps := e.do("GET", "/api/pipelines", nil, 200)["pipelines"].([]any)
	three := ps[0].(map[string]any)
	schema, _ := json.Marshal(three["inputSchema"])
	if three["description"] != "Runs three agent stages." || !strings.Contains(string(schema), `"x":{"type":"string"}`) {
		t.Errorf("Three: %v %s", three, schema)
	}
	count := ps[3].(map[string]any)
	schema, _ = json.Marshal(count["inputSchema"])
	if !strings.Contains(string(schema), `"n":{"type":"number"}`) || !strings.Contains(string(schema), `"flag":{"type":"boolean"}`) {
		t.Errorf("Count schema %s", schema)
	}
}

// Each stage of a run is timed in halo_stage_duration_seconds.
func TestStageMetrics(t *testing.T) {
	e := newEnv(t, opts{})
	e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 200)
	resp := e.req("GET", "/metrics", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `halo_stage_duration_seconds_count{pipeline="Three"} 3`) {
		t.Errorf("stage metrics:\n%s", grep(string(b), "halo_stage"))
	}
}

func grep(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
