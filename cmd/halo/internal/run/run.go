// Package run implements `halo run FILE [PIPELINE]`: validate the file, run one pipeline with
// the inputs given, print its output (or the whole result with --json), write events and the
// run record. It also holds what `halo resume` shares with it: loading a program into a
// runtime, mocks, events, and reporting a result with the right exit status.
package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/cmd/halo/internal/tracing"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/telemetry"
	"halolang.dev/halo/host/tool"
)

// Options are `halo run`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// File is the .halo file; Pipeline the pipeline to run ("" when the file has one).
	File, Pipeline string
	RunFlags
	// AutoApprove is --auto-approve: every call a policy puts up for approval is approved.
	AutoApprove bool
	// Otel is --otel and --otel-content.
	Otel tracing.Flags
	// Registry builds the tool registry; nil means providers.Build. Tests register fakes.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
}

// NewCmdRun builds `halo run`. runF, when not nil, replaces runRun (tests).
func NewCmdRun(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "run FILE [PIPELINE]",
		Short: "Run a pipeline",
		Example: `  halo run hello.halo --input name=Ada
  halo run flows.halo Fix --input-json '{"task": "fix the date parser"}' --events events.jsonl
  halo run hello.halo --mock --json
  halo run flows.halo Tidy --mocks mocks.json --auto-approve`,
		Long: `Validate FILE, then run PIPELINE (which may be left out when the file declares one
pipeline) with the inputs given, and print its output. With --json, print
{ status, output, runId, meta } instead.

Inputs are --input name=value (repeatable; parsed for the parameter's type) and
--input-json '{"name": value}'. The run is saved in the project's run store
(.halo/runs/runs.db); halo runs show RUNID prints it.

A tool call an agent's policies put up for approval (ApproveTools, ApproveEffects) is
asked about at the terminal: the call is shown, then "Allow? [y/N, or say why not]"; y
approves, Enter alone declines, and other text declines with it as the reason the model
reads. Without a terminal the run pauses and says how to answer with halo resume;
--auto-approve approves every call without asking.

Exit status: 0 completed, 1 failed (or the file has errors), 2 bad usage,
3 paused at a |! yield, a ~> listen or an approval (continue it with halo resume).`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: complete.FilePipeline(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if len(args) == 2 {
				opts.Pipeline = args[1]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	opts.RunFlags.Register(fl)
	fl.BoolVar(&opts.AutoApprove, "auto-approve", false, "approve every tool call that waits for approval, without asking")
	opts.Otel.Register(fl)
	return cmd
}

func runRun(ctx context.Context, opts *Options) error {
	inputs, err := ParseInputs(opts.Inputs, opts.InputJSON)
	if err != nil {
		return err
	}
	tr, err := opts.Otel.Open(ctx, opts.F)
	if err != nil {
		return err
	}
	s, err := Open(opts.F, Session{File: opts.File, Events: opts.Events, Mock: opts.Mock, Mocks: opts.Mocks, AutoApprove: opts.AutoApprove, Registry: opts.Registry, Tracer: tr})
	if err != nil {
		tracing.Close(tr)
		return err
	}
	defer s.Close()
	name := opts.Pipeline
	if name == "" {
		names := s.Runtime.Pipelines()
		if len(names) != 1 {
			return cmdutil.FlagError("%s declares %d pipelines (%s): name the one to run", opts.File, len(names), strings.Join(names, ", "))
		}
		name = names[0]
	}
	res, err := s.Runtime.Run(ctx, name, inputs)
	if errcode.Code(err) == runtime.CodeInput {
		return &cmdutil.ExitError{Status: cmdutil.ExitUsage, Err: err}
	}
	if err != nil {
		return err
	}
	return Report(opts.F, res, opts.File, opts.JSON)
}

// RunFlags are the flags of a run that `halo run` and `halo debug` share.
type RunFlags struct {
	// Inputs are --input k=v; InputJSON is --input-json.
	Inputs    []string
	InputJSON string
	// JSON is --json: the result as one JSON object at the end.
	JSON bool
	// Events is --events FILE.
	Events string
	// Mock is --mock; Mocks is --mocks FILE.
	Mock  bool
	Mocks string
}

// Register adds the flags to fl.
func (r *RunFlags) Register(fl *pflag.FlagSet) {
	fl.StringArrayVarP(&r.Inputs, "input", "i", nil, "an input as name=value (repeatable)")
	fl.StringVar(&r.InputJSON, "input-json", "", "inputs as one JSON object")
	fl.BoolVar(&r.JSON, "json", false, "print { status, output, runId, meta } as JSON at the end")
	fl.StringVar(&r.Events, "events", "", "write every event as a JSON line to `FILE`")
	fl.BoolVar(&r.Mock, "mock", false, "agents answer with a fixed text, without calling a model")
	fl.StringVar(&r.Mocks, "mocks", "", "answer targets from a mocks `FILE` (JSON)")
}

// ParseInputs merges --input-json and --input k=v (which win) into one map.
func ParseInputs(kvs []string, inputJSON string) (map[string]any, error) {
	in := map[string]any{}
	if inputJSON != "" {
		if err := json.Unmarshal([]byte(inputJSON), &in); err != nil || in == nil {
			return nil, cmdutil.FlagError("--input-json: want one JSON object, as in '{\"name\": \"value\"}'")
		}
	}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, cmdutil.FlagError("--input %q: want name=value", kv)
		}
		in[k] = v
	}
	return in, nil
}

