// Package sandboxwrap implements the hidden `halo __sandbox [--ro P] [--rw P] [--ls P] [--net] --
// PROGRAM ARGS`: it applies the sandbox (Landlock on Linux, and no capabilities) to its own
// process and then executes PROGRAM in its place. The host no longer starts plugins this
// way (it confines a thread of its own and starts them from it: host/tool/sandbox); the
// command stays for trying a policy by hand (`halo __sandbox --ro "$PWD" -- bash`) and for
// the benchmarks that compare the two.
package sandboxwrap

import (
	"io"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/tool/sandbox"
)

// Options are the command's inputs.
type Options struct {
	Args   []string
	Env    []string
	ErrOut io.Writer
}

// NewCmdSandbox builds `halo __sandbox`. runF replaces the run in tests.
func NewCmdSandbox(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	return &cobra.Command{
		Use:                sandbox.Command + " [--ro PATH]... [--rw PATH]... [--ls PATH]... [--net] -- PROGRAM [ARG]...",
		Short:              "Run a program inside the plugin sandbox (internal)",
		Hidden:             true,
		DisableFlagParsing: true, // everything after -- belongs to PROGRAM
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &Options{Args: args, Env: f.Env.List(), ErrOut: f.IO.ErrOut}
			if runF != nil {
				return runF(opts)
			}
			return sandboxRun(opts)
		},
	}
}

// sandboxRun returns only when the program could not be started.
func sandboxRun(opts *Options) error {
	return cmdutil.Silent(sandbox.Main(opts.Args, opts.Env, opts.ErrOut))
}
