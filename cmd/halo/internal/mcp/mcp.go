// Package mcp implements `halo mcp [files or folders]`: every pipeline of the files becomes
// an MCP tool, spoken on stdin and stdout (host/mcpserver does the serving).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"halolang.dev/halo/errcode"

	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/projconf"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/run"
	"halolang.dev/halo/cmd/halo/internal/tracing"
	"halolang.dev/halo/cmd/halo/internal/version"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/mcpserver"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	haloStore "halolang.dev/halo/host/store"
	"halolang.dev/halo/host/telemetry"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/pkgmgr/statedir"
)

// Options are `halo mcp`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// Paths are the .halo files and folders to serve; none means the current folder.
	Paths []string
	// Dir is --dir: the project folder to work in instead of the current one.
	Dir string
	// Mock is --mock; Mocks is --mocks FILE.
	Mock  bool
	Mocks string
	// Registry builds the tool registry; nil means providers.Build. Tests register fakes.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
	// NoRecords keeps runs out of .halo/runs; only benchmarks use it, to tell the cost of
	// saving a record from the rest.
	NoRecords bool
	// Otel is --otel and --otel-content; Tracer, when not nil, gets the runs' spans (halo
	// serve hands its own in).
	Otel   tracing.Flags
	Tracer *telemetry.Tracer
}

