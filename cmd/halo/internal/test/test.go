// Package test implements `halo test [files or folders]`: it runs the test cases written
// beside the pipelines (*.test.json: the pipeline, its inputs, the mocks, and what the run
// must do), every agent answered by a mock, every approval approved, several cases at once,
// and reports each case ok or FAIL with a diff, then "N passed, N failed". --update writes
// the observed outputs into the cases.
package test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// Options are `halo test`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// Paths are the case files and folders; empty means the working folder.
	Paths []string
	// Run is --run: only cases whose "file: name" matches it run.
	Run    string
	Update bool
	JSON   bool
	// Parallel is how many cases run at once.
	Parallel int
	// Registry builds the tool registry; nil means providers.Build. Tests register fakes.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
}

// NewCmdTest builds `halo test`. runF, when not nil, replaces testRun (tests).
func NewCmdTest(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "test [file or folder ...]",
		Short: "Run the test cases written beside the pipelines",
		Example: `  halo test
  halo test flows/ --run clerk
  halo test greet.test.json --update
  halo test --json --parallel 4`,
		Long: `Run the test cases in the files named (a folder means every *.test.json in it and its
subfolders; the default is the current folder). A case file holds one case, or a list of
them: {"name", "pipeline", "inputs", "mocks", "expect"}, where expect may give the run's
status, its exact output or a JSON Schema for it (outputSchema), the calls made in order,
the policy violations and the error code. NAME.test.json tests NAME.halo beside it ("file"
names another).

Every agent call a mock does not answer gets a fixed text instead of a model, and every
tool call a policy puts up for approval is approved. Cases run several at a time; each is
reported as ok or FAIL with what differed, then "N passed, N failed". The exit status is
1 when any case fails, or when a case file has an unknown key or mocks that name nothing
in its pipeline's file (nothing runs then).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return testRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Run, "run", "", "run only the cases whose \"file: name\" matches `REGEX`")
	fl.BoolVar(&opts.Update, "update", false, "write each completed run's output into its case's expect.output")
	fl.BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	fl.IntVar(&opts.Parallel, "parallel", goruntime.GOMAXPROCS(0), "run up to `N` cases at once")
	return cmd
}

// Result is the --json output.
type Result struct {
	Passed int           `json:"passed"`
	Failed int           `json:"failed"`
	Cases  []*CaseResult `json:"cases"`
	// Updated lists the case files --update rewrote.
	Updated []string `json:"updated,omitempty"`
	// Errors are the case files that could not be used; nothing ran.
	Errors []Problem `json:"errors,omitempty"`
}

// A CaseResult is one case's outcome.
type CaseResult struct {
	ID       string `json:"id"`
	CaseFile string `json:"caseFile"`
	Name     string `json:"name,omitempty"`
	File     string `json:"file"`
	Pipeline string `json:"pipeline"`
	OK       bool   `json:"ok"`
	// Status, Output, Error and RunID are the run's.
	Status     runtime.Status     `json:"status,omitempty"`
	Output     any                `json:"output,omitempty"`
	Error      *runtime.ErrorInfo `json:"error,omitempty"`
	RunID      string             `json:"runId,omitempty"`
	DurationMs int64              `json:"durationMs"`
	// Failures say what differed from the case's expect.
	Failures []Failure `json:"failures,omitempty"`
}

// A Failure is one expectation the run did not meet.
type Failure struct {
	// Check is status, output, outputSchema, calls, violations, error or run (the run could
	// not start).
	Check   string `json:"check"`
	Message string `json:"message,omitempty"`
	Want    any    `json:"want,omitempty"`
	Got     any    `json:"got,omitempty"`
	// Diff is want against got, line by line: "- " wanted, "+ " got.
	Diff string `json:"diff,omitempty"`
}

// A program is one .halo file, loaded once for all its cases.
type program struct {
	prog  *lang.Program
	diags lang.Diagnostics
}

func testRun(ctx context.Context, opts *Options) error {
	f := opts.F
	var filter *regexp.Regexp
	if opts.Run != "" {
		re, err := regexp.Compile(opts.Run)
		if err != nil {
			return cmdutil.FlagError("--run: %v", err)
		}
		filter = re
	}
	if opts.Parallel < 1 {
		return cmdutil.FlagError("--parallel %d: want 1 or more", opts.Parallel)
	}
	files, probs := findCases(f.Dir, opts.Paths)
	var cases []*Case
	for _, file := range files {
		cs, p := readCaseFile(f.Dir, file)
		probs = append(probs, p...)
		cases = append(cases, cs...)
	}
	if len(files) == 0 && len(probs) == 0 {
		return errcode.New(CodeTestCase, "no test cases: no *%s file in %s", Suffix, strings.Join(orDot(opts.Paths), ", "))
	}
	reg, err := providers.Registry(opts.F, opts.Registry)
	if err != nil {
		return err
	}

	// Every case is checked before any runs: its .halo file validates, it names a pipeline
	// the file declares, and its mocks name what the file declares.
	programs := map[string]*program{}
	runtimes := make([]*runtime.Runtime, len(cases))
	var selected []int
	for i, c := range cases {
		if c.abs == "" {
			continue
		}
		if _, err := os.Stat(c.abs); err != nil {
			probs = append(probs, Problem{File: c.CaseFile, Message: fmt.Sprintf("%sfile: cannot read %s: %v", caseWhere(c), c.File, unwrap(err)), Code: CodeTestCase, index: c.Index})
			continue
		}
		p := programs[c.abs]
		if p == nil {
			p = &program{}
			p.prog, p.diags = lang.Load(f.Dir, []string{c.File})
			if !p.diags.HasErrors() {
				p.diags = append(p.diags, runtime.Validate(p.prog, reg)...)
			}
			programs[c.abs] = p
		}
		where := caseWhere(c)
		bad := func(code, format string, args ...any) {
			probs = append(probs, Problem{File: c.CaseFile, Message: where + fmt.Sprintf(format, args...), Code: code, index: c.Index})
		}
		if p.diags.HasErrors() {
			first := p.diags.Errors()[0]
			bad(first.Code, "%s does not validate (%d %s; halo validate %s lists them): %s: %s", c.File, len(p.diags.Errors()), plural(len(p.diags.Errors()), "error", "errors"), c.File, first.Pos, first.Message)
			continue
		}
		if c.Pipeline == "" {
			names := pipelineNames(p.prog)
			if len(names) != 1 {
				bad(CodeTestCase, "pipeline: %s declares %d pipelines (%s): name the one to run", c.File, len(names), strings.Join(names, ", "))
				continue
			}
			c.Pipeline = names[0]
		} else if p.prog.Pipeline(c.Pipeline) == nil {
			bad(CodeTestCase, "pipeline: %s declares no pipeline %s (it declares %s)", c.File, c.Pipeline, strings.Join(pipelineNames(p.prog), ", "))
			continue
		}
		mocks := runtime.NewMocks()
		if len(c.Mocks) > 0 {
			if mocks, err = runtime.ParseMocks(c.Mocks); err != nil {
				bad(errcode.Code(err), "%v", err)
				continue
			}
		}
		var scope *lang.Program
		if c.mocksDir != "" {
			scope = providers.MockScope(f, c.mocksDir, p.prog)
		}
		rt, err := runtime.New(p.prog, runtime.Config{
			Tools: reg, Env: f.Env, Dir: filepath.Dir(c.abs), File: c.File, Mocks: mocks, MockScope: scope, MockAgents: true,
			OnInterrupt: approveAll, Now: f.Now, Logger: f.Logger,
		})
		if err != nil {
			bad(CodeTestCase, "%v", err)
			continue
		}
		if err := rt.CheckMocks(); err != nil {
			bad(errcode.Code(err), "%v", err)
			continue
		}
		runtimes[i] = rt
		if filter == nil || filter.MatchString(c.ID()) {
			selected = append(selected, i)
		}
	}
	res := &Result{Cases: []*CaseResult{}}
	if len(probs) > 0 {
		sort.SliceStable(probs, func(i, j int) bool {
			if probs[i].File != probs[j].File {
				return probs[i].File < probs[j].File
			}
			return probs[i].index < probs[j].index
		})
		res.Errors = probs
		return report(f, res, opts.JSON)
	}
	if len(selected) == 0 {
		return fmt.Errorf("no test case matches --run %q (of %d)", opts.Run, len(cases))
	}

	results := make([]*CaseResult, len(selected))
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for k, i := range selected {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[k] = runCase(ctx, cases[i], runtimes[i])
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}

	if opts.Update {
		byFile := map[string]map[int]any{}
		var order []string
		for k, i := range selected {
			r, c := results[k], cases[i]
			if r.Status != runtime.Completed || c.Expect.HasOutput && !hasCheck(r.Failures, "output") {
				// Only a completed run's output is written, and only where it differs.
				continue
			}
			if byFile[c.CaseFile] == nil {
				byFile[c.CaseFile] = map[int]any{}
				order = append(order, c.CaseFile)
			}
			byFile[c.CaseFile][c.Index] = r.Output
			// The output is now what the case expects.
			r.Failures = dropCheck(r.Failures, "output")
			r.OK = len(r.Failures) == 0
		}
		for _, file := range order {
			wrote, err := updateFile(f.Dir, file, byFile[file])
			if err != nil {
				return fmt.Errorf("--update %s: %w", file, err)
			}
			if wrote {
				res.Updated = append(res.Updated, file)
			}
		}
	}
	for _, r := range results {
		res.Cases = append(res.Cases, r)
		if r.OK {
			res.Passed++
		} else {
			res.Failed++
		}
	}
	return report(f, res, opts.JSON)
}

// approveAll approves every call a policy puts up for approval (a case whose mocks answer
// "Tool.method?" or "approval" is answered by them first); a yield or listen is left
// unanswered, so the run pauses there.
func approveAll(_ context.Context, in runtime.Interrupt) (any, bool, error) {
	if in.Channel != runtime.ChannelApproval {
		return nil, false, nil
	}
	return "approve", true, nil
}

// caseWhere is "case N: " for a case of a list, "" for a file of one case.
func caseWhere(c *Case) string {
	if c.Index > 0 {
		return fmt.Sprintf("case %d: ", c.Index)
	}
	return ""
}

// runCase runs one case and checks its run against its expect.
func runCase(ctx context.Context, c *Case, rt *runtime.Runtime) *CaseResult {
	r := &CaseResult{ID: c.ID(), CaseFile: c.CaseFile, Name: c.Name, File: c.File, Pipeline: c.Pipeline}
	start := time.Now()
	res, err := rt.Run(ctx, c.Pipeline, c.Inputs)
	r.DurationMs = time.Since(start).Milliseconds()
	if err != nil {
		r.Failures = []Failure{{Check: "run", Message: fmt.Sprintf("the run could not start: %v [%s]", err, codeOr(err))}}
		return r
	}
	r.Status, r.Output, r.Error, r.RunID = res.Status, res.Output, res.Error, res.RunID
	r.Failures = compare(c, res)
	r.OK = len(r.Failures) == 0
	return r
}

func codeOr(err error) string {
	if c := errcode.Code(err); c != "" {
		return c
	}
	return "INTERNAL"
}

func hasCheck(fs []Failure, check string) bool {
	for _, f := range fs {
		if f.Check == check {
			return true
		}
	}
	return false
}

func dropCheck(fs []Failure, check string) []Failure {
	var out []Failure
	for _, f := range fs {
		if f.Check != check {
			out = append(out, f)
		}
	}
	return out
}

// report prints res and returns the error that sets the exit status.
func report(f *cmdutil.Factory, res *Result, asJSON bool) error {
	out, errOut := termsafe.Writer(f.IO.Out), termsafe.Writer(f.IO.ErrOut)
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		for _, p := range res.Errors {
			fmt.Fprintf(errOut, "%s\n", p)
		}
		if len(res.Errors) > 0 {
			fmt.Fprintf(errOut, "%d %s in the test case files; no case ran\n", len(res.Errors), plural(len(res.Errors), "problem", "problems"))
		}
		for _, r := range res.Cases {
			printCase(out, r)
		}
		for _, u := range res.Updated {
			fmt.Fprintf(out, "updated %s\n", u)
		}
		if len(res.Errors) == 0 {
			fmt.Fprintf(out, "%d passed, %d failed\n", res.Passed, res.Failed)
		}
	}
	if len(res.Errors) > 0 || res.Failed > 0 {
		return cmdutil.Silent(cmdutil.ExitFailed)
	}
	return nil
}

func printCase(w io.Writer, r *CaseResult) {
	if r.OK {
		fmt.Fprintf(w, "ok   %s\n", r.ID)
		return
	}
	fmt.Fprintf(w, "FAIL %s\n", r.ID)
	for _, fl := range r.Failures {
		switch {
		case fl.Message != "":
			fmt.Fprintf(w, "    %s: %s\n", fl.Check, fl.Message)
		case fl.Diff != "":
			fmt.Fprintf(w, "    %s (- want, + got):\n", fl.Check)
		default:
			fmt.Fprintf(w, "    %s: want %s, got %s\n", fl.Check, show(fl.Want), show(fl.Got))
		}
		if fl.Diff != "" {
			for _, line := range strings.Split(strings.TrimSuffix(fl.Diff, "\n"), "\n") {
				fmt.Fprintf(w, "      %s\n", line)
			}
		}
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func pipelineNames(prog *lang.Program) []string {
	var out []string
	for _, d := range prog.Decls() {
		if p, ok := d.(*lang.PipelineDecl); ok {
			out = append(out, p.Name.Name)
		}
	}
	return out
}

func orDot(paths []string) []string {
	if len(paths) == 0 {
		return []string{"."}
	}
	return paths
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
