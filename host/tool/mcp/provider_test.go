package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp/internal/testserver"
)

// transports runs f once over stdio and once over Streamable HTTP, against the test server.
func transports(t *testing.T, f func(t *testing.T, p *Provider)) {
	t.Run("stdio", func(t *testing.T) {
		p := openT(t, Config{Name: "T", Command: serverCommand(t), Env: serverEnv()})
		f(t, p)
	})
	t.Run("http", func(t *testing.T) {
		srv := httptest.NewServer(testserver.Handler())
		t.Cleanup(srv.Close)
		p := openT(t, Config{Name: "T", URL: srv.URL + "/mcp", HTTPClient: srv.Client()})
		f(t, p)
	})
}

func openT(t testing.TB, cfg Config) *Provider {
	t.Helper()
	p, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

func call(t testing.TB, p *Provider, method, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.Call(ctx, tool.Request{Method: method, Args: json.RawMessage(args)})
	return string(out), err
}

func mustCall(t testing.TB, p *Provider, method, args string) string {
	t.Helper()
	out, err := call(t, p, method, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", method, args, err)
	}
	return out
}

func TestMethodsAndEffects(t *testing.T) {
	transports(t, func(t *testing.T, p *Provider) {
		ms, err := p.Methods(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		var names []string
		for _, m := range ms {
			got[m.Name] = string(m.Effect)
			if m.PipelineOnly {
				got[m.Name] += ",pipeline-only"
			}
			names = append(names, m.Name)
		}
		want := map[string]string{
			"list_tools":     "read,pipeline-only",
			"list_resources": "read", // the server has resources, so agents are offered them
			"read_resource":  "read",
			"add-numbers":    "read",     // readOnlyHint
			"json-text":      "external", // destructiveHint
			"fail":           "external", // openWorldHint
			"image":          "write",    // every hint false
			"payload":        "read",
		}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("method %s: got %q, want %q", name, got[name], w)
			}
		}
		n := 0
		for _, name := range names {
			if name == "list_tools" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("list_tools appears %d times in %v: the server's own list_tools must be hidden", n, names)
		}
		if m, _ := tool.FindMethod(ms, "add-numbers"); tool.FirstRequired(m.Params) != "a" {
			t.Errorf("add-numbers params %s: want the server's schema with a required", m.Params)
		}
	})
}

func TestResults(t *testing.T) {
	transports(t, func(t *testing.T, p *Provider) {
		tests := []struct {
			method, args, want string
		}{
			{"add-numbers", `{"a": 2, "b": 3}`, `5`},                                     // a name with '-'; text that is JSON
			{"echo", `{"text": "hello"}`, `"hello"`},                                     // text that is not JSON
			{"json-text", `{}`, `{"ok": true, "n": 12345678901234567890}`},               // JSON text kept exactly
			{"image", `{}`, `{"type":"image","mimeType":"image/png","data":"aGFsbw=="}`}, // image content
			{"read_resource", `{"uri": "` + testserver.ConfigURI + `"}`, `{"region": "eu", "replicas": 3}`},
			{"list_resources", `{}`, `[{"uri":"halo://test/config.json","name":"config","mimeType":"application/json"}]`},
			{"list_tools", `{}`, ``}, // checked below: Halo's built-in, not the server's tool
		}
		for _, tt := range tests {
			got := mustCall(t, p, tt.method, tt.args)
			if tt.want != "" && got != tt.want {
				t.Errorf("%s(%s) = %s, want %s", tt.method, tt.args, got, tt.want)
			}
		}
		var tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations json.RawMessage `json:"annotations"`
		}
		if err := json.Unmarshal([]byte(mustCall(t, p, "list_tools", `{}`)), &tools); err != nil {
			t.Fatalf("list_tools: %v", err)
		}
		found := false
		for _, tl := range tools {
			if tl.Name == "add-numbers" {
				found = len(tl.InputSchema) > 0 && strings.Contains(string(tl.Annotations), `"readOnlyHint":true`)
			}
		}
		if !found {
			t.Errorf("list_tools lacks add-numbers with its schema and annotations: %v", tools)
		}

		// structuredContent wins over the text.
		var env struct {
			Env map[string]string `json:"env"`
		}
		if err := json.Unmarshal([]byte(mustCall(t, p, "env", `{}`)), &env); err != nil || env.Env == nil {
			t.Errorf("env: want structuredContent with env, got %v", err)
		}
	})
}

