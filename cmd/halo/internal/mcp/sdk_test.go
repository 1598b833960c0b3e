package mcp_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	mcpcmd "halolang.dev/halo/cmd/halo/internal/mcp"
	"halolang.dev/halo/host/mcpserver"
)

// The TypeScript SDK tests run a client nobody here wrote: @modelcontextprotocol/sdk, pinned
// by testdata/npm/package-lock.json and installed into .cache/npm/mcpserver by
// scripts/setup-test-deps.sh. Where it is missing they fail saying how to install it.

// sdkDir returns node and the folder the SDK is installed in.
func sdkDir(t testing.TB) (node, dir string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("the MCP SDK tests need Node.js 20+ and npm (Debian: apt-get install -y nodejs npm), then ./scripts/setup-test-deps.sh: %v", err)
	}
	root, err := filepath.Abs("../../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, ".cache", "npm", "mcpserver")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Fatalf("@modelcontextprotocol/sdk is not installed in %s: run ./scripts/setup-test-deps.sh (it needs npm)", dir)
	}
	return node, dir
}

const sdkFlow = `
agent Editor [openai/gpt-4o-mini]

# Add two numbers.
pipeline Sum(a: Number, b: Number) -> JSON:
  a |> System.Value({ a: a, b: b })

schema Summary { title: String, words: Integer }

pipeline Report(title: String) -> Summary:
  title |> System.Value({ title: title, words: 2 })

pipeline Publish(draft: String) -> JSON:
  draft
    |> Editor.shout("Shout it.") as text
    |! yield("Publish {{text}}?") as answer
    |> System.Value({ text: text, answer: answer })

pipeline Broken() -> String:
  "x" |> System.Fail("out of coffee")
`

type sdkOutput struct {
	Tools []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Results []struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		Thrown            string          `json:"thrown"`
	} `json:"results"`
	Asked []string `json:"asked"`
}

var sdkCalls = `[["Sum", {"a": 1, "b": 2}], ["Report", {"title": "t"}], ["Publish", {"draft": "hi"}], ["Broken", {}], ["Sum", {"a": "x"}], ["Nope", {}]]`

func runSDK(t *testing.T, dir string, env []string, args ...string) sdkOutput {
	t.Helper()
	node, npmDir := sdkDir(t)
	script, err := filepath.Abs("testdata/ts/client.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append(env, "HALO_NPM_DIR="+npmDir, "CALLS="+sdkCalls, "ANSWER=from typescript", "NO_COLOR=1")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("the TypeScript client did not finish; stderr:\n%s", stderr.String())
	}
	if err != nil {
		t.Fatalf("the TypeScript client: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var out sdkOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("the TypeScript client's output %q: %v", stdout.String(), err)
	}
	return out
}

func checkSDK(t *testing.T, out sdkOutput, elicited bool) {
	t.Helper()
	names := map[string]int{}
	for i, tl := range out.Tools {
		names[tl.Name] = i
	}
	if len(out.Tools) != 4 || out.Tools[names["Sum"]].Description != "Add two numbers." || len(out.Tools[names["Report"]].OutputSchema) == 0 {
		t.Errorf("tools as the SDK lists them: %+v", out.Tools)
	}
	if len(out.Results) != 6 {
		t.Fatalf("%d results", len(out.Results))
	}
	r := out.Results
	if r[0].IsError || r[0].Content[0].Text != `{"a":1,"b":2}` || string(r[0].StructuredContent) != `{"a":1,"b":2}` {
		t.Errorf("Sum: %+v", r[0])
	}
	// The SDK checks structured content against the output schema; it accepted it.
	if r[1].Thrown != "" || r[1].IsError || string(r[1].StructuredContent) != `{"title":"t","words":2}` {
		t.Errorf("Report: %+v", r[1])
	}
	if elicited {
		if r[2].IsError || r[2].Content[0].Text != `{"answer":"from typescript","text":"mock answer of Editor.shout"}` {
			t.Errorf("Publish, asked through the client: %+v", r[2])
		}
		if len(out.Asked) != 1 || !strings.Contains(out.Asked[0], "asks: Publish ") {
			t.Errorf("asked %q", out.Asked)
		}
	} else if r[2].IsError || !strings.HasPrefix(r[2].Content[0].Text, "Paused waiting for yield") || len(out.Asked) != 0 {
		t.Errorf("Publish, paused: %+v, asked %q", r[2], out.Asked)
	}
	if !r[3].IsError || !strings.Contains(r[3].Content[0].Text, "out of coffee [PIPELINE_FAILED]") {
		t.Errorf("Broken: %+v", r[3])
	}
	if !r[4].IsError || !strings.Contains(r[4].Content[0].Text, "parameter a: want a number") {
		t.Errorf("Sum with bad arguments: %+v", r[4])
	}
	if r[5].Thrown == "" || !strings.Contains(r[5].Thrown, "Nope") {
		t.Errorf("unknown tool: %+v", r[5])
	}
}

// TestTypeScriptSDKStdio: the official TypeScript SDK's client starts halo mcp, lists the
// tools and calls them; it is asked the yield's question (it declares elicitation).
func TestTypeScriptSDKStdio(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": sdkFlow})
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	out := runSDK(t, dir, nil, "stdio", halo, "mcp", "--mock", "flow.halo")
	checkSDK(t, out, true)
}

// TestTypeScriptSDKHTTP: the same client over Streamable HTTP, with the API token. It speaks
// a protocol version before 2026-07-28, so over stateless HTTP it cannot be asked: the run
// pauses.
func TestTypeScriptSDKHTTP(t *testing.T) {
	dir := project(t, map[string]string{"flow.halo": sdkFlow})
	f := &cmdutil.Factory{Dir: dir, Env: cmdutil.Env{}, Now: time.Now, Logger: hclog.NewNullLogger(),
		IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	srv, err := mcpcmd.Open(f, &mcpcmd.Options{F: f, Mock: true, Paths: []string{"flow.halo"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := srv.HTTPHandler(mcpserver.HTTPConfig{Token: "tok-123"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	out := runSDK(t, dir, []string{"TOKEN=tok-123"}, "http", ts.URL+"/mcp")
	checkSDK(t, out, false)
}