// A Session is what opening a file for a run needs. AutoApprove approves every call that
// waits for approval; without it a person at a terminal (stdin) is asked, and without one
// the run pauses.
type Session struct {
	File        string
	Events      string
	Mock        bool
	Mocks       string
	AutoApprove bool
	Registry    func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
	Runtime     *runtime.Runtime
	// Store is the run store the runtime saves in (.halo/runs); Close closes it.
	Store       *runstore.SQLite
	stores      *store.Set
	closeEvents func() error
	spinner     *spinner

	// Tracer, when not nil, gets the runs' spans; Close exports what it holds.
	Tracer *telemetry.Tracer
	// Configure, when set, changes the runtime's config last, before the runtime is made
	// (halo debug hands it its hooks). NoProgress keeps the live status line off the terminal.
	Configure  func(*runtime.Config)
	NoProgress bool
}

// Close stops the progress line and flushes the events file and the traces.
func (s *Session) Close() error {
	if s.spinner != nil {
		s.spinner.close()
	}
	if s.stores != nil {
		s.stores.Close()
	}
	tracing.Close(s.Tracer)
	var err error
	if s.Store != nil {
		err = s.Store.Close()
		s.Store = nil
	}
	if s.closeEvents != nil {
		if cerr := s.closeEvents(); err == nil {
			err = cerr
		}
	}
	return err
}

// Open loads and validates s.File and makes its runtime: the tool registry, mocks, the
// events file and the run store (.halo/runs in the working folder).
func Open(f *cmdutil.Factory, s Session) (*Session, error) {
	prog, reg, err := providers.LoadProgram(f, []string{s.File}, s.Registry)
	if err != nil {
		return nil, err
	}
	mocks, scope, err := providers.LoadMocks(f, s.Mocks, prog)
	if err != nil {
		return nil, err
	}
	// Every record is committed before Save returns, so before anything is printed.
	runs, err := f.OpenRuns(runstore.SQLiteOptions{})
	if err != nil {
		return nil, err
	}
	s.Store = runs
	s.stores = providers.Stores(f, f.Dir, s.Mock)
	cfg := runtime.Config{
		Tools: reg, Models: providers.Models(f), Env: f.Env, Dir: f.Dir, File: s.File, Mocks: mocks, MockScope: scope, MockAgents: s.Mock,
		Stores: s.stores, Store: runs, Now: f.Now, Logger: f.Logger,
	}
	var ask *prompter
	switch {
	case s.AutoApprove:
		cfg.OnInterrupt = autoApprove
	case f.IO.InTTY:
		ask = newPrompter(f.IO.In, f.IO.ErrOut)
		cfg.OnInterrupt = ask.ask
	}
	if s.Events != "" {
		w, err := os.Create(f.Abs(s.Events))
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("--events: %w", err)
		}
		var mu sync.Mutex
		enc := json.NewEncoder(w)
		var werr error
		cfg.OnEvent = func(e runtime.Event) {
			mu.Lock()
			defer mu.Unlock()
			if err := enc.Encode(e); err != nil && werr == nil {
				werr = err
			}
		}
		s.closeEvents = func() error {
			cerr := w.Close()
			if werr != nil {
				return fmt.Errorf("--events: %w", werr)
			}
			return cerr
		}
	}
	s.Tracer.Install(&cfg)
	if f.IO.ErrTTY && !s.NoProgress {
		// A live status line on the terminal while the run goes on (stderr only: stdout may
		// be a file).
		sp := newSpinner(f.IO.ErrOut, spinnerEvery)
		toFile := cfg.OnEvent
		cfg.OnEvent = func(e runtime.Event) {
			sp.event(e)
			if toFile != nil {
				toFile(e)
			}
		}
		traced := cfg.OnMark
		cfg.OnMark = func(ctx context.Context, m runtime.Mark) {
			sp.mark(m)
			if traced != nil {
				traced(ctx, m)
			}
		}
		s.spinner = sp
		if ask != nil {
			ask.hold = sp.hold
		}
	}
	if s.Configure != nil {
		s.Configure(&cfg)
	}
	rt, err := runtime.New(prog, cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Runtime = rt
	return &s, nil
}

