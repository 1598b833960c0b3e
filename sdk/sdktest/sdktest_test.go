package sdktest

import (
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/sdk"
)

// recorder is a testing.TB whose log lines are kept, to see what sdktest logs.
type recorder struct {
	testing.TB
	mu    sync.Mutex
	lines []string
}

func (r *recorder) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range args {
		r.lines = append(r.lines, a.(string))
	}
}

func (r *recorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

type params struct {
	Text string `json:"text"`
}

var echo = sdk.Provider{Name: "Echo", Description: "Echoes", Methods: []sdk.Method{
	sdk.NewMethod("say", "Returns its text.", sdk.Read, func(c *sdk.Call, p params) (params, error) {
		c.Logger().Debug("echo debug line")
		c.Logger().Warn("echo warn line")
		return p, nil
	}),
}}

// captureStderr runs fn with the process's standard error sent to a pipe, and returns what was
// written there.
func captureStderr(t *testing.T, fn func()) string {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	func() {
		defer func() { os.Stderr = saved }()
		fn()
	}()
	w.Close()
	return <-done
}

// A test of a provider logs the provider's lines from HALO_LOG_LEVEL's level (warn by
// default), and nothing of go-plugin's: no "[DEBUG] stdio EOF" lines, on the test log or on
// standard error, that read like failures.
func TestStartLogsFromTheLevel(t *testing.T) {
	for _, c := range []struct{ level, want, not string }{
		{"", "echo warn line", "echo debug line"},
		{"debug", "echo debug line", "stdio"},
		{"off", "", "echo"},
	} {
		t.Run("HALO_LOG_LEVEL="+c.level, func(t *testing.T) {
			t.Setenv("HALO_LOG_LEVEL", c.level)
			rec := &recorder{TB: t}
			stderr := captureStderr(t, func() {
				t.Run("call", func(t *testing.T) {
					rec.TB = t
					out := Start(rec, echo).Tool("Echo", nil).Call("say", map[string]any{"text": "hi"})
					if !out.OK() {
						t.Fatal(out)
					}
				})
			})
			if stderr != "" {
				t.Errorf("standard error got %q", stderr)
			}
			log := rec.text()
			if !strings.Contains(log, c.want) || strings.Contains(log, c.not) && c.not != "" {
				t.Errorf("test log:\n%s\nwant %q in it and not %q", log, c.want, c.not)
			}
		})
	}
}

// A plugin run as a child process: go-plugin's own lines (starting the plugin, its exit) show
// only at HALO_LOG_LEVEL=debug; the plugin's warning shows at the default level.
func TestExecLogsGoPluginOnlyAtDebug(t *testing.T) {
	exe := Build(t, "./testdata/echo")
	for _, c := range []struct {
		level   string
		goPlugn bool
	}{{"", false}, {"debug", true}} {
		t.Run("HALO_LOG_LEVEL="+c.level, func(t *testing.T) {
			t.Setenv("HALO_LOG_LEVEL", c.level)
			rec := &recorder{TB: t}
			t.Run("call", func(t *testing.T) {
				rec.TB = t
				out := Exec(rec, exe).Tool("Echo", nil).Call("say", map[string]any{"text": "hi"})
				if !out.OK() {
					t.Fatal(out)
				}
			})
			log := rec.text()
			if got := strings.Contains(log, "starting plugin"); got != c.goPlugn {
				t.Errorf("go-plugin's lines shown: %v, want %v; test log:\n%s", got, c.goPlugn, log)
			}
			if !strings.Contains(log, "echo warn line") {
				t.Errorf("the plugin's warning is not in the test log:\n%s", log)
			}
		})
	}
}