func TestErrors(t *testing.T) {
	transports(t, func(t *testing.T, p *Provider) {
		_, err := call(t, p, "fail", `{}`)
		var te *tool.Error
		if !errors.As(err, &te) || te.Code != tool.CodeToolError || te.Message != "quota exceeded; try again tomorrow" {
			t.Errorf("fail: got %#v, want TOOL_ERROR with the server's message", err)
		}
		if _, err := call(t, p, "read_resource", `{}`); errcode.Code(err) != tool.CodeToolArgument {
			t.Errorf("read_resource without uri: got %v, want TOOL_ARGUMENT", err)
		}
		if _, err := call(t, p, "no-such-tool", `{}`); errcode.Code(err) != tool.CodeUnknownMethod || !strings.Contains(err.Error(), "add-numbers") {
			t.Errorf("an unknown tool: got %v, want TOOL_UNKNOWN_METHOD listing the server's tools", err)
		}
		// The connection survives a failed call.
		if got := mustCall(t, p, "add-numbers", `{"a": 1, "b": 1}`); got != "2" {
			t.Errorf("after errors: got %s", got)
		}
	})
}

func TestBindArgsWithServerSchema(t *testing.T) {
	p := openT(t, Config{Name: "T", Command: serverCommand(t), Env: serverEnv()})
	ms, err := p.Methods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := tool.FindMethod(ms, "echo")
	// A single positional value fills the first required argument; a positional object is
	// the arguments.
	for _, pos := range []any{"hi", map[string]any{"text": "hi"}} {
		args, err := tool.BindArgs(m, []any{pos}, map[string]any{"prefix": ">"})
		if err != nil {
			t.Fatal(err)
		}
		if got := mustCall(t, p, "echo", string(args)); got != `">hi"` {
			t.Errorf("echo(%v, prefix: \">\") = %s", pos, got)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	transports(t, func(t *testing.T, p *Provider) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, err := call(t, p, "add-numbers", `{"a": 40, "b": 2}`)
				if err == nil && out != "42" {
					err = errors.New("got " + out)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	})
}

// envOf asks the test server for its environment.
func envOf(t *testing.T, p *Provider) (map[string]string, string, int) {
	t.Helper()
	var r struct {
		Env map[string]string `json:"env"`
		Cwd string            `json:"cwd"`
		Pid int               `json:"pid"`
	}
	if err := json.Unmarshal([]byte(mustCall(t, p, "env", `{}`)), &r); err != nil {
		t.Fatal(err)
	}
	return r.Env, r.Cwd, r.Pid
}

// The CLI hands in an environment holding a secret; only PATH, HOME and what env: names
// reach the server, and nothing of the host process's own environment.
func TestStdioCleanEnvironment(t *testing.T) {
	t.Setenv("HALO_TEST_HOST_SECRET", "from-the-host-process")
	handed := map[string]string{
		"PATH":           "/usr/bin:/bin",
		"HOME":           "/home/someone",
		"OPENAI_API_KEY": "sk-secret",
		"GITHUB_TOKEN":   "ghp-listed",
		"GORACE":         serverEnv()["GORACE"],
	}
	getenv := func(k string) (string, bool) { v, ok := handed[k]; return v, ok }
	dir := t.TempDir()
	os.Mkdir(dir+"/work", 0o755)
	cmd := serverCommand(t)
	d := tool.Declaration{
		Name: "Srv", Provider: "MCP",
		Args:   []any{"'" + cmd[0] + "' " + cmd[1]},
		Named:  map[string]any{"env": []any{"GITHUB_TOKEN", "NOT_SET", "GORACE"}, "cwd": "work"},
		Getenv: getenv, Dir: dir,
	}
	prov, err := Type(nil).Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	p := prov.(*Provider)
	t.Cleanup(func() { p.Close() })
	env, cwd, _ := envOf(t, p)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if strings.Join(keys, " ") != "GITHUB_TOKEN GORACE HOME PATH" {
		t.Errorf("the server sees %v; want only GITHUB_TOKEN, GORACE (listed too), HOME and PATH", keys)
	}
	if env["GITHUB_TOKEN"] != "ghp-listed" || env["PATH"] != "/usr/bin:/bin" {
		t.Errorf("env values: %v", env)
	}
	if cwd != dir+"/work" {
		t.Errorf("cwd %s, want %s", cwd, dir+"/work")
	}

	// env: as a record of values.
	d.Named = map[string]any{"env": map[string]any{"LOG_LEVEL": "warn", "N": float64(3), "GORACE": serverEnv()["GORACE"]}}
	prov2, err := Type(nil).Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov2.Close() })
	env2, _, _ := envOf(t, prov2.(*Provider))
	if env2["LOG_LEVEL"] != "warn" || env2["N"] != "3" || env2["OPENAI_API_KEY"] != "" || len(env2) != 5 {
		t.Errorf("record env: the server sees %v", env2)
	}
}

