package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

// The integration tests run @modelcontextprotocol/server-everything, the MCP project's own
// reference server, pinned by testdata/npm/package-lock.json and installed into
// .cache/npm/mcp by scripts/setup-test-deps.sh. Where it is missing they fail, saying how to
// install it: they are never skipped.

const everythingRel = ".cache/npm/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// everything returns the path of node and of the server's entry point.
func everything(t testing.TB) (node, entry string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the MCP integration tests need Node.js 20+ and npm (Debian: apt-get install -y nodejs npm), then ./scripts/setup-test-deps.sh: %v", err)
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("cannot find the repository root (go.mod) above the test's folder")
		}
		dir = parent
	}
	entry = filepath.Join(dir, everythingRel)
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("@modelcontextprotocol/server-everything is not installed at %s: run ./scripts/setup-test-deps.sh (it needs npm)", entry)
	}
	return node, entry
}

// everythingStdio declares the server the way a .halo file would, with a host secret in the
// environment the CLI hands in.
func everythingStdio(t *testing.T) *Provider {
	node, entry := everything(t)
	handed := map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"),
		"OPENAI_API_KEY": "sk-must-not-leak", "DEMO_SETTING": "listed"}
	d := tool.Declaration{Name: "Ev", Provider: "MCP",
		Args:   []any{fmt.Sprintf("'%s' '%s' stdio", node, entry)},
		Named:  map[string]any{"env": []any{"DEMO_SETTING"}},
		Getenv: func(k string) (string, bool) { v, ok := handed[k]; return v, ok }}
	prov, err := Type(nil).Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.Close() })
	return prov.(*Provider)
}

// everythingHTTP starts the server's Streamable HTTP mode on a free port.
func everythingHTTP(t *testing.T) *Provider {
	node, entry := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), fmt.Sprintf("PORT=%d", port)}
	cmd.SysProcAttr = sysProcAttr() // a process group of its own, killed with the test on Linux
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("server-everything streamableHttp exited: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything streamableHttp did not listen on %s within 30s\n%s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	d := tool.Declaration{Name: "Ev", Provider: "MCP", Args: []any{"http://" + addr + "/mcp"}}
	prov, err := Type(nil).Open(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prov.Close() })
	return prov.(*Provider)
}

func TestEverything(t *testing.T) {
	for _, tr := range []struct {
		name string
		open func(*testing.T) *Provider
	}{{"stdio", everythingStdio}, {"http", everythingHTTP}} {
		t.Run(tr.name, func(t *testing.T) {
			p := tr.open(t)
			ms, err := p.Methods(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			effects := map[string]string{}
			for _, m := range ms {
				effects[m.Name] = string(m.Effect)
				if m.PipelineOnly != (m.Name == ListTools) {
					t.Errorf("%s: PipelineOnly %v; only list_tools is kept from agents when the server has resources", m.Name, m.PipelineOnly)
				}
			}
			// Effects from the server's own annotations.
			for name, want := range map[string]string{
				"get-sum":                  "read",     // readOnlyHint: true
				"toggle-simulated-logging": "write",    // every hint false
				"gzip-file-as-resource":    "external", // openWorldHint: true
			} {
				if effects[name] != want {
					t.Errorf("%s: effect %q, want %q", name, effects[name], want)
				}
			}

			if got := mustCall(t, p, "get-sum", `{"a": 2, "b": 3}`); got != `"The sum of 2 and 3 is 5."` {
				t.Errorf("get-sum: %s", got)
			}
			if got := mustCall(t, p, "get-structured-content", `{"location": "Chicago"}`); got != `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}` {
				t.Errorf("get-structured-content: %s", got)
			}
			if got := mustCall(t, p, "echo", `{"message": "<a & b>"}`); got != `"Echo: <a & b>"` {
				t.Errorf("echo: %s", got)
			}

			// An image result: text and image content, as a list of values.
			var img []json.RawMessage
			if err := json.Unmarshal([]byte(mustCall(t, p, "get-tiny-image", `{}`)), &img); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, v := range img {
				var it struct{ Type, MimeType, Data string }
				if json.Unmarshal(v, &it) == nil && it.Type == "image" {
					found = it.MimeType == "image/png" && strings.HasPrefix(it.Data, "iVBORw0KGgo")
				}
			}
			if !found {
				t.Errorf("get-tiny-image: no { type: image, mimeType: image/png, data } in %.200s", img)
			}

			// An error result fails the call with the server's message.
			_, err = call(t, p, "get-sum", `{"a": "two", "b": 3}`)
			var te *tool.Error
			if !errors.As(err, &te) || te.Code != tool.CodeToolError || !strings.Contains(te.Message, "expected number") {
				t.Errorf("get-sum with text: got %v, want TOOL_ERROR with the server's message", err)
			}

			// The reference server answers an unknown tool with an error result; the caller
			// gets TOOL_UNKNOWN_METHOD all the same.
			if _, err := call(t, p, "no-such-tool", `{}`); errcode.Code(err) != tool.CodeUnknownMethod {
				t.Errorf("an unknown tool: got %v, want TOOL_UNKNOWN_METHOD", err)
			}

			// Resources.
			var res []struct{ URI, Name string }
			if err := json.Unmarshal([]byte(mustCall(t, p, "list_resources", `{}`)), &res); err != nil || len(res) == 0 {
				t.Fatalf("list_resources: %v %v", res, err)
			}
			uri := ""
			for _, r := range res {
				if strings.HasSuffix(r.URI, "/architecture.md") {
					uri = r.URI
				}
			}
			if got := mustCall(t, p, "read_resource", `{"uri": "`+uri+`"}`); !strings.HasPrefix(got, `"`) || !strings.Contains(got, "rchitecture") {
				t.Errorf("read_resource(%s): %.200s", uri, got)
			}
		})
	}
}

// The reference server's get-env shows what a stdio server sees: PATH, HOME and what env:
// lists, not the secret in the environment the CLI handed in.
func TestEverythingCleanEnvironment(t *testing.T) {
	p := everythingStdio(t)
	var env map[string]string
	if err := json.Unmarshal([]byte(mustCall(t, p, "get-env", `{}`)), &env); err != nil {
		t.Fatal(err)
	}
	if env["OPENAI_API_KEY"] != "" || env["DEMO_SETTING"] != "listed" || env["PATH"] == "" {
		t.Errorf("the server sees %v", env)
	}
	for k := range env {
		if k != "PATH" && k != "HOME" && k != "DEMO_SETTING" {
			t.Errorf("the server sees %s, which nobody gave it", k)
		}
	}
}

// Killing the reference server between two calls: the second call starts it again.
func TestEverythingRestart(t *testing.T) {
	p := everythingStdio(t)
	mustCall(t, p, "get-sum", `{"a": 1, "b": 1}`)
	p.mu.Lock()
	pid := p.sess.stdio.pid()
	p.mu.Unlock()
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitDead(t, p)
	if got := mustCall(t, p, "get-sum", `{"a": 2, "b": 3}`); got != `"The sum of 2 and 3 is 5."` {
		t.Errorf("after restart: %s", got)
	}
}
