// Package debugcmd implements `halo debug`: run a pipeline under host/debug's debugger, at
// the terminal (a command prompt, with line editing and history when stdin is a terminal,
// else commands read from stdin) or, with --dap, for an editor over the Debug Adapter
// Protocol on stdio.
package debugcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/run"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/debug"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/internal/safefile"
)

// Options are `halo debug`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// File is the .halo file; Pipeline the pipeline to run ("" when the file has one).
	File, Pipeline string
	run.RunFlags
	// DAP is --dap: serve the Debug Adapter Protocol on stdio instead.
	DAP bool
	// Registry builds the tool registry; nil means the one halo run uses.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
}

// NewCmdDebug builds `halo debug`. runF, when not nil, replaces debugRun (tests).
func NewCmdDebug(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "debug FILE [PIPELINE] | debug --dap",
		Short: "Run a pipeline under the debugger, at the terminal or for an editor",
		Long: `Validate FILE, then run PIPELINE (which may be left out when the file declares one)
under the debugger. Before each stage it shows where the run is (file:line and the stage's
source), the flowing value and context.data, and reads commands: n (next stage), s (step
into a called pipeline, a branch arm, an agent call's model requests and tool calls),
o (step out), c (continue to the next breakpoint), b LINE / b Tool.method / b violation,
p EXPR (an expression over context, as conditions are written), set NAME VALUE, skip VALUE
(answer a tool call instead of running it), r (the record so far), q (stop the run);
h lists them all. Questions of the run (|! yield, approvals, ~> listen) are asked at the
prompt. At a terminal the prompt has line editing and history; otherwise commands are read
from stdin, one a line, so a session can be scripted. The end of input, or closing the
terminal, stops the run.

The run is saved like halo run's (.halo/runs), so halo replay works on it; what you set
or skipped is marked in the record as set by a person, and a stopped run's record says it
was stopped (DEBUG_STOPPED). At the end the output is printed as halo run prints it
(--json: { status, output, runId, meta }).

With --dap, halo debug takes no FILE: it serves the Debug Adapter Protocol on stdin and
stdout for an editor (VS Code, Neovim's nvim-dap), whose launch request names the program,
the pipeline and its inputs. See docs/debugging.md.

Exit status: as halo run's: 0 completed, 1 failed or stopped, 2 bad usage, 3 paused.`,
		Example: `  # Step through a pipeline, its agents' requests and tool calls mocked
  halo debug flow.halo Tidy --input task=merge --mock

  # A scripted session: break before every Files.write, answer it, continue
  printf 'b Files.write\nc\nskip {"ok":true}\nc\n' | halo debug flow.halo --mocks mocks.json

  # For an editor's launch configuration (VS Code, nvim-dap)
  halo debug --dap`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.DAP {
				if len(args) > 0 {
					return cmdutil.FlagError("halo debug --dap takes no FILE: the editor's launch request names the program")
				}
				return nil
			}
			return cobra.RangeArgs(1, 2)(cmd, args)
		},
		ValidArgsFunction: complete.FilePipeline(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				opts.File = args[0]
			}
			if len(args) == 2 {
				opts.Pipeline = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return debugRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.RunFlags.Register(fl)
	fl.BoolVar(&opts.DAP, "dap", false, "serve the Debug Adapter Protocol on stdio, for an editor")
	return cmd
}

