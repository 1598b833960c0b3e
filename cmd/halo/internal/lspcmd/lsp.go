// Package lspcmd implements `halo lsp`: Halo's language server (host/lsp) on stdin and
// stdout, for editors.
package lspcmd

import (
	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/validate"
	"halolang.dev/halo/cmd/halo/internal/version"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/lsp"
	"halolang.dev/halo/host/tool"
)

// Options are `halo lsp`'s inputs.
type Options struct {
	F  *cmdutil.Factory
	IO cmdutil.IOStreams
	// Stdio is accepted and changes nothing: clients such as VS Code's pass --stdio.
	Stdio bool
}

// NewCmdLSP builds `halo lsp`. runF, when not nil, replaces lspRun (tests).
func NewCmdLSP(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "lsp",
		Short: "Run the Halo language server on stdin and stdout",
		Long: `Run Halo's language server: the Language Server Protocol on stdin and stdout, for an
editor to start (docs/editors.md says how to set up VS Code, Neovim and others). It checks
each open .halo file as halo validate checks its folder, as you type; and offers hover,
completion, go to definition, find references, document symbols, formatting (as halo fmt)
and quick fixes. Logs go to stderr. It runs until the editor says exit or closes stdin.`,
		Example: `  # what an editor runs; by hand it waits for a client on stdin
  halo lsp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.F = f
			opts.IO = f.IO
			if runF != nil {
				return runF(opts)
			}
			return lspRun(cmd, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Stdio, "stdio", false, "speak on stdin and stdout (the default and only way)")
	return cmd
}

func lspRun(cmd *cobra.Command, opts *Options) error {
	f := opts.F
	return lsp.Serve(cmd.Context(), opts.IO.In, opts.IO.Out, lsp.Config{
		Project: func(dir string) (*tool.Registry, lang.Diagnostics) {
			if dir == "" {
				dir = f.Dir
			}
			reg, err := providers.Declared(f)
			if err != nil {
				return nil, lang.Diagnostics{{Severity: lang.Error, Code: lang.CodeIO, Message: err.Error()}}
			}
			return reg, validate.AddFolder(reg, dir, ".")
		},
		Logger:  f.Logger,
		Version: version.Version,
	})
}