// Killing the server between two calls: the second call starts it again and succeeds.
func TestRestartAfterKill(t *testing.T) {
	p := openT(t, Config{Name: "T", Command: serverCommand(t), Env: serverEnv()})
	_, _, pid := envOf(t, p)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitDead(t, p)
	if got := mustCall(t, p, "add-numbers", `{"a": 2, "b": 3}`); got != "5" {
		t.Errorf("after restart: %s", got)
	}
	if _, _, pid2 := envOf(t, p); pid2 == pid {
		t.Errorf("the server was not restarted (pid %d)", pid)
	}
}

// waitDead waits until the provider has seen its stdio server go.
func waitDead(t *testing.T, p *Provider) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		alive := p.sess != nil && p.sess.alive()
		p.mu.Unlock()
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed server still looks alive")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A server that dies during a call fails that call with TOOL_CRASHED; the next call works.
func TestCrashDuringCall(t *testing.T) {
	p := openT(t, Config{Name: "T", Command: serverCommand(t), Env: serverEnv()})
	_, err := call(t, p, "exit", `{}`)
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeToolCrashed || !te.Retryable {
		t.Fatalf("got %v, want a retryable TOOL_CRASHED", err)
	}
	if !strings.Contains(te.Message, "exit status 3") {
		t.Errorf("message %q should say how the server ended", te.Message)
	}
	if got := mustCall(t, p, "add-numbers", `{"a": 2, "b": 3}`); got != "5" {
		t.Errorf("after the crash: %s", got)
	}
}

func TestTimeout(t *testing.T) {
	transports(t, func(t *testing.T, p *Provider) {
		mustCall(t, p, "add-numbers", `{"a": 1, "b": 1}`) // connect with the default timeout
		p.cfg.Timeout = 100 * time.Millisecond
		_, err := call(t, p, "sleep", `{"ms": 5000}`)
		var te *tool.Error
		if !errors.As(err, &te) || te.Code != tool.CodeTimeout || !te.Retryable {
			t.Errorf("got %v, want a retryable TIMEOUT", err)
		}
	})
}

