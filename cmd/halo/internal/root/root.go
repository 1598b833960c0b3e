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

	"halolang.dev/halo/cmd/halo/internal/add"
	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/debugcmd"
	"halolang.dev/halo/cmd/halo/internal/explain"
	"halolang.dev/halo/cmd/halo/internal/fmtcmd"
	"halolang.dev/halo/cmd/halo/internal/index"
	"halolang.dev/halo/cmd/halo/internal/initcmd"
	"halolang.dev/halo/cmd/halo/internal/install"
	"halolang.dev/halo/cmd/halo/internal/keygen"
	"halolang.dev/halo/cmd/halo/internal/lock"
	"halolang.dev/halo/cmd/halo/internal/lspcmd"
	"halolang.dev/halo/cmd/halo/internal/mcp"
	"halolang.dev/halo/cmd/halo/internal/pack"
	"halolang.dev/halo/cmd/halo/internal/plan"
	plugincmd "halolang.dev/halo/cmd/halo/internal/plugin"
	"halolang.dev/halo/cmd/halo/internal/pluginserve"
	"halolang.dev/halo/cmd/halo/internal/publish"
	"halolang.dev/halo/cmd/halo/internal/remove"
	"halolang.dev/halo/cmd/halo/internal/replay"
	"halolang.dev/halo/cmd/halo/internal/resume"
	"halolang.dev/halo/cmd/halo/internal/run"
	"halolang.dev/halo/cmd/halo/internal/runs"
	"halolang.dev/halo/cmd/halo/internal/sandboxwrap"
	"halolang.dev/halo/cmd/halo/internal/search"
	"halolang.dev/halo/cmd/halo/internal/serve"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/cmd/halo/internal/test"
	"halolang.dev/halo/cmd/halo/internal/tools"
	"halolang.dev/halo/cmd/halo/internal/trust"
	"halolang.dev/halo/cmd/halo/internal/validate"
	"halolang.dev/halo/cmd/halo/internal/version"
	"halolang.dev/halo/errcode"
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
	if err != nil {
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Err != nil {
			fmt.Fprint(f.IO.ErrOut, errorText(err))
		}
	}
	status := cmdutil.StatusOf(err)
	if ctx.Err() != nil && status != cmdutil.ExitOK && cmdutil.Interrupted(err) {
		return cmdutil.ExitCancel
	}
	return status
}

// errorText is how every command's error is printed: `halo: message [CODE]`, the stable code
// once, at the end of the first line (a message may go on over more lines: a package's
// problems, one a line). A message written through termsafe, as it may quote a file, a
// registry or a run record.
func errorText(err error) string {
	first, rest, multi := strings.Cut(termsafe.String(err.Error()), "\n")
	if code := errcode.Code(err); code != "" && !strings.HasSuffix(first, "["+code+"]") {
		first += " [" + code + "]"
	}
	if multi {
		return "halo: " + first + "\n" + rest + "\n"
	}
	return "halo: " + first + "\n"
}

// markUsage makes cobra's own errors usage errors where they arise: a flag that does not
// parse, arguments a command does not take, a command that does not exist. They exit with
// ExitUsage; nothing is recognised by its text.
func markUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageError(err) })
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	builtinExamples(root)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.Args != nil:
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error { return cmdutil.UsageError(args(cmd, a)) }
		case c.HasSubCommands():
			// cobra's own check (legacyArgs) names an unknown subcommand; it runs only while
			// Args is nil, so it is done here instead. SuggestionsFor reads the distance as it
			// is (only cobra's own check sets its default of 2).
			c.SuggestionsMinimumDistance = 2
			c.Args = func(cmd *cobra.Command, a []string) error {
				if len(a) > 0 {
					return cmdutil.FlagError("unknown command %q for %q%s", a[0], cmd.CommandPath(), suggestions(cmd, a[0]))
				}
				return nil
			}
		}
		if c.HasSubCommands() && !c.Runnable() {
			// cobra checks the arguments of runnable commands only: a group prints its help.
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// suggestions says which subcommands an unknown one may have meant: "; did you mean run?".
func suggestions(cmd *cobra.Command, arg string) string {
	s := cmd.SuggestionsFor(arg)
	switch len(s) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + s[0] + "?"
	}
	return "; did you mean " + strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1] + "?"
}

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "halo",
		Short: "Validate, run and serve Halo AI pipelines",
		Example: `  halo init hello
  halo validate hello
  halo run hello/hello.halo --mock
  halo test hello
  halo serve hello`,
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
	// halo --version prints what halo version prints.
	cmd.Version = version.Current().String()
	cmd.SetVersionTemplate("{{.Version}}\n")
	cmd.AddCommand(version.NewCmdVersion(f))
	for _, add := range commands {
		cmd.AddCommand(add(f))
	}
	markUsage(cmd)
	return cmd
}

// commands lists the subcommands beside version; each package adds one line here.
var commands = []func(*cmdutil.Factory) *cobra.Command{
	func(f *cmdutil.Factory) *cobra.Command { return run.NewCmdRun(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return resume.NewCmdResume(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return replay.NewCmdReplay(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return runs.NewCmdRuns(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return debugcmd.NewCmdDebug(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return validate.NewCmdValidate(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return fmtcmd.NewCmdFmt(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return lspcmd.NewCmdLSP(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return explain.NewCmdExplain(f, nil) },
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
	func(f *cmdutil.Factory) *cobra.Command { return keygen.NewCmdKeygen(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return trust.NewCmdTrust(f) },
	func(f *cmdutil.Factory) *cobra.Command { return lock.NewCmdLock(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return plugincmd.NewCmdPlugin(f) },
	func(f *cmdutil.Factory) *cobra.Command { return plan.NewCmdPlan(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return test.NewCmdTest(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return mcp.NewCmdMCP(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return serve.NewCmdServe(f, nil) },
	func(f *cmdutil.Factory) *cobra.Command { return index.NewCmdIndex(f, nil) },
}
