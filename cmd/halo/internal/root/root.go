// Package root assembles the halo command tree, sets up logging, and turns a command's
// result into the process's exit status. It is the only place exit statuses are decided.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"

	"github.com/halo-lang/halo/cmd/halo/internal/add"
	"github.com/halo-lang/halo/cmd/halo/internal/cmdutil"
	"github.com/halo-lang/halo/cmd/halo/internal/initcmd"
	"github.com/halo-lang/halo/cmd/halo/internal/install"
	"github.com/halo-lang/halo/cmd/halo/internal/mcp"
	"github.com/halo-lang/halo/cmd/halo/internal/pack"
	"github.com/halo-lang/halo/cmd/halo/internal/pluginserve"
	"github.com/halo-lang/halo/cmd/halo/internal/publish"
	"github.com/halo-lang/halo/cmd/halo/internal/remove"
	"github.com/halo-lang/halo/cmd/halo/internal/replay"
	"github.com/halo-lang/halo/cmd/halo/internal/resume"
	"github.com/halo-lang/halo/cmd/halo/internal/run"
	"github.com/halo-lang/halo/cmd/halo/internal/sandboxwrap"
	"github.com/halo-lang/halo/cmd/halo/internal/search"
	"github.com/halo-lang/halo/cmd/halo/internal/serve"
	"github.com/halo-lang/halo/cmd/halo/internal/termsafe"
	"github.com/halo-lang/halo/cmd/halo/internal/tools"
	"github.com/halo-lang/halo/cmd/halo/internal/validate"
	"github.com/halo-lang/halo/cmd/halo/internal/version"
)

// ProcessSystem reads what a real process is given: its streams, environment and folder.
// This is the only place the process environment is read.
func ProcessSystem() *cmdutil.Factory {
	dir, _ := os.Getwd()
	exe, _ := os.Executable()
	return &cmdutil.Factory{
		IO: cmdutil.IOStreams{
			In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
			InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
			OutTTY: isatty.IsTerminal(os.Stdout.Fd()),
			ErrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		},
		Env:        cmdutil.EnvFromList(os.Environ()),
		Now:        time.Now,
		Dir:        dir,
		Executable: exe,
	}
}

// Main runs the halo command with args and returns the exit status. Ctrl-C cancels the
// command's context, so every process it started is stopped before it returns.
func Main(args []string, f *cmdutil.Factory) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := NewCmdRoot(f)
	cmd.SetArgs(args)
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	err := cmd.ExecuteContext(ctx)
	status := cmdutil.StatusOf(err)
	if err != nil {
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Err != nil {
			fmt.Fprintf(f.IO.ErrOut, "halo: %s\n", termsafe.String(err.Error()))
		}
		if !errors.As(err, &ee) && isUsageError(err) {
			status = cmdutil.ExitUsage
		}
	}
	if ctx.Err() != nil && status != cmdutil.ExitOK {
		return cmdutil.ExitCancel
	}
	return status
}

// isUsageError recognises cobra's own argument and flag errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:           "halo",
		Short:         "Validate, run and serve Halo AI pipelines",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			level := hclog.LevelFromString(logLevel)
			if level == hclog.NoLevel {
				return cmdutil.FlagError("--log-level %q: want trace, debug, info, warn, error or off", logLevel)
			}
			// Plugins' and MCP servers' stderr lines reach the log, so it is written through
			// termsafe; colour is off, as termsafe would escape hclog's own colour codes too.
			f.Logger = hclog.New(&hclog.LoggerOptions{
				Name:       "halo",
				Level:      level,
				Output:     termsafe.Writer(f.IO.ErrOut),
				Color:      hclog.ColorOff,
				TimeFormat: "15:04:05.000",
			})
			return nil
		},
	}
	defaultLevel := f.Env.Get("HALO_LOG_LEVEL")
	if defaultLevel == "" {
		defaultLevel = "warn"
	}
	cmd.PersistentFlags().StringVar(&logLevel, "log-level", defaultLevel, "log level: trace, debug, info, warn, error, off (env HALO_LOG_LEVEL)")
	cmd.AddCommand(version.NewCmdVersion(f))
	for _, add := range commands {
		cmd.AddCommand(add(f))
	}
	return cmd
}

// commands lists the subcommands beside version; each package adds one line here.
var commands = []func(*cmdutil.Factory) *cobra.Command{
	func(f *cmdutil.Factory) *cobra.Command { return run.NewCmdRun(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return resume.NewCmdResume(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return replay.NewCmdReplay(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return validate.NewCmdValidate(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return initcmd.NewCmdInit(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return pluginserve.NewCmdPlugin(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return sandboxwrap.NewCmdSandbox(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return tools.NewCmdTools(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return search.NewCmdSearch(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return add.NewCmdAdd(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return remove.NewCmdRemove(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return install.NewCmdInstall(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return pack.NewCmdPack(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return publish.NewCmdPublish(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return mcp.NewCmdMCP(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return serve.NewCmdServe(f, nil) },
}
