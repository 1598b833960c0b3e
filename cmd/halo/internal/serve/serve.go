// Package serve implements `halo serve [files or folders]`: the HTTP API, approval links and
// metrics of host/serve for the pipelines of the files, with runs kept in .halo/runs or, for
// several replicas, in PostgreSQL (--store postgres://...).
package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"halolang.dev/halo/cmd/halo/internal/projconf"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/providers"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/cmd/halo/internal/tracing"
	"halolang.dev/halo/cmd/halo/internal/version"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/postgres"
	"halolang.dev/halo/host/runtime"
	hserve "halolang.dev/halo/host/serve"
	"halolang.dev/halo/host/studio"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/pool"
)

// DefaultAddr is where halo serve listens unless told otherwise: loopback only.
const DefaultAddr = "127.0.0.1:8080"

// Options are `halo serve`'s inputs.
type Options struct {
	F *cmdutil.Factory
	// Paths are the .halo files and folders; none means the current folder.
	Paths []string
	// Addr is --addr; AddrSet says it was given.
	Addr    string
	AddrSet bool
	// Store is --store (or HALO_STORE): "" for .halo/runs, or a postgres:// URL.
	Store string
	// Grace is how long running runs get to finish when the server stops.
	Grace time.Duration
	// Lease is how long a PostgreSQL store holds a run for a replica that stops renewing.
	Lease time.Duration
	// Mock is --mock; Mocks is --mocks FILE.
	Mock  bool
	Mocks string
	// Registry builds the tool registry; nil means providers.Build. Tests register fakes.
	Registry func(f *cmdutil.Factory, dir string) (*tool.Registry, error)
	// Otel is --otel and --otel-content.
	Otel tracing.Flags
	// NoRecords keeps runs out of the store (their start and end are not saved); only
	// benchmarks use it, to tell the cost of saving a run from the rest of /mcp.
	NoRecords bool
}