func debugRun(ctx context.Context, opts *Options) error {
	if opts.DAP {
		return dapRun(ctx, opts)
	}
	f := opts.F
	inputs, err := run.ParseInputs(opts.Inputs, opts.InputJSON)
	if err != nil {
		return err
	}
	sess := debug.New(sessionConfig(f))
	s, err := run.Open(f, run.Session{File: opts.File, Events: opts.Events, Mock: opts.Mock, Mocks: opts.Mocks,
		Registry: opts.Registry, Configure: sess.Configure, NoProgress: true})
	if err != nil {
		return err
	}
	defer s.Close()
	name, err := pipelineOf(s.Runtime, opts.File, opts.Pipeline)
	if err != nil {
		return err
	}
	sess.Load(s.Runtime)

	in := newReader(f)
	defer in.close()
	con := &debug.Console{Session: sess, Out: in.out, ReadLine: in.readLine}
	fmt.Fprintf(in.out, "halo debug: pipeline %s of %s; h lists the commands\n", name, opts.File)

	// Closing the terminal hangs it up: the run is stopped and its record saved, rather
	// than the process killed with its plugins left behind.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-hup:
			sess.Stop("the terminal was closed")
		case <-done:
		}
	}()
	sess.Start(ctx, name, inputs, true)
	end := con.Run()
	close(done)
	wg.Wait()
	if end.Err != nil {
		if errcode.Code(end.Err) == runtime.CodeInput {
			return &cmdutil.ExitError{Status: cmdutil.ExitUsage, Err: end.Err}
		}
		return end.Err
	}
	return run.Report(f, end.Result, opts.File, opts.JSON)
}

// pipelineOf is the pipeline to run: the one named, or the file's only one.
func pipelineOf(rt *runtime.Runtime, file, name string) (string, error) {
	if name != "" {
		return name, nil
	}
	names := rt.Pipelines()
	if len(names) != 1 {
		return "", cmdutil.FlagError("%s declares %d pipelines (%s): name the one to debug", file, len(names), strings.Join(names, ", "))
	}
	return names[0], nil
}

// sessionConfig reads the program's files and compares their paths from f's folder.
func sessionConfig(f *cmdutil.Factory) debug.Config {
	abs := func(name string) string {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(f.Dir, p)
		}
		return filepath.Clean(p)
	}
	return debug.Config{
		Path:   abs,
		Source: func(name string) ([]byte, error) { return safefile.Read(abs(name), lang.MaxSourceBytes) },
	}
}

// dapRun serves the Debug Adapter Protocol on stdio.
func dapRun(ctx context.Context, opts *Options) error {
	f := opts.F
	return debug.ServeDAP(ctx, debug.DAPConfig{
		In: f.IO.In, Out: f.IO.Out, Session: sessionConfig(f),
		Launch: func(ctx context.Context, args debug.LaunchArgs, sess *debug.Session) (*debug.Launched, error) {
			return launch(f, opts, args, sess)
		},
	})
}

// launch loads a launch request's program. What would go to stderr (the file's
// diagnostics) is the error's message, for the editor to show; nothing reaches stdout,
// which carries the protocol.
func launch(f *cmdutil.Factory, opts *Options, args debug.LaunchArgs, sess *debug.Session) (*debug.Launched, error) {
	lf := *f
	var diags bytes.Buffer
	lf.IO.In, lf.IO.Out, lf.IO.ErrOut = strings.NewReader(""), io.Discard, &diags
	lf.IO.InTTY, lf.IO.OutTTY, lf.IO.ErrTTY = false, false, false
	program := args.Program
	if args.Cwd != "" {
		lf.Dir = lf.Abs(args.Cwd)
	}
	if !filepath.IsAbs(program) {
		// Positions then carry the path the editor's breakpoints name.
		program = filepath.Join(lf.Dir, program)
	}
	s, err := run.Open(&lf, run.Session{File: program, Mock: args.Mock, Mocks: args.Mocks, Events: args.Events,
		Registry: opts.Registry, Configure: sess.Configure, NoProgress: true})
	if err != nil {
		var ee *cmdutil.ExitError
		if errors.As(err, &ee) && ee.Err == nil {
			return nil, fmt.Errorf("%s", strings.TrimSpace(termsafe.String(diags.String())))
		}
		return nil, err
	}
	name, err := pipelineOf(s.Runtime, program, args.Pipeline)
	if err != nil {
		s.Close()
		return nil, err
	}
	inputs := args.Inputs
	if inputs == nil {
		inputs = map[string]any{}
	}
	return &debug.Launched{Runtime: s.Runtime, Pipeline: name, Inputs: inputs, Close: s.Close}, nil
}
