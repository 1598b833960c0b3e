// Package replay implements `halo replay FILE RUNID`: run a recorded run's pipeline again,
// answering every model request, tool call and approval from its record, so a changed
// policy or prompt can be tried against a run that happened without a key or a server.
package replay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/complete"
	"halolang.dev/halo/cmd/halo/internal/resume"
	"halolang.dev/halo/cmd/halo/internal/run"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// Options are `halo replay`'s inputs.
type Options struct {
	F           *cmdutil.Factory
	File, RunID string
	JSON        bool
	Events      string
	// Registry builds the tool registry; nil means the one halo run uses.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
}

// NewCmdReplay builds `halo replay`. runF, when not nil, replaces replayRun (tests).
func NewCmdReplay(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "replay FILE RUNID",
		Short: "Run a recorded run again from its record",
		Example: `  halo replay fix.halo 3f9c0a7be41d2268
  halo replay fix.halo 3f9c0a7be41d2268 --json --events replay.jsonl`,
		Long: `Run the pipeline of run RUNID (saved in .halo/runs) again with its inputs, as FILE
declares it now, answering every model request, tool call, approval and |! yield or
~> listen from what the run recorded, in the order it happened. No model is asked, no tool
runs and no server starts, so no key is needed: a changed policy or prompt can be tried
against a run that happened. The first call the record cannot answer (a tool call with
other arguments, a call the run never made, a model request past the recorded ones, an
approval no one was asked) stops the replay with REPLAY_DIVERGED, saying what differed.
RUNID "last" is the run saved most recently; the beginning of one run's id will do. The
replay is not saved, and the record is left as it was; a run that cannot be replayed
(unknown, unreadable, saved without a recording, of a pipeline FILE no longer declares,
or a beginning several runs' ids have) is a RUN_RECORD error.

Prints the output as halo run does (--json: { status, output, runId, meta }).
Exit status: 0 completed, 1 failed (REPLAY_DIVERGED included) or not replayable, 2 bad
usage, 3 stopped where the recorded run waits for an answer.`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: complete.FileRun(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File, opts.RunID = args[0], args[1]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return replayRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.JSON, "json", false, "print { status, output, runId, meta } as JSON")
	fl.StringVar(&opts.Events, "events", "", "write the replay's events as JSON lines to `FILE`")
	return cmd
}

func replayRun(ctx context.Context, opts *Options) error {
	s, err := run.Open(opts.F, run.Session{File: opts.File, Events: opts.Events, Registry: opts.Registry})
	if err != nil {
		return err
	}
	defer s.Close()
	store := s.Store
	id, err := store.ResolveID(ctx, opts.RunID)
	if err != nil {
		return resume.Refused(opts.F, opts.RunID, opts.JSON, err)
	}
	rec, err := store.Load(id)
	if err != nil {
		return resume.Refused(opts.F, id, opts.JSON, err)
	}
	res, err := s.Runtime.Replay(ctx, rec)
	if err != nil {
		return resume.Refused(opts.F, id, opts.JSON, err)
	}
	if res.Status != runtime.Paused {
		return run.Report(opts.F, res, opts.File, opts.JSON)
	}
	// Paused where the recorded run waits: there is nothing to resume (a replay is not
	// saved), so no resume line.
	if opts.JSON {
		enc := json.NewEncoder(termsafe.Writer(opts.F.IO.Out))
		enc.SetIndent("", "  ")
		if err := enc.Encode(run.Output{Status: res.Status, Output: res.Output, RunID: res.RunID, Meta: res.Meta}); err != nil {
			return err
		}
	}
	waiting, question := "", ""
	if p := res.Meta.Paused; p != nil {
		waiting, question = p.WaitingFor, fmt.Sprint(p.Question)
	}
	fmt.Fprintf(termsafe.Writer(opts.F.IO.ErrOut), "replay: run %s stops where the recorded run still waits (%s): %s\n", res.RunID, waiting, question)
	return cmdutil.Silent(cmdutil.ExitPaused)
}
