package mcp

import (
	"fmt"
	"os"
	"testing"

	"halolang.dev/halo/host/tool/mcp/internal/testserver"
	"halolang.dev/halo/host/tool/sandbox"
)

// serverFlag makes the test binary act as the test MCP server over stdio, so stdio tests
// need no separate build step.
const serverFlag = "-halo-mcp-testserver"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		// This process is a host an attack test started (attack_test.go).
		os.Exit(runHelper())
	}
	if len(os.Args) > 1 && os.Args[1] == serverFlag {
		if err := testserver.ServeStdio(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == chaosFlag {
		os.Exit(serveChaos())
	}
	if len(os.Args) > 2 && os.Args[1] == hostileFlag {
		os.Exit(serveHostile(os.Args[2]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		// The sandbox wrapper a confined server starts through (confine_test.go).
		os.Exit(sandbox.Main(os.Args[2:], os.Environ(), os.Stderr))
	}
	os.Exit(m.Run())
}

// serverCommand is the argv that starts the test server over stdio.
func serverCommand(t testing.TB) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, serverFlag}
}

// serverEnv is the test server's environment: the race detector's one-second pause at exit
// would otherwise make every Close wait for the SIGTERM.
func serverEnv() map[string]string {
	return map[string]string{"GORACE": "atexit_sleep_ms=0"}
}
