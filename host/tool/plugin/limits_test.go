package plugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
)

// allocated runs f and returns how many bytes the test process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func openWith(t *testing.T, c *plugin.Client, named map[string]any) tool.Provider {
	t.Helper()
	p, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe", Named: named})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// A plugin built with the SDK that returns more than its declaration allows fails that call
// with TOOL_LIMIT: the SDK checks the limit the host sent before sending, so the plugin, its
// stream and the calls beside it go on.
func TestResultOverTheLimit(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	p := openWith(t, c, map[string]any{tool.MaxResultOption: float64(1 << 20)})
	pid := 0
	if _, err := call(t, p, "echo", `{"data":"x"}`); err != nil {
		t.Fatal(err)
	}
	pid = c.PID()
	for _, args := range []string{`{"bytes": 4194304}`, `{"bytes": 4194304, "fail": true}`} {
		_, err := call(t, p, "big", args)
		if errcode.Code(err) != tool.CodeLimit || tool.IsRetryable(err) || !strings.Contains(err.Error(), "max_result_bytes") {
			t.Errorf("big(%s): got %v, want a final TOOL_LIMIT", args, err)
		}
	}
	if out, err := call(t, p, "big", `{"bytes": 1000}`); err != nil || len(out) != 1002 {
		t.Errorf("a result under the limit: %d bytes, %v", len(out), err)
	}
	if c.PID() != pid {
		t.Errorf("the plugin was restarted (pid %d, then %d)", pid, c.PID())
	}
}

// A hostile plugin that sends a result over the limit anyway (the review's module sent 300 MB
// and grew the host to 3.7 GB) gets as far as the message's header: gRPC, or the host's
// reader of a calls socket, refuses it there,
// the call fails with TOOL_LIMIT, and the host holds little more than a flow-control window.
func TestHostilePluginResult(t *testing.T) {
	for _, tc := range []struct {
		name    string
		limit   int // max_result_bytes:, 0 for none
		size    int // what the plugin sends
		want    string
		maxHeld uint64
		arg     string // how the plugin sends it: on the Calls stream, or on a calls socket
	}{
		{"default limit", 0, 40 << 20, "16 MiB", 12 << 20, "--oversize="},
		{"max_result_bytes 1 MiB", 1 << 20, 24 << 20, "1 MiB", 12 << 20, "--oversize="},
		{"calls socket", 0, 40 << 20, "16 MiB", 12 << 20, "--calls-socket=oversize:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: []string{fmt.Sprintf("%s%d", tc.arg, tc.size)}}, plugin.Options{})
			named := map[string]any{}
			if tc.limit > 0 {
				named[tool.MaxResultOption] = float64(tc.limit)
			}
			p := openWith(t, c, named)
			var err error
			n := allocated(func() { _, err = call(t, p, "echo", `{"data":"x"}`) })
			var te *tool.Error
			if !errors.As(err, &te) || te.Code != tool.CodeLimit || !strings.Contains(te.Message, tc.want) {
				t.Fatalf("got %v, want TOOL_LIMIT naming %s", err, tc.want)
			}
			if n > tc.maxHeld {
				t.Errorf("the host allocated %d MiB for a %d MiB result", n>>20, tc.size>>20)
			}
			t.Logf("allocated %d KiB", n>>10)
		})
	}
}

// Results and failure details nest at most 64 deep.
func TestPluginResultDepth(t *testing.T) {
	p := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{}))
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := call(t, p, "raw", `{"json":`+quote(deep)+`}`); errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "more than 64 deep") {
		t.Errorf("a deep result: got %v, want TOOL_LIMIT", err)
	}
	if _, err := call(t, p, "raw", `{"json":`+quote(deep)+`, "fail": true}`); errcode.Code(err) != tool.CodeLimit {
		t.Errorf("a deep failure detail: got %v, want TOOL_LIMIT", err)
	}
	if out, err := call(t, p, "raw", `{"json":"[[1]]"}`); err != nil || string(out) != `[[1]]` {
		t.Errorf("a shallow result: %s, %v", out, err)
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// A declaration's max_result_bytes: is the host's, not the plugin's: it is checked and then
// left out of what Configure sees.
func TestMaxResultOption(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	if _, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe", Named: map[string]any{tool.MaxResultOption: "lots"}}); errcode.Code(err) != tool.CodeToolConfig {
		t.Errorf("a bad max_result_bytes: got %v, want TOOL_CONFIG", err)
	}
}

// A parameter schema nested past the limit is refused when the plugin describes it.
func TestDeepSchema(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: []string{"--deep-schema"}}, plugin.Options{})
	if _, err := c.Describe(context.Background()); errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "more than 64 deep") {
		t.Errorf("describe: got %v, want TOOL_LIMIT", err)
	}
}

// A declaration that allows larger results than the running process was started for gets a
// process that takes them: a plugin described before any declaration was opened starts with
// the default limit.
func TestLargerLimitRestarts(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	if _, err := c.Describe(context.Background()); err != nil {
		t.Fatal(err)
	}
	first := c.PID()
	p := openWith(t, c, map[string]any{tool.MaxResultOption: float64(20 << 20)})
	out, err := call(t, p, "big", `{"bytes": 17825792}`) // 17 MiB: over the default
	if err != nil || len(out) != 17<<20+2 {
		t.Fatalf("a 17 MiB result under a 20 MiB limit: %d bytes, %v", len(out), err)
	}
	if c.PID() == first {
		t.Errorf("the process started for the default limit still runs (pid %d)", first)
	}
}
