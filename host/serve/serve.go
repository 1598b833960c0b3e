// Package serve owns `halo serve`: the HTTP API that starts, lists, watches (server-sent
// events), signals and cancels runs of a program's pipelines; approval links that let a
// person answer a paused run from a browser; Prometheus metrics; and the browser checks and
// token in front of all of it. Runs are kept in a runstore.Store: the folder store for one
// process, PostgreSQL for several replicas behind a load balancer, where any replica answers
// any request.
//
// A Server makes the program's runtime.Runtime itself, with a store that tells it as runs
// start, continue and stop (runtime.Tracker), so runs started any way (the API, /mcp) are
// listed, streamed and cancelled alike.
package serve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/mcpserver"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// Defaults of Config.
const (
	DefaultMaxBody  = 1 << 20
	DefaultLinkTTL  = 24 * time.Hour
	DefaultMaxRuns  = 256
	DefaultMaxWait  = 10 * time.Minute
	DefaultInterval = 10 * time.Second
)

// Config is what a Server is built from.
type Config struct {
	// Program is the validated program whose pipelines are served.
	Program *lang.Program
	// Runtime configures the runtime the server makes; its Store and NewID are the server's,
	// and its OnEvent is called beside the server's own.
	Runtime runtime.Config
	// Store keeps the runs. The server uses it, and the caller closes it after Close.
	Store runstore.Store
	// Token is the API token (HALO_SERVE_TOKEN); "" means none.
	Token string
	// PublicURL is where people reach the server (halo.json's publicUrl); approval links
	// start with it. "" means http:// and Addr.
	PublicURL string
	// Addr is the address the server listens on (host:port), for the Host check and links.
	Addr string
	// Secret keys approval links (HALO_SERVE_SECRET); nil means the store's key, made on
	// first start.
	Secret []byte
	// LinkTTL is how long an approval link is valid; 0 means DefaultLinkTTL.
	LinkTTL time.Duration
	// Webhook, when set, gets a POST of every approval link (halo.json's notify.webhook).
	Webhook string
	// SlackSecret is the Slack app's signing secret (HALO_SLACK_SIGNING_SECRET): with it,
	// the webhook's message has Approve and Decline buttons, and POST /slack/interactions
	// takes their presses, each verified with it. "" means no buttons and no such route.
	SlackSecret string
	// SlackResponseURL is what a button press's response_url must start with to be posted
	// the answered message; "" means DefaultSlackResponseURL.
	SlackResponseURL string
	// HTTPClient posts to the webhook; nil means a client with a 10 s timeout.
	HTTPClient *http.Client
	// MCP mounts the pipelines as MCP tools at /mcp (host/mcpserver's stateless HTTP, behind
	// the same checks and token); halo.json's "mcp": false turns it off.
	MCP bool
	// Version is the server's version, as /mcp tells clients.
	Version string
	// Reload, when set, reads the program's files again, as they are now, and validates
	// them: a replay (POST /api/runs/{id}/replay) runs on what it returns, so a policy edited
	// since the server started is tried without a restart. Nil means replays run on Program.
	Reload func() (*lang.Program, error)
	// Pages, when set, serves every path no other route takes (Studio, at /). It is made
	// with the API's own handler, without the request log, to call in-process (so its pages
	// pass the same checks and token as the API), and a channel closed when the server
	// starts to stop, which ends its long-lived responses.
	Pages func(api http.Handler, stopping <-chan struct{}) (http.Handler, error)
	// MaxBody caps a request body; 0 means DefaultMaxBody.
	MaxBody int64
	// MaxRuns caps the runs this process runs at once; 0 means DefaultMaxRuns.
	MaxRuns int
	// MaxConns caps the connections Serve keeps open at once; 0 means DefaultMaxConns. It
	// is lowered to leave file descriptors for the rest of the process.
	MaxConns int
	// MaxUnauthenticated caps the requests without the token handled at once; 0 means
	// DefaultMaxUnauthenticated.
	MaxUnauthenticated int
	// HeaderTimeout, BodyTimeout and UnauthenticatedBodyTimeout bound how long a request's
	// headers, and its body with and without the token, may take to arrive; 0 means the
	// constants of those names.
	HeaderTimeout, BodyTimeout, UnauthenticatedBodyTimeout time.Duration
	// Interval is how often leases are renewed and lost runs looked for; 0 means
	// DefaultInterval (a third of a PostgreSQL store's default lease).
	Interval time.Duration
	// Logger gets one line per request and the server's warnings; nil means none.
	Logger hclog.Logger
	// AccessLog, when set, is where Logger writes (the terminal, say): the request lines are
	// then formatted into a buffer and written there in batches, off the requests' path.
	// Nil has Logger write each request line itself, still off the requests' path.
	AccessLog io.Writer
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// newID, set by tests only, makes run ids instead of newRunID.
	newID func() string
}

