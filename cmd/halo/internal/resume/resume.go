// Package resume implements `halo resume FILE RUNID [--channel NAME] --payload ...`:
// continue a run that paused at a |! yield or a ~> listen, with the payload as that stage's
// value, or at a tool call waiting for approval, with the payload as the answer.
package resume

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/run"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/cmd/halo/internal/tracing"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// Options are `halo resume`'s inputs.
type Options struct {
	F           *cmdutil.Factory
	File, RunID string
	// Payload is the answer: JSON when it parses as JSON, else the text itself.
	Payload string
	// Channel, when set, is the channel the payload answers: the run must wait on it.
	Channel string
	JSON    bool
	Events  string
	Mock    bool
	Mocks   string
	// AutoApprove approves every later call that waits for approval (--auto-approve).
	AutoApprove bool
	// Otel is --otel and --otel-content.
	Otel tracing.Flags
	// Registry builds the tool registry; nil means the one halo run uses.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
}

// NewCmdResume builds `halo resume`. runF, when not nil, replaces resumeRun (tests).
func NewCmdResume(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "resume FILE RUNID [--channel NAME] --payload ANSWER",
		Short: "Continue a paused run",
		Example: `  halo resume tidy.halo 3f9c0a7be41d2268 --payload approve
  halo resume tidy.halo last --payload 'no, write to drafts/ instead'
  halo resume orders.halo 3f9c0a7be41d2268 --channel orders --payload '{"id": 42}'`,
		Long: `Continue run RUNID of FILE, paused at a |! yield, a ~> listen or a tool call
waiting for approval, from where it stopped: the payload becomes the stage's value, or
answers the approval (approve, y, yes, ok, true, {"approved": true} approve; anything else
declines, and text other than a bare no is the reason the agent's model reads). An
approved call runs and the agent's conversation goes on where it stopped. RUNID "last"
means the run that paused most recently; the beginning of one run's id will do. With
--channel, the run must be waiting on that channel ("yield" for a yield, "approval", or
the listen's channel name): a signal for another channel is refused. A payload that parses as JSON is used as JSON; anything else
is text. The run record is read from and written back to .halo/runs; a run that cannot
be resumed (unknown, unreadable, finished, waiting on another channel) is a RUN_RECORD
error and its record is left as it was. While a halo serve keeps this folder's runs,
halo resume is refused (STORE_BUSY): answer a run the server started through it; one that
halo run or halo mcp paused meanwhile is resumed once the server stops. Later approvals are
asked at the terminal as in halo run (--auto-approve approves them).

Exit status: 0 completed, 1 failed (or not resumable), 2 bad usage, 3 paused again.`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: complete.FileRun(f, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.RunID = args[0], args[1]
			if !cmd.Flags().Changed("payload") {
				return cmdutil.FlagError("--payload is required: the answer the run waits for")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return resumeRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Payload, "payload", "", "the answer to the yield, or the signal's payload (JSON or text)")
	fl.StringVar(&opts.Channel, "channel", "", "the channel the payload answers (`NAME`: yield, approval, or a listen's channel)")
	fl.BoolVar(&opts.JSON, "json", false, "print { status, output, runId, meta } as JSON")
	fl.StringVar(&opts.Events, "events", "", "write the resumed run's events as JSON lines to `FILE`")
	fl.BoolVar(&opts.Mock, "mock", false, "agents answer with a fixed text, without calling a model")
	fl.StringVar(&opts.Mocks, "mocks", "", "answer targets from a mocks `FILE` (JSON)")
	fl.BoolVar(&opts.AutoApprove, "auto-approve", false, "approve every later tool call that waits for approval, without asking")
	opts.Otel.Register(fl)
	return cmd
}

func resumeRun(ctx context.Context, opts *Options) error {
	// A halo serve that has this folder's runs continues them itself: a resume beside it
	// could continue a run it continues too.
	if busy, _ := runstore.FolderInUse(filepath.Join(opts.F.Dir, ".halo", "runs")); busy {
		return Refused(opts.F, opts.RunID, opts.JSON, runstore.Errorf(runstore.CodeBusy, "a halo serve is serving this folder's runs: answer run %s through it if it started the run (POST /api/runs/%s/signal, or its approval link); a run halo run or halo mcp paused while it serves waits for halo resume until the server stops", opts.RunID, opts.RunID))
	}
	tr, err := opts.Otel.Open(ctx, opts.F)
	if err != nil {
		return err
	}
	s, err := run.Open(opts.F, run.Session{File: opts.File, Events: opts.Events, Mock: opts.Mock, Mocks: opts.Mocks, AutoApprove: opts.AutoApprove, Registry: opts.Registry, Tracer: tr})
	if err != nil {
		tracing.Close(tr)
		return err
	}
	defer s.Close()
	// "last" is the paused run updated most recently, which the runtime finds itself; any
	// other RUNID may be the beginning of one run's id.
	if opts.RunID != "last" && s.Store != nil {
		id, err := s.Store.ResolveID(ctx, opts.RunID)
		if err != nil {
			return Refused(opts.F, opts.RunID, opts.JSON, err)
		}
		opts.RunID = id
	}
	var res *runtime.Result
	if opts.Channel != "" {
		res, err = s.Runtime.Signal(ctx, opts.RunID, opts.Channel, Payload(opts.Payload))
	} else {
		res, err = s.Runtime.Resume(ctx, opts.RunID, Payload(opts.Payload))
	}
	if err != nil {
		return Refused(opts.F, opts.RunID, opts.JSON, err)
	}
	return run.Report(opts.F, res, opts.File, opts.JSON)
}

// A Refusal is the --json output of a resume that could not go on.
type Refusal struct {
	RunID string             `json:"runId"`
	Error *runtime.ErrorInfo `json:"error"`
}

// Refused reports a run that could not be resumed (or replayed): with --json as JSON on
// stdout too; the error, with its code, is printed by the root command (exit status 1).
func Refused(f *cmdutil.Factory, runID string, asJSON bool, err error) error {
	code := errcode.Code(err)
	if code == "" {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(termsafe.Writer(f.IO.Out))
		enc.SetIndent("", "  ")
		if werr := enc.Encode(Refusal{RunID: runID, Error: &runtime.ErrorInfo{Code: code, Message: err.Error()}}); werr != nil {
			return werr
		}
	}
	return err
}

// Payload reads an answer: JSON when it is JSON, else the text.
func Payload(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}