// NewCmdServe builds `halo serve`. runF, when not nil, replaces Run (tests).
func NewCmdServe(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{F: f}
	cmd := &cobra.Command{
		Use:   "serve [FILE|FOLDER]...",
		Short: "Serve pipelines over HTTP: an API, approval links, metrics and /mcp",
		Example: `  HALO_SERVE_TOKEN=$(openssl rand -hex 24) halo serve flows.halo
  halo serve --addr 127.0.0.1:9000 --mocks mocks.json
  halo serve --store postgres://halo@db.example.com/halo --grace 1m`,
		Long: `Serve every pipeline of the files (the default is the .halo files of the current
folder) over HTTP: start, list, watch, signal and cancel runs through the API under /api,
answer paused runs through signed approval links, read metrics at /metrics, and call the
pipelines as MCP tools at /mcp ("mcp": false in halo.json turns it off). Studio, at /, is
web pages to watch runs, answer paused ones and start new ones: open it once with
/?token=<HALO_SERVE_TOKEN> (see docs/studio.md). Every file must validate. Logs go to
stderr, one line per request. See docs/serve.md.

HALO_SERVE_TOKEN sets the API token (Authorization: Bearer, or ?token=). Without a token
anything that can reach the port can run the pipelines: halo serve then listens on
127.0.0.1 unless --addr is given, and says so. HALO_SERVE_SECRET keys approval links;
without it a key is made once and kept in .halo/serve.key (or in the PostgreSQL store).
halo.json may set publicUrl (where people reach the server: links start with it),
notify.webhook (a URL every approval link is POSTed to, as a Slack message) and
serve.maxConnections and serve.maxUnauthenticated (the connection limits).
HALO_SLACK_SIGNING_SECRET, your Slack app's signing secret, adds Approve and Decline
buttons to the Slack message, answered at /slack/interactions.

Runs are kept in .halo/runs, for one server; --store postgres://... (or HALO_STORE) keeps
them in PostgreSQL, where several halo serve replicas behind a load balancer share them.

SIGINT or SIGTERM stops the server: no new runs; running ones get --grace to finish and
are then saved as interrupted; paused runs stay paused.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			opts.AddrSet = cmd.Flags().Changed("addr")
			if !cmd.Flags().Changed("store") {
				opts.Store = f.Env.Get("HALO_STORE")
			}
			if !cmd.Flags().Changed("log-level") && f.Env.Get("HALO_LOG_LEVEL") == "" && f.Logger != nil {
				f.Logger.SetLevel(hclog.Info) // one line per request is what a server logs
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Addr, "addr", DefaultAddr, "`host:port` to listen on")
	fl.StringVar(&opts.Store, "store", "", "where runs are kept: empty for .halo/runs, or a postgres:// `URL` (env HALO_STORE)")
	fl.DurationVar(&opts.Grace, "grace", 30*time.Second, "how long running runs get to finish when the server stops")
	fl.DurationVar(&opts.Lease, "lease", postgres.DefaultLease, "with a PostgreSQL store: how long a replica that stops answering holds its runs before another fails them (HOST_LOST)")
	fl.BoolVar(&opts.Mock, "mock", false, "agents answer with a fixed text, without calling a model")
	fl.StringVar(&opts.Mocks, "mocks", "", "answer targets from a mocks `FILE` (JSON)")
	opts.Otel.Register(fl)
	return cmd
}

// load reads and validates the files and makes the tool registry and mocks. The registry
// keeps its plugin processes and MCP connections in pl.
func load(f *cmdutil.Factory, opts *Options, pl *pool.Pool) (*lang.Program, runtime.Config, error) {
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var rc runtime.Config
	build := opts.Registry
	if build == nil {
		build = providers.Pooled(pl)
	}
	prog, reg, err := providers.LoadProgram(f, paths, build)
	if err != nil {
		return nil, rc, err
	}
	has := false
	for _, d := range prog.Decls() {
		if _, ok := d.(*lang.PipelineDecl); ok {
			has = true
		}
	}
	if !has {
		return nil, rc, errcode.New(cmdutil.CodeNoPipeline, "%s: no pipeline to serve", strings.Join(paths, ", "))
	}
	mocks, scope, err := providers.LoadMocks(f, opts.Mocks, prog)
	if err != nil {
		return nil, rc, err
	}
	file := ""
	if len(paths) == 1 {
		file = paths[0]
	}
	rc = runtime.Config{Tools: reg, Models: providers.Models(f), Env: f.Env, Dir: f.Dir, File: file, Mocks: mocks, MockScope: scope, MockAgents: opts.Mock, Now: f.Now, Logger: f.Logger}
	return prog, rc, nil
}

// reload reads and validates the files again, as they are now, for a replay: their
// problems are its error, printed nowhere.
func reload(f *cmdutil.Factory, opts *Options, reg *tool.Registry) (*lang.Program, error) {
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	prog, diags := lang.Load(f.Dir, paths)
	if err := diags.Err(); err != nil {
		return nil, err
	}
	if len(prog.Files) == 0 {
		return nil, errcode.New(lang.CodeIO, "%s: no .halo file", strings.Join(paths, ", "))
	}
	if err := runtime.Validate(prog, reg).Err(); err != nil {
		return nil, err
	}
	return prog, nil
}

// accessLog is where the request log is written in batches: stderr, when it is a file (whose
// writes the process serializes, so a batch never splits another log line), cleaned as the
// logger cleans its lines. Otherwise (a test's buffer) the logger writes each line itself.
func accessLog(f *cmdutil.Factory) io.Writer {
	if _, ok := f.IO.ErrOut.(*os.File); ok {
		return termsafe.Writer(f.IO.ErrOut)
	}
	return nil
}

// openStore opens the run store --store names.
func openStore(ctx context.Context, f *cmdutil.Factory, opts *Options) (runstore.Store, string, error) {
	switch {
	case opts.Store == "":
		s, err := f.OpenRuns(runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
		if err != nil {
			return nil, ".halo/runs", err
		}
		return s, ".halo/runs", nil
	case strings.HasPrefix(opts.Store, "postgres://"), strings.HasPrefix(opts.Store, "postgresql://"):
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := postgres.Open(ctx, opts.Store, postgres.Options{Lease: opts.Lease, Logger: f.Logger.Named("store"), Now: f.Now})
		return s, "PostgreSQL", err
	}
	return nil, "", cmdutil.FlagError("--store %q: want a postgres:// URL, or nothing for .halo/runs", redactURL(opts.Store))
}

// noSaves is a store that saves no run: Start and Save do nothing (Options.NoRecords).
type noSaves struct{ runstore.Store }

func (noSaves) Start(context.Context, *runtime.Record) error { return nil }
func (noSaves) Save(*runtime.Record) error                   { return nil }
func (noSaves) LocalEvents() bool                            { return true }

// studioURL is where a person opens Studio: publicUrl when halo.json sets it, else the
// address the server listens on (localhost for every address of the machine).
func studioURL(listening, publicURL string) string {
	if publicURL != "" {
		return strings.TrimRight(publicURL, "/") + "/"
	}
	host, port, _ := net.SplitHostPort(listening)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// printStudio says at start where Studio is and, with a token, how to sign in; the token
// itself is never printed. publicUrl comes from halo.json, a file of the repository: written
// through termsafe.
func printStudio(f *cmdutil.Factory, url string, withToken bool) {
	w := termsafe.Writer(f.IO.ErrOut)
	if !withToken {
		fmt.Fprintf(w, "Studio: %s\n", url)
		return
	}
	fmt.Fprintf(w, "Studio: %s (sign in once: open %s?token=<HALO_SERVE_TOKEN>, or give the token in its sign-in form)\n", url, url)
}

// withCode adds an error's stable code to its message, as halo prints errors.
func withCode(err error) error {
	if c := errcode.Code(err); c != "" && !strings.HasSuffix(err.Error(), "]") {
		return fmt.Errorf("%w [%s]", err, c)
	}
	return err
}

// redactURL hides a URL's password.
func redactURL(s string) string {
	if i := strings.Index(s, "@"); i > 0 {
		if j := strings.Index(s, "://"); j > 0 && j < i {
			return s[:j+3] + "…" + s[i:]
		}
	}
	return s
}

// Run is halo serve with opts, until ctx ends.
func Run(ctx context.Context, opts *Options) error {
	f := opts.F
	cmdutil.ServerGC(f.Env)
	log := f.Logger.Named("serve")
	token := f.Env.Get("HALO_SERVE_TOKEN")
	addr := opts.Addr
	pcfg, err := projconf.Read(f.Dir)
	if err != nil {
		return err
	}
	// Plugin processes and MCP servers outlive a run: each is kept for the next run of its
	// declaration, and all stop with the server.
	pl := providers.NewPool(f, pcfg)
	defer pl.Close()
	prog, rc, err := load(f, opts, pl)
	if err != nil {
		return err
	}
	rc.Stores = providers.Stores(f, f.Dir, opts.Mock)
	defer rc.Stores.Close()
	providers.Watch(pl, f, prog)
	tr, err := opts.Otel.Open(ctx, f)
	if err != nil {
		return err
	}
	defer tracing.Close(tr)
	tr.Install(&rc)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		var bad *net.AddrError
		if errors.As(err, &bad) { // the address does not parse: a mistake in the command line
			return cmdutil.FlagError("--addr %s: %v", addr, err)
		}
		return errcode.Wrap(cmdutil.CodeListen, err, "--addr %s: %v", addr, err)
	}
	defer ln.Close()
	store, where, err := openStore(ctx, f, opts)
	if err != nil {
		return withCode(err)
	}
	// The store is closed once the server has stopped, and its error returned: closing it
	// commits the records saved since the last commit, and a run whose record it cannot
	// write (a full disk) must not end in an exit status of 0 (halo mcp does the same).
	closeStore := sync.OnceValue(store.Close)
	defer closeStore()
	stopped := func(err error) error {
		if cerr := closeStore(); cerr != nil {
			log.Error("saving run records", "error", cerr)
			if err == nil {
				err = withCode(cerr)
			}
		}
		return err
	}
	if opts.NoRecords {
		store = noSaves{store}
	}
	actual := ln.Addr().String()
	interval := hserve.DefaultInterval
	if opts.Store != "" {
		interval = max(opts.Lease/3, 100*time.Millisecond)
	}
	srv, err := hserve.New(ctx, hserve.Config{
		Program: prog, Runtime: rc, Store: store, Token: token, PublicURL: pcfg.PublicURL, Addr: actual,
		Secret: []byte(f.Env.Get("HALO_SERVE_SECRET")), Webhook: pcfg.Webhook, Interval: interval,
		SlackSecret: f.Env.Get("HALO_SLACK_SIGNING_SECRET"),
		MaxConns:    pcfg.MaxConns, MaxUnauthenticated: pcfg.MaxUnauthenticated,
		Logger: log, AccessLog: accessLog(f), Now: f.Now, MCP: pcfg.MCP, Version: version.Current().Version,
		Reload: func() (*lang.Program, error) { return reload(f, opts, rc.Tools) },
		Pages: func(api http.Handler, stopping <-chan struct{}) (http.Handler, error) {
			return studio.New(studio.Config{API: api, Stopping: stopping, Now: f.Now,
				SecureCookie: strings.HasPrefix(pcfg.PublicURL, "https:")})
		},
	})
	if err != nil {
		return withCode(err)
	}
	srv.Start()
	host, _, _ := net.SplitHostPort(actual)
	loopback := net.ParseIP(host) != nil && net.ParseIP(host).IsLoopback()
	log.Info("listening", "url", "http://"+actual, "pipelines", len(srv.Runtime().Pipelines()), "store", where)
	printStudio(f, studioURL(actual, pcfg.PublicURL), token != "")
	switch {
	case token == "" && loopback:
		log.Warn("no HALO_SERVE_TOKEN: only programs on this machine can reach the server, and every one of them can run the pipelines")
	case token == "":
		log.Warn("no HALO_SERVE_TOKEN, and --addr listens beyond this machine: anyone who can reach the port can run the pipelines; set HALO_SERVE_TOKEN")
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		log.Info("stopping", "grace", opts.Grace)
		closed := make(chan struct{})
		go func() { srv.Close(opts.Grace); close(closed) }()
		sctx, cancel := context.WithTimeout(context.Background(), opts.Grace+10*time.Second)
		srv.Shutdown(sctx)
		cancel()
		<-closed
		<-served
		if err := pl.Close(); err != nil {
			log.Warn("stopping the tools' processes", "error", err)
		}
		err := stopped(nil)
		log.Info("stopped")
		return cmdutil.FailedAfterStop(err)
	}
	srv.Close(opts.Grace)
	pl.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return stopped(err)
}