// A Server serves one program's pipelines over HTTP.
type Server struct {
	cfg     Config
	log     hclog.Logger
	store   runstore.Store
	rt      *runtime.Runtime
	checks  *mcpserver.Checker
	mcp     *mcpserver.Server
	links   *signer
	metrics *metrics
	handler http.Handler
	now     func() time.Time

	// runCtx is the parent of the runs the API starts; stopRuns ends it after the grace.
	runCtx   context.Context
	stopRuns context.CancelCauseFunc
	// streamCtx ends every event stream when the server closes.
	streamCtx  context.Context
	stopStream context.CancelFunc
	loops      context.CancelFunc
	closing    atomic.Bool

	mu   sync.Mutex
	live map[string]*liveRun
	// beginning holds runs this process is taking in the store (Begin, before they are
	// live), each with whether another process asked to cancel it meanwhile.
	beginning map[string]bool
	// recheck asks the lease loop to renew and look for cancel requests now, not at its
	// next tick: the store's notes may have been missed.
	recheck chan struct{}
	// abandoned holds runs Close saved as interrupted without their runtime.
	abandoned map[string]bool
	slots     chan struct{}
	pokes     pokes
	// listPoll is how often a runs list stream looks at the store for other processes'
	// changes (poll; tests change it).
	listPoll time.Duration
	// localEvents is set when the store keeps no live events for other processes (see
	// localStore).
	localEvents bool
	// access writes the request log.
	access *accessLog
	// eventBufs holds *eventBuf, recycled from live runs that stopped.
	eventBufs sync.Pool

	// conns are Serve's connections; unauth holds a place for each request without the
	// token being handled; credential reads the pages' own (Credentialed); hs is Serve's.
	conns      *conns
	unauth     chan struct{}
	credential func(*http.Request) string
	hs         *http.Server
	// replays holds a place for each replay running (POST /api/runs/{id}/replay).
	replays chan struct{}

	// runs counts the goroutines running runs the API started; bg the server's own.
	runs sync.WaitGroup
	bg   sync.WaitGroup
}