// NewCmdMCP builds `halo mcp`. runF, when not nil, replaces mcpRun (tests).
func NewCmdMCP(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "mcp [FILE|FOLDER]...",
		Short: "Serve pipelines as MCP tools on stdin and stdout",
		Example: `  halo mcp
  halo mcp flows.halo --mocks mocks.json
  halo mcp --dir /path/to/project flows/
  claude mcp add halo -- halo mcp /path/to/flows.halo`,
		Long: `Serve every pipeline of the files as an MCP tool, speaking the Model Context Protocol
on stdin and stdout, for Claude Desktop, Claude Code, Cursor and other MCP clients. The
default is the .halo files of the current folder. Every file must validate; the
problems are printed and halo mcp exits 1 otherwise.

A pipeline's doc comment (the comment lines right above it) is the tool's description and
its parameters are the input schema. Tool packages of the current folder's halo.lock are
loaded as with halo run, and every run is saved in .halo/runs of the current folder. Logs go
to stderr; stdout carries MCP messages only.

--dir DIR works in DIR as if halo mcp had started there (relative paths, halo.lock,
.halo/runs): desktop clients start servers in a folder of their own choosing.

When a run waits at a |! yield, or at a tool call waiting for approval, and the client can
ask its user (elicitation), the question is asked through the client and the run goes on
with the answer. Otherwise the result says the run is paused and how to continue it with
halo resume.

Exit status: 0 when the client closed stdin, 1 when the files have errors or run records
could not be saved (a full disk).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return mcpRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "work in `DIR` (the project folder) instead of the current folder")
	fl.BoolVar(&opts.Mock, "mock", false, "agents answer with a fixed text, without calling a model")
	fl.StringVar(&opts.Mocks, "mocks", "", "answer targets from a mocks `FILE` (JSON)")
	opts.Otel.Register(fl)
	return cmd
}

func mcpRun(ctx context.Context, opts *Options) error {
	f := opts.F
	cmdutil.ServerGC(f.Env)
	tr, err := opts.Otel.Open(ctx, f)
	if err != nil {
		return err
	}
	defer tracing.Close(tr)
	opts.Tracer = tr
	srv, err := Open(f, opts)
	if err != nil {
		return err
	}
	// A client that goes away leaves stdout a broken pipe: writing to it must be an error
	// the server handles (it cancels the runs), not a signal that kills halo and orphans
	// the processes the runs started.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	f.Logger.Info("serving MCP on stdin and stdout", "tools", len(srv.Tools()))
	err = srv.ServeStdio(ctx, f.IO.In, f.IO.Out)
	if cerr := srv.Close(); cerr != nil {
		f.Logger.Error("saving run records", "error", cerr)
		if err == nil {
			err = cerr
		}
	}
	return err
}

// A Server is the MCP server of the pipelines, with the run store it saves their runs in and
// the pool that keeps its tools' processes between runs.
type Server struct {
	*mcpserver.Server
	store  *runstore.SQLite
	stores *haloStore.Set
	pool   *pool.Pool
}

// ServeStdio serves MCP on in and out until in ends or ctx is cancelled. A pipe or socket
// in waits for input in read(2) while no request runs and in Go's poller while one does
// (pollable says why).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	in, restore := pollable(in)
	defer restore()
	return s.Server.ServeStdio(ctx, in, out)
}

// Close puts on disk every run record saved (runs are group-committed: a completed or
// failed run is answered as soon as its record is in place, and is synced a moment later).
// Call it once serving ends.
func (s *Server) Close() error {
	if s.stores != nil {
		s.stores.Close()
	}
	// The runs have ended: the processes their tools left to the pool stop.
	perr := s.pool.Close()
	if s.store == nil {
		return perr
	}
	return errors.Join(s.store.Close(), perr)
}

// Open loads and validates the files of opts and makes the MCP server of their pipelines:
// the tool registry, mocks and the run store (.halo/runs in the working folder, opened once,
// runs that do not pause in its run log). halo serve mounts the same host/mcpserver on its
// own runtime and run store. The caller closes the server.
func Open(f *cmdutil.Factory, opts *Options) (srv *Server, err error) {
	if opts.Dir != "" {
		dir := f.Abs(opts.Dir)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, cmdutil.FlagError("--dir %s: not a folder", opts.Dir)
		}
		moved := *f
		moved.Dir = filepath.Clean(dir)
		f = &moved
	}
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	pcfg, err := projconf.Read(f.Dir)
	if err != nil {
		return nil, err
	}
	// Plugin processes and MCP servers outlive a run: each is kept for the next call of a
	// pipeline that uses its declaration, and all stop with the server.
	pl := providers.NewPool(f, pcfg)
	defer func() {
		if srv == nil {
			pl.Close()
		}
	}()
	build := opts.Registry
	if build == nil {
		build = providers.Pooled(pl)
	}
	prog, reg, err := providers.LoadProgram(f, paths, build)
	if err != nil {
		return nil, err
	}
	providers.Watch(pl, f, prog)
	hasPipeline := false
	for _, d := range prog.Decls() {
		if _, ok := d.(*lang.PipelineDecl); ok {
			hasPipeline = true
		}
	}
	if !hasPipeline {
		return nil, errcode.New(cmdutil.CodeNoPipeline, "%s: no pipeline to serve", strings.Join(paths, ", "))
	}
	mocks, scope, err := providers.LoadMocks(f, opts.Mocks, prog)
	if err != nil {
		return nil, err
	}
	file := ""
	if len(paths) == 1 {
		file = paths[0]
	}
	var store *runstore.SQLite
	var rs runtime.RunStore
	if !opts.NoRecords {
		// Opened once, at start: a .halo or .halo/runs that is a symbolic link is refused now
		// (STATE_DIR_UNSAFE) rather than at every call; desktop clients start servers in a
		// folder of their own, often not writable: say so now rather than fail every call.
		if store, err = f.OpenRuns(runstore.SQLiteOptions{GroupCommit: true}); err != nil {
			var unsafe *statedir.Error
			if errors.As(err, &unsafe) {
				return nil, fmt.Errorf("cannot save runs in %s: %w", f.RunsDir(), err)
			}
			return nil, fmt.Errorf("cannot save runs in %s: %v: start halo mcp in the project folder, or name it with --dir", f.RunsDir(), unwrapPath(err))
		}
		rs = store
		defer func() {
			if srv == nil {
				store.Close()
			}
		}()
	}
	stores := providers.Stores(f, f.Dir, opts.Mock)
	cfg := runtime.Config{
		Tools: reg, Models: providers.Models(f), Env: f.Env, Dir: f.Dir, File: file, Mocks: mocks, MockScope: scope, MockAgents: opts.Mock,
		Store: rs, Stores: stores, Now: f.Now, Logger: f.Logger, OnInterrupt: mcpserver.OnInterrupt,
	}
	opts.Tracer.Install(&cfg)
	rt, err := runtime.New(prog, cfg)
	if err != nil {
		stores.Close()
		return nil, err
	}
	ms, err := mcpserver.New(mcpserver.Config{
		Program: prog, Runtime: rt, Tools: reg, Name: "halo", Version: version.Current().Version, Logger: f.Logger,
		Continue: func(runID, waitingFor string, pd *lang.PipelineDecl) string {
			target := file
			if target == "" {
				target = pd.Pos.File
			}
			payload := "<answer>"
			if waitingFor == "approval" {
				payload = "approve"
			}
			hint := fmt.Sprintf("Continue it in %s with: halo resume %s %s --payload %s", f.Dir, shellQuote(target), runID, payload)
			if run.ServeHolds(f.Dir) {
				// halo resume is refused beside it; the server shares the store and answers the run.
				hint += fmt.Sprintf(", once the halo serve that serves that folder's runs has stopped (halo resume is refused beside it), or answer it through that server now: on its Studio page, or with POST /api/runs/%s/signal", runID)
			}
			return hint
		},
	})
	if err != nil {
		stores.Close()
		return nil, err
	}
	return &Server{Server: ms, store: store, stores: stores, pool: pl}, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
