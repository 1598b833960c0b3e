package mcp_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	mcpcmd "halolang.dev/halo/cmd/halo/internal/mcp"
	"halolang.dev/halo/host/mcpserver"
	"halolang.dev/halo/host/telemetry"
	"halolang.dev/halo/host/telemetry/otlptest"
)

// A run an MCP client starts is traced like halo run's, through the Tracer the command (or
// halo serve, for /mcp) hands to Open.
func TestRunsAreTraced(t *testing.T) {
	rcv := otlptest.NewHTTP()
	defer rcv.Close()
	tr, err := telemetry.Open(context.Background(), telemetry.Config{Endpoint: rcv.URL})
	if err != nil {
		t.Fatal(err)
	}
	dir := project(t, map[string]string{"echo.halo": "# Echo the text.\npipeline Echo(text: String) -> Result:\n  text |> System.Value(text)\n"})
	f := &cmdutil.Factory{Dir: dir, Env: cmdutil.EnvFromList(os.Environ()), Now: time.Now, Logger: hclog.NewNullLogger(),
		IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	srv, err := mcpcmd.Open(f, &mcpcmd.Options{F: f, Paths: []string{"echo.halo"}, Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	h, err := srv.HTTPHandler(mcpserver.HTTPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Echo","arguments":{"text":"hi"}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(out), `"text":"hi"`) {
		t.Fatalf("call: %s", out)
	}
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := otlptest.Tree(rcv.Spans()), "run Echo\n  stage System.Value\n"; got != want {
		t.Errorf("trace:\n%s\nwant:\n%s", got, want)
	}
}