// New makes the server and its runtime, reads or makes the approval key, and fails the runs
// the store says are running whose process is gone (the folder store: every one). Start
// starts its background work; Handler serves it.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Program == nil || cfg.Store == nil {
		return nil, errors.New("serve: a Program and a Store are needed")
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.LinkTTL <= 0 {
		cfg.LinkTTL = DefaultLinkTTL
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxUnauthenticated <= 0 {
		cfg.MaxUnauthenticated = DefaultMaxUnauthenticated
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = HeaderTimeout
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = BodyTimeout
	}
	if cfg.UnauthenticatedBodyTimeout <= 0 {
		cfg.UnauthenticatedBodyTimeout = UnauthenticatedBodyTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	s := &Server{
		cfg: cfg, log: cfg.Logger, store: cfg.Store, now: cfg.Now,
		live: map[string]*liveRun{}, beginning: map[string]bool{}, abandoned: map[string]bool{}, slots: make(chan struct{}, cfg.MaxRuns),
		recheck:  make(chan struct{}, 1),
		pokes:    pokes{m: map[string]chan struct{}{}},
		listPoll: poll,
		conns:    &conns{cap: connCap(cfg.MaxConns)},
		replays:  make(chan struct{}, maxReplays),
		unauth:   make(chan struct{}, cfg.MaxUnauthenticated),
	}
	if ls, ok := cfg.Store.(localStore); ok {
		s.localEvents = ls.LocalEvents()
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	s.access = newAccessLog(s.log, cfg.AccessLog)
	var err error
	hc := mcpserver.HTTPConfig{Token: cfg.Token, PublicURL: cfg.PublicURL, Addr: cfg.Addr}
	if s.checks, err = mcpserver.NewChecker(hc); err != nil {
		return nil, err
	}
	key := cfg.Secret
	if len(key) == 0 {
		key, err = cfg.Store.Secret(ctx, func() ([]byte, error) {
			k := make([]byte, 32)
			_, err := rand.Read(k)
			return k, err
		})
		if err != nil {
			return nil, err
		}
	}
	if len(key) < 16 {
		return nil, fmt.Errorf("serve: the approval key (HALO_SERVE_SECRET) must be at least 16 bytes, not %d", len(key))
	}
	s.links = &signer{key: key, ttl: cfg.LinkTTL, base: publicBase(cfg)}
	s.metrics = newMetrics()
	rc := cfg.Runtime
	rc.Store = &tracker{s: s}
	userEv := rc.OnEvent
	rc.OnEvent = func(e runtime.Event) {
		s.onEvent(e)
		if userEv != nil {
			userEv(e)
		}
	}
	rc.NewID = newRunID
	if m, ok := cfg.Store.(longIDMaker); ok {
		rc.NewID = m.NewLongRunID
	}
	if cfg.newID != nil { // a test's
		rc.NewID = cfg.newID
	}
	if s.rt, err = runtime.New(cfg.Program, rc); err != nil {
		return nil, err
	}
	s.runCtx, s.stopRuns = context.WithCancelCause(context.Background())
	s.streamCtx, s.stopStream = context.WithCancel(context.Background())
	if lost, err := s.store.Expire(ctx); err != nil {
		return nil, err
	} else if len(lost) > 0 {
		s.log.Warn("runs left running by a stopped server failed", "code", runstore.CodeHostLost, "runs", len(lost))
	}
	// The MCP server describes the pipelines for /api/pipelines too, mounted or not.
	s.mcp, err = mcpserver.New(mcpserver.Config{
		Program: cfg.Program, Runtime: s.rt, Tools: cfg.Runtime.Tools, Name: "halo", Version: cfg.Version,
		Logger: s.log.Named("mcp"), Secret: derive(key, "mcp request state"), Continue: s.continueText,
	})
	if err != nil {
		return nil, err
	}
	var mcp http.Handler
	if cfg.MCP {
		if mcp, err = s.mcp.HTTPHandler(hc); err != nil {
			return nil, err
		}
	}
	if s.handler, err = s.routes(mcp); err != nil {
		return nil, err
	}
	return s, nil
}

// Runtime is the runtime the server runs pipelines on.
func (s *Server) Runtime() *runtime.Runtime { return s.rt }

// derive makes a key for one purpose from the server's key, so no two uses share one.
func derive(key []byte, purpose string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// A longIDMaker is a store that makes the ids of the runs it keeps, as long as newRunID's
// and as hard to guess (the embedded store: runstore.SQLite.NewLongRunID).
type longIDMaker interface{ NewLongRunID() string }

// newRunID makes an unguessable run id: 128 random bits.
func newRunID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// Start starts the server's background work: renewing the leases of its runs (and
// cancelling those someone asked to), failing lost runs of other processes, and following
// other processes' changes. Close stops it.
func (s *Server) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.loops = cancel
	s.access.start()
	s.bg.Go(s.access.run)
	s.bg.Go(func() {
		t := time.NewTicker(s.cfg.Interval)
		defer t.Stop()
		kept := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-s.recheck:
			}
			ids, err := s.store.Keep(ctx)
			switch {
			case err == nil:
				kept = time.Now()
			case ctx.Err() == nil:
				s.log.Warn("renewing run leases failed", "error", err)
				// Past about a lease without renewing, another replica may already have
				// failed these runs: stop them here rather than run them twice.
				if time.Since(kept) > 3*s.cfg.Interval {
					s.cancelAll(errLeaseLost)
				}
			}
			for _, id := range ids {
				s.cancelNoted(id)
			}
			lost, err := s.store.Expire(ctx)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("looking for lost runs failed", "error", err)
			}
			for _, id := range lost {
				s.log.Warn("run lost: its server stopped renewing its lease", "run", id, "code", runstore.CodeHostLost)
				s.metrics.stopped("", runtime.Failed)
				s.pokes.poke(id)
			}
		}
	})
	s.bg.Go(func() {
		s.store.Listen(ctx, func(n runstore.Note) {
			if n.RunID == "" {
				// Listening (again): a cancel asked while no one listened is found now.
				s.recheckNow()
				s.pokes.pokeAll()
				return
			}
			if n.Kind == runstore.NoteCancel {
				s.cancelNoted(n.RunID)
			}
			s.pokes.poke(n.RunID)
		})
	})
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Close stops the server: no new runs or signals are taken; runs going on get grace to
// finish, then are cancelled and saved as interrupted; paused runs stay paused; event
// streams end; background work stops. It returns once every run has been saved.
func (s *Server) Close(grace time.Duration) error {
	s.closing.Store(true)
	s.stopStream()
	done := make(chan struct{})
	go func() { s.waitLive(); close(done) }()
	t := time.NewTimer(grace)
	select {
	case <-done:
		t.Stop()
	case <-t.C:
		s.mu.Lock()
		n := len(s.live)
		for _, lr := range s.live {
			lr.cancel(errInterrupted)
		}
		s.mu.Unlock()
		s.log.Warn("runs still running after the grace period are interrupted", "runs", n, "grace", grace)
		s.stopRuns(errInterrupted)
		// A run whose tool or model does not heed the cancellation is saved as
		// interrupted by the server itself, with its events so far.
		wait := min(max(grace, 100*time.Millisecond), 5*time.Second)
		select {
		case <-done:
		case <-time.After(wait):
			s.abandon()
			<-done
		}
	}
	s.mu.Lock()
	abandoned := len(s.abandoned) > 0
	s.mu.Unlock()
	if !abandoned {
		s.runs.Wait()
	}
	if s.loops != nil {
		s.loops()
		s.access.close()
	}
	s.bg.Wait()
	return nil
}

