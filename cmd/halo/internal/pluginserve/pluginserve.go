// Package pluginserve implements the hidden `halo __plugin NAME`: the halo binary serving
// one of its built-in plugins (workspace, bash) to the host process that started it.
// Nobody types it; host/tool/builtin starts it, confined from its first instruction by the
// thread of the host that starts it.
package pluginserve

import (
	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/tool/builtin"
)

// Options are the command's inputs.
type Options struct {
	// Args are the plugin's name.
	Args   []string
	Getenv func(string) (string, bool)
}

// NewCmdPlugin builds `halo __plugin NAME`. runF replaces the run in tests.
func NewCmdPlugin(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	return &cobra.Command{
		Use:    builtin.PluginCommand + " workspace|bash",
		Short:  "Serve a built-in plugin to a halo host (internal)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &Options{Args: args, Getenv: f.Env.Lookup}
			if runF != nil {
				return runF(opts)
			}
			return pluginRun(opts)
		},
	}
}

func pluginRun(opts *Options) error {
	return builtin.Main(opts.Args, opts.Getenv)
}
