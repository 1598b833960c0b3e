// Package runs implements `halo runs list|show|rm|prune`: the runs the embedded store keeps
// in .halo/runs, listed, shown, removed and pruned through the store, so that nobody needs
// to read its files.
package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// Options are the inputs of every `halo runs` command.
type Options struct {
	F    *cmdutil.Factory
	JSON bool
	// list
	Status, Pipeline, Since, Text, Cursor string
	Violations                            bool
	Limit                                 int
	// show, rm
	IDs []string
	// prune
	OlderThan string
	Keep      int
	keepSet   bool
}

// NewCmdRuns builds `halo runs` and its commands. runF, when not nil, replaces each
// command's run function (tests); it gets the command's name.
func NewCmdRuns(f *cmdutil.Factory, runF func(ctx context.Context, name string, opts *Options) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List, show, remove and prune the runs kept in .halo/runs",
		Long: `List, show, remove and prune the runs this folder's run store keeps (.halo/runs, the
store halo run, resume, mcp and serve save in). Scripts should read runs with
halo runs list --json and halo runs show RUNID --json, not the store's files.`,
		Example: `  halo runs list --status paused
  halo runs list --text Pay.create_refund --since 7d --json
  halo runs show 3f9c0a7be41d2268
  halo runs rm 3f9c0a7be41d2268
  halo runs prune --older-than 30d --keep 100`,
	}
	do := func(name string, opts *Options) func(cmd *cobra.Command, args []string) error {
		return func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if runF != nil {
				return runF(cmd.Context(), name, opts)
			}
			return runs[name](cmd.Context(), opts)
		}
	}

	lo := &Options{F: f}
	list := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Long: `List the runs of the store, newest first (by start time), with their status, pipeline,
start time, cost, violations, and what a paused run waits for or why a failed one failed.
Filters narrow the list, each must hold: --status, --pipeline, --since (a duration such as
24h or 7d back from now, or a date or time: 2026-01-02, 2026-01-02T15:04:05Z), --violations
(runs with at least one policy violation) and --text (words each found, ignoring case, in
the run's file, pipeline, inputs, output, error or the targets of its calls, or beginning
its run id). --limit says
how many (default 20, at most 500); with --json the page's "next" is the --cursor of the
next page.`,
		Example: `  halo runs list
  halo runs list --status failed --pipeline Refund
  halo runs list --violations --since 24h
  halo runs list --text "Pay.create_refund" --json | jq -r '.runs[].runId'`,
		Args: cobra.NoArgs,
		RunE: do("list", lo),
	}
	fl := list.Flags()
	fl.StringVar(&lo.Status, "status", "", "only runs with this `STATUS`: running, paused, completed or failed")
	fl.StringVar(&lo.Pipeline, "pipeline", "", "only runs of this `PIPELINE`")
	fl.StringVar(&lo.Since, "since", "", "only runs started since `WHEN`: a duration back (24h, 7d) or a date or time")
	fl.BoolVar(&lo.Violations, "violations", false, "only runs with policy violations")
	fl.StringVar(&lo.Text, "text", "", "only runs whose inputs, output, error or call targets hold every word of `TEXT` (or whose id it begins)")
	fl.IntVar(&lo.Limit, "limit", 20, "the most runs to list (`N`, at most 500)")
	fl.StringVar(&lo.Cursor, "cursor", "", "go on after the page whose next this is (`NEXT` of --json)")
	fl.BoolVar(&lo.JSON, "json", false, "print { runs: [{ runId, file, pipeline, status, started, updated, waitingFor, error, cost, violations }], next }")

	so := &Options{F: f}
	show := &cobra.Command{
		Use:   "show RUNID",
		Short: "Show a run's record",
		Long: `Show the record of run RUNID ("last": the run saved most recently; the beginning of
one run's id will do): its file and pipeline, status, times, cost, calls, violations,
inputs, output, error, and for a paused run what it waits for. --json prints the whole
record as the store keeps it: inputs, output, error, meta, data, events, the recording
halo replay answers from, and for a paused run where it resumes and its seal.`,
		Example: `  halo runs show 3f9c0a7be41d2268
  halo runs show 3f9c
  halo runs show last --json | jq .meta.calls`,
		Args: cobra.ExactArgs(1),
		RunE: do("show", so),
	}
	show.Flags().BoolVar(&so.JSON, "json", false, "print the run's record as JSON")

	ro := &Options{F: f}
	rm := &cobra.Command{
		Use:   "rm RUNID...",
		Short: "Remove runs",
		Long: `Remove the records of the runs named (each by its id or the beginning of one run's
id). A run that is running (under a halo serve) is refused (RUN_RUNNING), and then nothing
is removed; so is an unknown id or a beginning several runs' ids have (RUN_RECORD). A
paused run that is removed can no longer be resumed.`,
		Example: `  halo runs rm 3f9c0a7be41d2268 9e76b0c2a4d1f380`,
		Args:    cobra.MinimumNArgs(1),
		RunE:    do("rm", ro),
	}
	rm.Flags().BoolVar(&ro.JSON, "json", false, "print { removed: [runId] }")

	po := &Options{F: f}
	prune := &cobra.Command{
		Use:   "prune --older-than D | --keep N",
		Short: "Remove old finished runs",
		Long: `Remove finished runs (completed or failed; never a paused or running run): those
started longer ago than --older-than (a duration such as 720h or 30d, or a date), keeping
in any case the newest --keep finished runs. At least one of the two is needed; with only
--keep, every finished run but the newest N is removed.`,
		Example: `  halo runs prune --older-than 30d
  halo runs prune --keep 1000
  halo runs prune --older-than 7d --keep 100 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			po.keepSet = cmd.Flags().Changed("keep")
			if po.OlderThan == "" && !po.keepSet {
				return cmdutil.FlagError("halo runs prune needs --older-than, --keep or both: which runs to remove")
			}
			if po.Keep < 0 {
				return cmdutil.FlagError("--keep %d: want 0 or more", po.Keep)
			}
			return do("prune", po)(cmd, args)
		},
	}
	prune.Flags().StringVar(&po.OlderThan, "older-than", "", "remove finished runs started before `WHEN` (30d, 720h, a date)")
	prune.Flags().IntVar(&po.Keep, "keep", 0, "keep the newest `N` finished runs whatever their age")
	prune.Flags().BoolVar(&po.JSON, "json", false, "print { removed: N }")

	cmd.AddCommand(list, show, rm, prune)
	return cmd
}

var runs = map[string]func(context.Context, *Options) error{
	"list": listRun, "show": showRun, "rm": rmRun, "prune": pruneRun,
}

// open opens the store.
func open(opts *Options) (*runstore.SQLite, error) {
	return opts.F.OpenRuns(runstore.SQLiteOptions{})
}

// parseWhen reads a time back from now: a duration (24h, 90m; d for days: 7d), a date
// (2026-01-02, UTC) or a time (RFC 3339).
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, cmdutil.FlagError("%s %q: want a duration back from now (24h, 7d) or a date or time (2026-01-02, 2026-01-02T15:04:05Z)", flag, s)
}

func listRun(ctx context.Context, opts *Options) error {
	q := runstore.Query{Status: runtime.Status(opts.Status), Pipeline: opts.Pipeline, Violations: opts.Violations, Text: opts.Text, Limit: opts.Limit, Cursor: opts.Cursor}
	switch q.Status {
	case "", runtime.Running, runtime.Paused, runtime.Completed, runtime.Failed:
	default:
		return cmdutil.FlagError("--status %q: want running, paused, completed or failed", opts.Status)
	}
	if opts.Limit < 1 || opts.Limit > runstore.MaxLimit {
		return cmdutil.FlagError("--limit %d: want 1 to %d", opts.Limit, runstore.MaxLimit)
	}
	if opts.Since != "" {
		t, err := parseWhen("--since", opts.Since, opts.F.Now())
		if err != nil {
			return err
		}
		q.Since = t
	}
	s, err := open(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	page, err := s.List(ctx, q)
	if err != nil {
		return err
	}
	out := termsafe.Writer(opts.F.IO.Out)
	if opts.JSON {
		return printJSON(out, page)
	}
	if len(page.Runs) == 0 {
		fmt.Fprintln(opts.F.IO.ErrOut, "no runs")
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tPIPELINE\tSTARTED\tTOKENS\tCOST\tVIOLATIONS\tNOTE")
	for _, r := range page.Runs {
		note := ""
		switch {
		case r.Waiting != "":
			note = "waits for " + r.Waiting
		case r.Error != nil:
			note = r.Error.Code + ": " + oneLine(r.Error.Message, 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.RunID, r.Status, oneLine(r.Pipeline, 40), r.Started.Local().Format("2006-01-02 15:04:05"),
			tokens(r.TokensIn, r.TokensOut), listCost(r.Cost, r.Unpriced), r.Violations, note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if page.Next != "" {
		fmt.Fprintf(opts.F.IO.ErrOut, "more: halo runs list --cursor %s (with the same filters)\n", page.Next)
	}
	return nil
}

// oneLine is s on one line, at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func cost(c float64) string {
	if c == 0 {
		return "-"
	}
	return "$" + strconv.FormatFloat(c, 'f', -1, 64)
}

// listCost is a list row's cost: "unknown" when a model call's price is, ">= $…" when
// only part of it is known.
func listCost(c float64, unpriced bool) string {
	switch {
	case unpriced && c == 0:
		return "unknown"
	case unpriced:
		return ">= " + cost(c)
	}
	return cost(c)
}

// tokens is a list row's tokens in and out of its model calls, "-" for none.
func tokens(in, out int64) string {
	if in == 0 && out == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", in, out)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func showRun(ctx context.Context, opts *Options) error {
	s, err := open(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := s.ResolveID(ctx, opts.IDs[0])
	if err != nil {
		return err
	}
	rec, err := s.Load(id)
	if err != nil {
		return err
	}
	out := termsafe.Writer(opts.F.IO.Out)
	if opts.JSON {
		return printJSON(out, rec)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	line := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	line("run", rec.RunID)
	if rec.File != "" {
		line("file", rec.File)
	}
	line("pipeline", rec.Pipeline)
	line("status", string(rec.Status))
	line("started", rec.Started.Local().Format(time.RFC3339))
	line("updated", rec.Updated.Local().Format(time.RFC3339))
	line("cost", cost(rec.Meta.Cost))
	line("calls", strconv.Itoa(len(rec.Meta.Calls)))
	line("violations", strconv.Itoa(len(rec.Meta.Violations)))
	if p := rec.Meta.Paused; rec.Status == runtime.Paused && p != nil {
		line("waits for", p.WaitingFor)
		line("question", fmt.Sprint(p.Question))
	}
	if rec.Error != nil {
		line("error", rec.Error.Code+": "+rec.Error.Message)
	}
	in, _ := json.Marshal(rec.Inputs)
	line("inputs", string(in))
	if rec.Status == runtime.Completed {
		o, _ := json.Marshal(rec.Output)
		line("output", string(o))
	}
	line("events", strconv.Itoa(len(rec.Events)))
	return tw.Flush()
}

// A Removed is the --json output of rm and prune.
type Removed struct {
	Removed any `json:"removed"`
}

func rmRun(ctx context.Context, opts *Options) error {
	s, err := open(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	// Every id is found before any run is removed: one unknown or ambiguous removes none.
	ids := make([]string, 0, len(opts.IDs))
	for _, word := range opts.IDs {
		id, err := s.ResolveID(ctx, word)
		if err != nil {
			return err
		}
		if _, err := s.Load(id); err != nil {
			return err
		}
		ids = append(ids, id)
	}
	gone, err := s.Delete(ctx, ids)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(termsafe.Writer(opts.F.IO.Out), Removed{Removed: append([]string{}, gone...)})
	}
	fmt.Fprintf(opts.F.IO.ErrOut, "removed %d run%s\n", len(gone), plural(len(gone)))
	return nil
}

func pruneRun(ctx context.Context, opts *Options) error {
	p := runstore.Prune{Keep: opts.Keep}
	if opts.OlderThan != "" {
		t, err := parseWhen("--older-than", opts.OlderThan, opts.F.Now())
		if err != nil {
			return err
		}
		p.Before = t
	}
	s, err := open(opts)
	if err != nil {
		return err
	}
	defer s.Close()
	n, err := s.Prune(ctx, p)
	if err != nil {
		return err
	}
	if opts.JSON {
		return printJSON(termsafe.Writer(opts.F.IO.Out), Removed{Removed: n})
	}
	fmt.Fprintf(opts.F.IO.ErrOut, "removed %d finished run%s\n", n, plural(n))
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
