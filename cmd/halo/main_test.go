package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/halo-lang/halo/cmd/halo/internal/root"
)

// TestMain lets testscript run this test binary as the `halo` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"halo": func() { os.Exit(root.Main(os.Args[1:], root.ProcessSystem())) },
	})
}

// TestScripts runs every testdata/script/*.txtar: one behaviour of the CLI each.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			// The MCP reference server scripts/setup-test-deps.sh installs (mcp_everything.txtar).
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("EVERYTHING", filepath.Join(root, ".cache/npm/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
			return nil
		},
	})
}
