package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/host/telemetry/otlptest"
)

// TestTrustScripts runs testdata/trustscript/*.txtar: traces, signed packages and pinned
// MCP tools (issue 18). Its commands of its own:
//
//	otlp                 start an in-process OTLP receiver (HTTP) and set $OTLP to its URL
//	spans TREE ATTRS     write what the receiver got: the span tree to TREE, and one line
//	                     per span and attribute ("NAME: key=value"), status and event,
//	                     sorted, to ATTRS
func TestTrustScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/trustscript",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("EVERYTHING", filepath.Join(root, ".cache/npm/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
			// The folder npm installed it in, where `npx mcp-server-everything` finds it.
			env.Setenv("EVERYTHING_DIR", filepath.Join(root, ".cache/npm/mcp"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"otlp":     otlpCmd,
			"spans":    spansCmd,
			"treehash": treehashCmd,
		},
	})
}

var receivers = map[*testscript.TestScript]*otlptest.Receiver{}

func otlpCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: otlp")
	}
	r := otlptest.NewHTTP()
	logMu.Lock()
	receivers[ts] = r
	logMu.Unlock()
	ts.Defer(func() {
		r.Close()
		logMu.Lock()
		delete(receivers, ts)
		logMu.Unlock()
	})
	ts.Setenv("OTLP", r.URL)
}

func spansCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: spans TREE ATTRS")
	}
	logMu.Lock()
	r := receivers[ts]
	logMu.Unlock()
	if r == nil {
		ts.Fatalf("spans: no receiver (run otlp first)")
	}
	spans := r.Wait(1, 5*time.Second)
	var lines []string
	for _, s := range spans {
		for k, v := range s.Attrs {
			lines = append(lines, fmt.Sprintf("%s: %s=%v", s.Name, k, v))
		}
		if s.StatusCode != "" && s.StatusCode != "UNSET" {
			lines = append(lines, fmt.Sprintf("%s: status=%s %s", s.Name, s.StatusCode, s.StatusMessage))
		}
		for _, e := range s.Events {
			lines = append(lines, fmt.Sprintf("%s: event %s", s.Name, e.Name))
		}
	}
	sort.Strings(lines)
	if err := os.WriteFile(ts.MkAbs(args[0]), []byte(otlptest.Tree(spans)), 0o644); err != nil {
		ts.Fatalf("spans: %v", err)
	}
	if err := os.WriteFile(ts.MkAbs(args[1]), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		ts.Fatalf("spans: %v", err)
	}
}
