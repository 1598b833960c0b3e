package main

import (
	"os"
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
			return nil
		},
	})
}