// abandon saves every run still live as interrupted and forgets it: a save the runtime
// makes for it later is dropped.
func (s *Server) abandon() {
	s.mu.Lock()
	runs := make([]*liveRun, 0, len(s.live))
	for id, lr := range s.live {
		runs = append(runs, lr)
		delete(s.live, id)
		s.abandoned[id] = true
	}
	s.mu.Unlock()
	for _, lr := range runs {
		rec, err := s.store.Load(lr.id)
		if err == nil {
			lr.mu.Lock()
			rec.Events = append([]runtime.Event(nil), lr.events...)
			lr.mu.Unlock()
			now := s.now().UTC()
			rec.Status, rec.Resume, rec.Meta.Paused, rec.Updated = runtime.Failed, nil, nil, now
			rec.Error = &runtime.ErrorInfo{Code: CodeInterrupted, Message: errInterrupted.Error() + " (its grace period ran out, and it did not stop when cancelled)"}
			rec.Events = append(rec.Events, runtime.Event{Type: "run", Time: now, RunID: rec.RunID, Status: runtime.Failed, Error: rec.Error})
			err = s.store.Save(rec)
		}
		if err != nil {
			s.log.Error("saving an interrupted run failed", "run", lr.id, "error", err)
		}
		s.metrics.running.Dec()
		s.metrics.stopped(lr.pipeline, runtime.Failed)
		close(lr.stopped)
	}
}

// waitLive returns when no run is live in this process.
func (s *Server) waitLive() {
	for {
		s.mu.Lock()
		n := len(s.live)
		var one *liveRun
		for _, lr := range s.live {
			one = lr
			break
		}
		s.mu.Unlock()
		if n == 0 {
			return
		}
		<-one.stopped
	}
}