// spinnerEvery is how often the progress line is redrawn.
const spinnerEvery = 100 * time.Millisecond

// ServeHolds reports whether a halo serve holds the runs of the project in dir
// (.halo/runs), where halo resume is refused (STORE_BUSY) until it stops: what a paused run's
// hint must say, since the run is then answered through the server (it shares the store).
func ServeHolds(dir string) bool {
	busy, _ := runstore.FolderInUse(filepath.Join(dir, ".halo", "runs"))
	return busy
}

// Output is the --json shape of a run.
type Output struct {
	Status runtime.Status     `json:"status"`
	Output any                `json:"output"`
	RunID  string             `json:"runId"`
	Meta   runtime.Meta       `json:"meta"`
	Error  *runtime.ErrorInfo `json:"error,omitempty"`
}

// Report prints res and returns the error that sets the exit status: nil for completed,
// ExitFailed for failed, ExitPaused for paused. The output, the question and the error come
// from models and tools, so they are written through termsafe (--json losslessly: JSON
// escapes decode to the same value).
func Report(f *cmdutil.Factory, res *runtime.Result, file string, asJSON bool) error {
	out, errOut := termsafe.Writer(f.IO.Out), termsafe.Writer(f.IO.ErrOut)
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(Output{Status: res.Status, Output: res.Output, RunID: res.RunID, Meta: res.Meta, Error: res.Error}); err != nil {
			return err
		}
	}
	switch res.Status {
	case runtime.Completed:
		if !asJSON {
			printValue(out, res.Output)
		}
		return nil
	case runtime.Paused:
		p := res.Meta.Paused
		switch {
		case p != nil && p.WaitingFor == runtime.ChannelApproval:
			fmt.Fprintf(errOut, "paused: run %s waits for approval: %s\ncontinue it with: halo resume %s %s --payload approve\n(or decline it, saying why: --payload 'no, <why>')\n", res.RunID, textOf(p.Question), file, res.RunID)
		case p != nil && p.WaitingFor != runtime.ChannelYield:
			fmt.Fprintf(errOut, "paused: run %s waits for a signal on channel %s\ncontinue it with: halo resume %s %s --channel %s --payload <payload>\n", res.RunID, p.WaitingFor, file, res.RunID, p.WaitingFor)
		default:
			q := ""
			if p != nil {
				q = textOf(p.Question)
			}
			fmt.Fprintf(errOut, "paused: run %s waits for an answer: %s\ncontinue it with: halo resume %s %s --payload <answer>\n", res.RunID, q, file, res.RunID)
		}
		if ServeHolds(f.Dir) {
			fmt.Fprintf(errOut, "(a halo serve is serving this folder's runs, and halo resume is refused beside it: answer the run through the server, on its Studio page or with POST /api/runs/%s/signal, or stop the server first)\n", res.RunID)
		}
		return cmdutil.Silent(cmdutil.ExitPaused)
	default:
		if res.Error != nil {
			at := ""
			if res.Error.At != "" {
				at = res.Error.At + ": "
			}
			fmt.Fprintf(errOut, "halo: run %s failed: %s%s [%s]\n", res.RunID, at, res.Error.Message, res.Error.Code)
			if d := detailText(res.Error); d != "" {
				fmt.Fprintf(errOut, "  detail: %s\n", d)
			}
		}
		return cmdutil.Silent(cmdutil.ExitFailed)
	}
}

// maxDetail bounds the failure detail printed on stderr, in bytes; --json and the run record
// have all of it.
const maxDetail = 2000

// detailText is a tool failure's detail for stderr, when it says more than the message: the
// object sdk.FailWith returned, say, rather than the {"error": message} of a plain failure.
// It is compact JSON, cut at maxDetail bytes; stderr's writer (termsafe) shows what a terminal
// would act on as escapes.
func detailText(info *runtime.ErrorInfo) string {
	if len(info.Detail) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(info.Detail, &v) != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		if strings.Contains(info.Message, x) {
			return ""
		}
	case map[string]any:
		if msg, ok := x["error"].(string); ok && len(x) == 1 && strings.Contains(info.Message, msg) {
			return ""
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, info.Detail) != nil {
		return ""
	}
	s := buf.String()
	if len(s) > maxDetail {
		cut := maxDetail
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func printValue(w io.Writer, v any) {
	if s, ok := v.(string); ok {
		fmt.Fprintln(w, s)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	w.Write(buf.Bytes())
}

func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}