// Close stops the whole process group, not just the server's leader process.
func TestCloseKillsProcessGroup(t *testing.T) {
	cmd := serverCommand(t)
	p, err := Open(context.Background(), Config{Name: "T",
		Command: []string{"/bin/sh", "-c", "sleep 300 & exec \"$0\" \"$1\"", cmd[0], cmd[1]}, Env: serverEnv()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, pid := envOf(t, p)
	if err := syscall.Kill(-pid, 0); err != nil {
		t.Fatalf("the group should exist: %v", err)
	}
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	live := liveMembers(pid)
	for i := 0; i < 100 && len(live) > 0; i++ { // SIGKILL lands within moments
		time.Sleep(10 * time.Millisecond)
		live = liveMembers(pid)
	}
	if len(live) > 0 {
		t.Errorf("after Close, processes %v of the server's group %d are still running", live, pid)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if _, err := call(t, p, "env", `{}`); errcode.Code(err) != tool.CodeToolConfig {
		t.Errorf("a call after Close: got %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartFailures(t *testing.T) {
	t.Run("not found", func(t *testing.T) {
		p := openT(t, Config{Name: "T", Command: []string{"no-such-mcp-server"}, Env: map[string]string{"PATH": "/nonexistent"}})
		_, err := p.Methods(context.Background())
		if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "no-such-mcp-server not found") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("no such cwd", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "gone")
		p := openT(t, Config{Name: "T", Command: []string{"/bin/sh", "-c", "exit 0"}, Dir: missing})
		_, err := p.Methods(context.Background())
		if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "cwd "+missing) || strings.Contains(err.Error(), "/bin/sh") {
			t.Errorf("got %v, want TOOL_CONFIG naming the missing cwd, not the command", err)
		}
	})
	t.Run("exits at once", func(t *testing.T) {
		p := openT(t, Config{Name: "T", Command: []string{"/bin/sh", "-c", "echo 'cannot find config' >&2; exit 7"}})
		_, err := p.Methods(context.Background())
		if errcode.Code(err) != tool.CodeToolCrashed || !strings.Contains(err.Error(), "cannot find config") {
			t.Errorf("got %v, want TOOL_CRASHED with the server's stderr", err)
		}
	})
	t.Run("silent", func(t *testing.T) {
		p := openT(t, Config{Name: "T", Command: []string{"/bin/sh", "-c", "exec sleep 30"}, Timeout: 200 * time.Millisecond})
		_, err := p.Methods(context.Background())
		if errcode.Code(err) != tool.CodeTimeout || !strings.Contains(err.Error(), "did not answer initialize") {
			t.Errorf("got %v, want TIMEOUT", err)
		}
	})
	t.Run("http refused", func(t *testing.T) {
		srv := httptest.NewServer(nil)
		url := srv.URL
		srv.Close()
		p := openT(t, Config{Name: "T", URL: url + "/mcp", Timeout: 2 * time.Second})
		_, err := p.Methods(context.Background())
		if err == nil || !tool.IsRetryable(err) || !strings.Contains(err.Error(), "cannot connect") {
			t.Errorf("got %v, want a retryable connection error", err)
		}
	})
}

// liveMembers lists the processes of group pgid that have not exited. Killed ones can stay
// zombies for a while until init reaps them; those do not count.
func liveMembers(pgid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var live []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces, so split after the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 3 || fields[0] == "Z" || fields[0] == "X" {
			continue
		}
		if fields[2] == strconv.Itoa(pgid) {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			live = append(live, pid)
		}
	}
	return live
}

func TestContentValue(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"plain text", `[{"type":"text","text":"no results"}]`, `"no results"`},
		{"text that starts like JSON", `[{"type":"text","text":"true story"}]`, `"true story"`},
		{"JSON text", `[{"type":"text","text":" {\"a\": [1, 2]}\n"}]`, `{"a": [1, 2]}`},
		{"JSON number", `[{"type":"text","text":"\n42"}]`, `42`},
		{"escaped HTML", `[{"type":"text","text":"\u003cb\u003e \u0026"}]`, `"<b> &"`},
		{"several texts", `[{"type":"text","text":"[1,"},{"type":"text","text":"2]"}]`, `[1,
2]`},
		{"empty", `[]`, `null`},
		{"audio", `[{"type":"audio","mimeType":"audio/wav","data":"UklGRg==","annotations":{}}]`, `{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="}`},
		{"mixed", `[{"type":"text","text":"see"},{"type":"image","mimeType":"image/png","data":"AA=="}]`, `["see",{"type":"image","mimeType":"image/png","data":"AA=="}]`},
		{"embedded resource", `[{"type":"resource","resource":{"uri":"f://a","mimeType":"text/plain","text":"hi"}}]`, `{"type":"resource","uri":"f://a","mimeType":"text/plain","text":"hi"}`},
		{"text and a link", `[{"type":"text","text":"see"},{"type":"resource_link","uri":"f://a","name":"a","size":3}]`, `["see",{"type":"resource_link","uri":"f://a","name":"a","size":3}]`},
		{"resource link as sent", `[{"type":"resource_link","uri":"f://a","name":"a"}]`, `{"type":"resource_link","uri":"f://a","name":"a"}`},
	}
	for _, tt := range tests {
		got, err := toolResult("t", json.RawMessage(`{"content":`+tt.content+`}`))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: got %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestProgress(t *testing.T) {
	transports(t, func(t *testing.T, p *Provider) {
		var mu sync.Mutex
		var got []tool.Progress
		out, err := p.Call(context.Background(), tool.Request{Method: "progress", Args: json.RawMessage(`{}`),
			Progress: func(pr tool.Progress) {
				mu.Lock()
				got = append(got, pr)
				mu.Unlock()
			}})
		if err != nil || string(out) != `"done"` {
			t.Fatalf("progress: %s, %v", out, err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, pr := range got {
			if pr.Total != 2 || pr.Message != fmt.Sprintf("step %v", pr.Filled) {
				t.Errorf("got %+v", got)
			}
		}
		if len(got) != 2 {
			t.Errorf("%d progress reports, want 2", len(got))
		}
	})
}

// A server that answers initialize and then stops reading its input: a call with more than
// a pipe's worth of arguments must still end at the timeout, not hang.
func TestServerStopsReading(t *testing.T) {
	script := `read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"stuck","version":"1"}}}\n' "$id"
exec sleep 300`
	p := openT(t, Config{Name: "T", Command: []string{"/bin/sh", "-c", script}, Timeout: 2 * time.Second})
	big := `{"text": "` + strings.Repeat("x", 256<<10) + `"}`
	start := time.Now()
	_, err := call(t, p, "echo", big)
	if errcode.Code(err) != tool.CodeTimeout {
		t.Errorf("got %v, want TIMEOUT", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call took %v", d)
	}
}

// Why the provider has its own stdio transport: mcp-go's appends the host's environment to
// the one it is given (measured, with mcp-go v1.2.1). If this starts failing, mcp-go has
// changed and its transport may be worth another look.
func TestMcpGoStdioLeaksEnvironment(t *testing.T) {
	t.Setenv("HALO_TEST_HOST_SECRET", "leaked")
	cmd := serverCommand(t)
	tr := transport.NewStdio(cmd[0], []string{"GORACE=atexit_sleep_ms=0"}, cmd[1:]...)
	c := client.NewClient(tr, client.WithProtocolVersion(ProtocolVersion))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: ProtocolVersion}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "env"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"HALO_TEST_HOST_SECRET":"leaked"`) {
		t.Errorf("mcp-go's stdio transport no longer passes the host environment on: %s", b)
	}
}
