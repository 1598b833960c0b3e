// Package plugin owns the host's side of out-of-process tool providers: it starts a plugin
// executable with go-plugin over gRPC (proto/halo/plugin/v1), with a clean environment,
// /dev/null as standard input, its socket in a host-owned 0700 folder, a session of its own
// (its own process group, no controlling terminal), a parent-death signal, and (on Linux) its
// own PID namespace, no capabilities (a user namespace when the host is not root), the
// seccomp filter every plugin gets and, for a sandboxed plugin, the Landlock restrictions of
// the thread it is started from; it marks the host non-dumpable so a plugin
// cannot read the host's secrets from /proc; it forwards the
// plugin's log lines under the provider's name; it turns each configured declaration into
// a tool.Provider that restarts a crashed plugin on the next call; and it runs every call of
// a process, concurrent or not, on one long-lived gRPC stream (the Calls stream of
// plugin.proto), falling back to a stream per call for a plugin that does not serve it.
//
// One Client is one plugin executable, started on first use and kept for every declaration
// and run that uses it; whoever builds the registry closes it when the command ends. The
// built-in providers (halo re-executed), module packages and the sandbox wrapper all start
// through Command.
package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/pkgmgr"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// CodeIntegrity is the error code of a plugin executable whose sha256 is not the pinned one.
const CodeIntegrity = pkgmgr.CodeIntegrity

// Options tune a Client. The zero value is ready to use.
type Options struct {
	// Logger is the host's logger; the plugin's own log lines appear under
	// Logger.Named(Command.Name). Nil discards them.
	Logger hclog.Logger
	// StartTimeout bounds the start and handshake; 0 means 20 seconds.
	StartTimeout time.Duration
	// AutoMTLS wraps the connection in mutual TLS with throw-away certificates. It is off by
	// default: the socket lives in a folder only the host's user can enter, and every
	// connection is authenticated both ways without it (auth.go), so TLS adds nothing on this
	// machine, and it costs a key pair and a certificate on each side at every start (about 1.5x the plugin's CPU at start, measured by BenchmarkColdStart; see
	// docs/plugins.md). Turn it on only for a transport that leaves the machine.
	AutoMTLS bool
	// NoNamespaces starts plugins without their own user and PID namespaces on Linux. It is
	// for measuring what they cost and for systems that forbid them (where the host would
	// otherwise warn at every start); it gives up the protections isolation_linux.go lists.
	NoNamespaces bool
	// UserNamespace starts a sandboxed plugin (Command.Sandbox) in its own user namespace
	// even where the host may create its PID namespace without one (as root): what a host
	// that is not root does. For tests and measurements.
	UserNamespace bool
	// CallTimeout bounds each call, and each Configure and Describe, that the caller's context
	// does not bound sooner: a plugin that never answers fails the call with TIMEOUT instead
	// of holding up the run. 0 means none. TimeoutArg, when set, names the declaration
	// argument (timeout_ms) that sets it per declaration, in milliseconds; the host takes it
	// out of the arguments the plugin sees.
	CallTimeout time.Duration
	TimeoutArg  string
	// MaxProcs limits the processes and threads the plugin and everything it starts may have
	// at once (pids_linux.go says how, and where it cannot); 0 means DefaultMaxProcs, a
	// negative number no limit.
	MaxProcs int

	// beforeExec, when set, is called at every start of a pinned executable after its check
	// and before it is executed: where a swapper would race the pin (export_test.go).
	beforeExec func()
}

// DefaultCallTimeout is how long a module package's call may take when its declaration sets
// no timeout_ms.
const DefaultCallTimeout = 60 * time.Second

// A Spec describes one provider a plugin serves, as Describe returns it.
type Spec struct {
	Name        string
	Description string
	Methods     []tool.Method
}

// A Client runs one plugin executable. It is safe for concurrent use.
type Client struct {
	cmd    Command
	opts   Options
	logger hclog.Logger

	mu         sync.Mutex
	proc       *process
	gen        uint64
	specs      []Spec
	socketRoot string
	closed     bool
	// maxResult is the largest max_result_bytes: of the declarations opened on this client:
	// what the plugin process may send in one message (recvLimit).
	maxResult int
	// perRun is set once a declaration's Configure said its provider must not be shared
	// across runs (sdk.Provider.PerRun).
	perRun bool
}

// process is one running plugin process.
type process struct {
	gp   *goplugin.Client
	rpc  pluginv1.PluginServiceClient
	gen  uint64
	dead atomic.Bool // a call saw it die; restart even if go-plugin has not noticed yet
	// runner is the process's runner, for its pid.
	runner *procRunner
	logger hclog.Logger
	// conn is the gRPC connection; it leaves the Ready state as soon as the socket closes,
	// which is usually before go-plugin has reaped the process.
	conn *grpc.ClientConn
	// recvLimit is the largest message the host takes from this process.
	recvLimit int
	// token is the process's connection secret, which opens its calls socket.
	token string

	mu sync.Mutex
	// calls is the Calls stream every call of this process goes through, opened by the first
	// call; nil before that, and for a plugin that does not serve Calls.
	calls *callStream
	// alone is set when the plugin answered Calls with UNIMPLEMENTED (an SDK older than the
	// Calls stream, or an author who implemented only Call): each call then has a stream of
	// its own.
	alone bool
	// streamOnly is set once the process has no calls socket (an SDK older than the socket,
	// or one that could not be opened): its calls go on the Calls stream.
	streamOnly bool
}

// alive reports whether p can take a call: not seen dying by a call, not exited, its
// connection not broken. A plugin that died between calls is then restarted before the next
// call is sent, instead of failing it.
func (p *process) alive() bool {
	if p.dead.Load() || p.gp.Exited() || p.runner.exited() {
		return false
	}
	if p.conn != nil {
		switch p.conn.GetState() {
		case connectivity.TransientFailure, connectivity.Shutdown, connectivity.Idle:
			return false
		}
	}
	return true
}

// New returns a Client for cmd. Nothing starts until the first Describe or Open.
func New(cmd Command, opts Options) *Client {
	logger := opts.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 20 * time.Second
	}
	return &Client{cmd: cmd, opts: opts, logger: logger}
}

// Describe returns the providers the plugin serves, with every method each can offer. It
// starts the plugin if it is not running.
func (c *Client) Describe(ctx context.Context) ([]Spec, error) {
	p, err := c.running()
	if err != nil {
		return nil, err
	}
	return c.describe(ctx, p)
}

func (c *Client) describe(ctx context.Context, p *process) ([]Spec, error) {
	c.mu.Lock()
	specs := c.specs
	c.mu.Unlock()
	if specs != nil {
		return specs, nil
	}
	ctx, cancel := withCallTimeout(ctx, c.opts.CallTimeout)
	defer cancel()
	resp, err := p.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return nil, c.callError(ctx, p, "describe", err)
	}
	for _, ps := range resp.GetProviders() {
		ms, err := methodsFromProto(c.cmd.Name, ps.GetMethods())
		if err != nil {
			return nil, err
		}
		specs = append(specs, Spec{Name: ps.GetName(), Description: ps.GetDescription(), Methods: ms})
	}
	c.mu.Lock()
	c.specs = specs
	c.mu.Unlock()
	return specs, nil
}

// Open configures the plugin for one declaration and returns it as a tool.Provider. Closing
// the provider releases the declaration, not the process: Close the Client for that.
//
// The host reads the declaration's max_result_bytes: (tool.MaxResultOption) itself and does
// not pass it to the plugin's Configure: it bounds the results of the declaration's calls
// (tool.DefaultMaxResultBytes by default), and every message of a plugin process is bounded
// by the largest limit of the declarations it serves. A declaration that allows more than
// the running process takes has the next call start a process that does.
func (c *Client) Open(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
	p, err := c.Declare(d)
	if err != nil {
		return nil, err
	}
	if _, _, err := p.(*provider).instance(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Declare is Open without starting anything: the plugin starts, and the declaration is
// configured on it, at the provider's first Methods or Call. A declaration whose options
// the host reads itself (max_result_bytes:, the timeout argument) is checked now.
func (c *Client) Declare(d tool.Declaration) (tool.Provider, error) {
	d, timeout, err := c.callTimeout(d)
	if err != nil {
		return nil, err
	}
	limit, err := tool.MaxResultBytesOf(d.Named)
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "tool %s: %v", d.Name, err)
	}
	if _, ok := d.Named[tool.MaxResultOption]; ok {
		named := make(map[string]any, len(d.Named))
		for k, v := range d.Named {
			if k != tool.MaxResultOption {
				named[k] = v
			}
		}
		d.Named = named
	}
	c.mu.Lock()
	c.maxResult = max(c.maxResult, limit)
	if c.proc != nil && c.proc.recvLimit < recvLimit(c.maxResult) {
		// The running process was started for smaller results: the next call starts one
		// that takes this declaration's.
		c.proc.dead.Store(true)
	}
	c.mu.Unlock()
	return &provider{client: c, decl: d, maxResult: limit, timeout: timeout}, nil
}

// Ran reports whether a plugin process was ever started.
func (c *Client) Ran() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen > 0
}

// PerRun reports whether a declaration configured on this client said its provider must not
// be shared across runs (sdk.Provider.PerRun). A pool stops such a plugin when its run ends.
func (c *Client) PerRun() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.perRun
}

// Alone reports whether the plugin has nothing of its own left running: no process runs, or
// it runs alone in a PID namespace of its own (every process it started that outlived its
// parent is then its child, and it has none). A plugin started without a PID namespace of
// its own cannot be seen that way, and is never Alone while it runs. A Bash plugin that is
// not Alone when its run ends left something running that the next run could meet.
func (c *Client) Alone() bool {
	c.mu.Lock()
	p := c.proc
	c.mu.Unlock()
	if p == nil || !p.alive() {
		return true
	}
	if p.runner.isolation == isolateNone {
		return false
	}
	return !hasChildren(p.runner.PID())
}

// Close stops the plugin (a graceful shutdown, then SIGKILL to its whole process group after
// two seconds) and removes its socket folder. Calls after Close fail. It is safe to call twice.
func (c *Client) Close() error {
	c.mu.Lock()
	p, root := c.proc, c.socketRoot
	c.proc, c.closed = nil, true
	c.mu.Unlock()
	if p != nil {
		p.stop()
	}
	if root != "" {
		return os.RemoveAll(root)
	}
	return nil
}

// PID returns the process id of the running plugin, or 0. Tests and `halo tools` use it.
func (c *Client) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil || !c.proc.alive() {
		return 0
	}
	return c.proc.runner.PID()
}

// running returns the live process, starting or restarting it as needed.
func (c *Client) running() (*process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, tool.Errorf(tool.CodeToolError, "plugin %s: the host is shutting down", c.cmd.Name)
	}
	if c.proc != nil && c.proc.alive() {
		return c.proc, nil
	}
	if c.proc != nil {
		c.logger.Warn("plugin stopped; starting it again", "plugin", c.cmd.Name)
		old := c.proc
		c.proc = nil
		old.stop()
	}
	p, err := c.start()
	if err != nil {
		return nil, err
	}
	c.proc = p
	return p, nil
}

var versionRE = regexp.MustCompile(`Plugin version: (\d+)`)

// start launches the plugin; c.mu is held.
func (c *Client) start() (*process, error) {
	if err := c.cmd.check(); err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "%v", err)
	}
	if err := hardenHost(); err != nil {
		// Refuse rather than run a plugin that could read the host's secrets.
		return nil, fmt.Errorf("plugin %s: cannot mark the host non-dumpable: %w", c.cmd.Name, err)
	}
	if c.socketRoot == "" {
		root, err := newSocketRoot()
		if err != nil {
			return nil, fmt.Errorf("plugin %s: socket folder: %w", c.cmd.Name, err)
		}
		c.socketRoot = root
	}
	spec := c.cmd
	namespaces := wantNamespaces() && !c.opts.NoNamespaces
	token, err := newToken()
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", c.cmd.Name, err)
	}
	var run *procRunner
	gp := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: goplugin.HandshakeConfig{
			ProtocolVersion:  pluginv1.ProtocolVersion,
			MagicCookieKey:   pluginv1.MagicCookieKey,
			MagicCookieValue: pluginv1.MagicCookieValue,
		},
		VersionedPlugins: map[int]goplugin.PluginSet{pluginv1.ProtocolVersion: {pluginv1.PluginName: grpcPlugin{}}},
		// go-plugin hands RunnerFunc a placeholder command carrying only its own variables
		// (the cookie, the socket folder, the protocol versions: SkipHostEnv keeps the host's
		// out). The real command is built here, so the pin is checked here too (go-plugin's
		// SecureConfig only checks Cmd, which a RunnerFunc replaces, and checks a path it then
		// executes again): the executable is opened and hashed, and that descriptor is what
		// starts (pin.go).
		RunnerFunc: func(l hclog.Logger, placeholder *exec.Cmd, socketDir string) (runner.Runner, error) {
			cmd := exec.Command(spec.Path, spec.Args...)
			cmd.Env = append(append(spec.environ(), placeholder.Env...), pluginv1.TokenEnv+"="+token)
			cmd.Dir = spec.Dir
			var pin *pinned
			if len(spec.SHA256) > 0 {
				if spec.Wrap != nil {
					return nil, errors.New("a pinned executable cannot be started through a wrapper")
				}
				p, err := openPinned(spec.Path, spec.SHA256)
				if err != nil {
					return nil, err
				}
				if err := p.execPinned(cmd); err != nil {
					p.Close()
					return nil, err
				}
				pin = p
			}
			if spec.Wrap != nil {
				if err := spec.Wrap(cmd); err != nil {
					return nil, fmt.Errorf("sandbox: %w", err)
				}
			}
			maxProcs := c.opts.MaxProcs
			if maxProcs == 0 {
				maxProcs = DefaultMaxProcs
			}
			r, err := newProcRunner(l, spec.Name, cmd, socketDir, namespaces, spec.Sandbox, c.opts.UserNamespace, max(maxProcs, 0))
			if err != nil {
				if pin != nil {
					pin.Close()
				}
				return nil, err
			}
			r.pin, r.beforeExec = pin, c.opts.beforeExec
			run = r
			return r, nil
		},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           c.logger,
		AutoMTLS:         c.opts.AutoMTLS,
		SkipHostEnv:      true,
		StartTimeout:     c.opts.StartTimeout,
		UnixSocketConfig: &goplugin.UnixSocketConfig{TempDir: c.socketRoot},
		GRPCDialOptions: []grpc.DialOption{
			// go-plugin lifts gRPC's limit on received messages altogether; a plugin could
			// then make the host hold any amount of memory for one result (300 MB grew the
			// host to 3.7 GB in the review). gRPC refuses a message over this size from its
			// header, before reading it.
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(recvLimit(c.maxResult))),
			// gRPC closes an idle connection after 30 minutes by default; a plugin's connection
			// must live as long as the plugin, and a closed one reads as a dead plugin.
			grpc.WithIdleTimeout(0),
			// Fixed windows, as the SDK's server has (sdk/internal/wire.NewGRPCServer): the
			// default 64 KB window grown by BDP pings sends window updates and pings around
			// the calls of the one stream that carries them all.
			grpc.WithInitialWindowSize(windowSize),
			grpc.WithInitialConnWindowSize(windowSize),
			// Every call carries the process's secret, and the connection is made to the
			// plugin process alone (auth.go). The dialer replaces go-plugin's.
			grpc.WithPerRPCCredentials(tokenCredentials(token)),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return run.dial(ctx) }),
		},
	})
	rpcClient, err := gp.Client()
	if err != nil {
		gp.Kill()
		return nil, c.startError(err)
	}
	raw, err := rpcClient.Dispense(pluginv1.PluginName)
	if err != nil {
		gp.Kill()
		return nil, fmt.Errorf("plugin %s: %w", c.cmd.Name, err)
	}
	c.gen++
	c.specs = nil
	p := &process{gp: gp, rpc: raw.(pluginv1.PluginServiceClient), gen: c.gen, runner: run, recvLimit: recvLimit(c.maxResult), token: token, logger: c.logger}
	if gc, ok := rpcClient.(*goplugin.GRPCClient); ok {
		p.conn = gc.Conn
		if err := run.connected(gc.Conn, c.opts.StartTimeout); err != nil {
			gp.Kill()
			return nil, c.startError(err)
		}
	}
	return p, nil
}

func (c *Client) startError(err error) error {
	switch {
	case errors.Is(err, goplugin.ErrChecksumsDoNotMatch):
		return &tool.Error{Code: CodeIntegrity, Message: fmt.Sprintf("plugin %s: %s does not match the sha256 the lock pins; run halo install", c.cmd.Name, c.cmd.Path), Err: err}
	case errors.Is(err, errPinChanged):
		return &tool.Error{Code: CodeIntegrity, Message: fmt.Sprintf("plugin %s: %s changed while it was being started, so it was stopped; if nothing should be writing it, run halo install", c.cmd.Name, c.cmd.Path), Err: err}
	}
	if m := versionRE.FindStringSubmatch(err.Error()); m != nil {
		return &tool.Error{Code: tool.CodeToolConfig, Message: fmt.Sprintf("plugin %s speaks plugin protocol version %s, and this halo speaks version %d: install a newer halo, or a version of the plugin built for this one", c.cmd.Name, m[1], pluginv1.ProtocolVersion), Err: err}
	}
	return &tool.Error{Code: tool.CodeToolError, Message: fmt.Sprintf("plugin %s did not start: %v", c.cmd.Name, err), Err: err}
}

// markDead records that a call saw p die, so the next call starts a new process.
func (c *Client) markDead(p *process) { p.dead.Store(true) }

// callError turns an RPC failure into a tool error: the caller's cancellation or deadline
// stays that (the plugin may report it a moment before the caller's own timer fires), a dead
// plugin or a broken connection is TOOL_CRASHED (and the next call starts a new process), and
// anything else is TOOL_ERROR.
func (c *Client) callError(ctx context.Context, p *process, what string, err error) error {
	code := status.Code(err)
	if ctxErr := ctx.Err(); ctxErr != nil || code == codes.DeadlineExceeded || code == codes.Canceled {
		if errors.Is(ctxErr, context.DeadlineExceeded) || (ctxErr == nil && code == codes.DeadlineExceeded) {
			return &tool.Error{Code: tool.CodeTimeout, Message: fmt.Sprintf("plugin %s: %s ran out of time", c.cmd.Name, what), Retryable: true, Err: context.DeadlineExceeded}
		}
		return fmt.Errorf("plugin %s: %s: %w", c.cmd.Name, what, context.Canceled)
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return &tool.Error{Code: tool.CodeToolError, Message: fmt.Sprintf("plugin %s: %s stopped: the host is shutting down", c.cmd.Name, what), Err: err}
	}
	if code == codes.ResourceExhausted {
		// The plugin sent a message over the limit (gRPC refused it from its header). It
		// broke the Calls stream, and the calls on it, so the process is not used again.
		c.markDead(p)
		c.mu.Lock()
		limit := c.maxResult
		c.mu.Unlock()
		return &tool.Error{Code: tool.CodeLimit, Err: err,
			Message: fmt.Sprintf("plugin %s sent a message larger than %s during %s (%s: raises the limit); it is started again on the next call", c.cmd.Name, tool.Size(limit), what, tool.MaxResultOption)}
	}
	if code == codes.Unavailable || !p.alive() {
		// Usually the process died; give go-plugin a moment to see the exit so the log says
		// so. A connection that broke while the process lives cannot be trusted either.
		deadline := time.Now().Add(time.Second)
		for !p.gp.Exited() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		c.markDead(p)
		return &tool.Error{Code: tool.CodeToolCrashed, Message: fmt.Sprintf("plugin %s stopped during %s; it is started again on the next call", c.cmd.Name, what), Retryable: true, Err: err}
	}
	return &tool.Error{Code: tool.CodeToolError, Message: fmt.Sprintf("plugin %s: %s: %v", c.cmd.Name, what, err), Err: err}
}

// grpcPlugin is the host's half of the go-plugin plugin: it hands out the generated client.
type grpcPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (grpcPlugin) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error {
	return errors.New("the host does not serve plugins")
}

func (grpcPlugin) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return pluginv1.NewPluginServiceClient(cc), nil
}

// methodsFromProto converts the methods a plugin describes. A parameter schema nested more
// than tool.MaxDepth deep (schemas reach models and validators) is a TOOL_LIMIT error.
func methodsFromProto(plugin string, ms []*pluginv1.Method) ([]tool.Method, error) {
	out := make([]tool.Method, 0, len(ms))
	for _, m := range ms {
		var params json.RawMessage
		if len(m.GetParamsSchema()) > 0 {
			params = json.RawMessage(m.GetParamsSchema())
		}
		if tool.DepthExceeds(params, tool.MaxDepth) {
			return nil, tool.LimitError("plugin %s: the parameter schema of %s nests objects and arrays more than %d deep", plugin, m.GetName(), tool.MaxDepth)
		}
		out = append(out, tool.Method{
			Name:         m.GetName(),
			Description:  m.GetDescription(),
			Params:       params,
			Effect:       effectFromProto(m.GetEffect()),
			PipelineOnly: m.GetPipelineOnly(),
		})
	}
	return out, nil
}

func effectFromProto(e pluginv1.Effect) tool.Effect {
	switch e {
	case pluginv1.Effect_EFFECT_READ:
		return tool.Read
	case pluginv1.Effect_EFFECT_WRITE:
		return tool.Write
	}
	return tool.External
}

// Types describes the plugin and returns one tool.Type per provider it serves, each opening
// declarations on this Client: what a module package or a built-in registers. kind and pkg
// fill the types' Kind and Package. It starts the plugin.
func (c *Client) Types(ctx context.Context, kind tool.Kind, pkg string) ([]tool.Type, error) {
	specs, err := c.Describe(ctx)
	if err != nil {
		return nil, err
	}
	types := make([]tool.Type, 0, len(specs))
	for _, s := range specs {
		types = append(types, tool.Type{
			Name:        s.Name,
			Description: s.Description,
			Kind:        kind,
			Package:     pkg,
			Methods:     s.Methods,
			Open:        c.Open,
		})
	}
	return types, nil
}

// windowSize is the gRPC flow-control window, per stream and per connection.
const windowSize = 1 << 20

// envelope is what a message may hold beyond a result of the limit's size: the call id, the
// event's framing, a failure's message beside its detail.
const envelope = 64 << 10

// recvLimit is the largest message the host takes from a plugin whose declarations allow
// results of up to maxResult bytes.
func recvLimit(maxResult int) int {
	if maxResult <= 0 {
		maxResult = tool.DefaultMaxResultBytes
	}
	return maxResult + envelope
}

// maxQueuedProgress bounds the progress events a call keeps for a caller that is slower to
// take them than the plugin is to send them; past it, each new event replaces the newest
// queued one, so the caller still sees the latest state.
const maxQueuedProgress = 64

var (
	// errCallsUnsupported is what the calls pending on a Calls stream get when the plugin
	// turned the stream down: they never reached the plugin, and run alone instead.
	errCallsUnsupported = errors.New("the plugin does not serve the Calls stream")
	// errNoOutcome is a call stream that ended without an outcome.
	errNoOutcome = errors.New("the plugin ended the call without a result")
)

// call runs one call on p and returns its outcome (a CallResponse that is not progress). Each
// progress event goes to progress, when not nil, on the caller's goroutine. An error is the
// caller's ctx error, errNoOutcome, or what broke the stream; callError turns it into a tool
// error.
func (p *process) call(ctx context.Context, req *pluginv1.CallRequest, progress func(*pluginv1.Progress)) (*pluginv1.CallResponse, error) {
	if err := ctx.Err(); err != nil {
		// Nothing to start: a call sent now would only be cancelled.
		return nil, err
	}
	cs, err := p.callStream()
	if err != nil {
		return nil, err
	}
	if cs != nil {
		out, err := cs.call(ctx, req, progress)
		if !errors.Is(err, errCallsUnsupported) {
			return out, err
		}
	}
	return p.callAlone(ctx, req, progress)
}

// callStream returns the process's Calls stream, opening it on the first call, or nil when
// the plugin does not serve it. The stream is the plugin's calls socket when it has one
// (socket.go), else a gRPC stream.
func (p *process) callStream() (*callStream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.alone {
		return nil, nil
	}
	if p.calls != nil {
		return p.calls, nil
	}
	if !p.streamOnly {
		t, err := p.openCallsSocket()
		if err == nil {
			// No goroutine reads a calls socket for the callers: they take turns (callOnSocket).
			p.calls = &callStream{p: p, stream: t, socket: t, cancel: t.close, calls: map[uint64]*pendingCall{}, done: make(chan struct{})}
			close(p.calls.done)
			return p.calls, nil
		}
		p.streamOnly = true
		if status.Code(err) != codes.Unimplemented {
			p.logger.Warn("the plugin's calls socket could not be opened; its calls go on the Calls stream", "error", err)
		}
	}
	// The stream lives as long as the process: no caller's context may end it.
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := p.rpc.Calls(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	p.calls = &callStream{p: p, stream: stream, cancel: cancel, calls: map[uint64]*pendingCall{}, done: make(chan struct{})}
	go p.calls.receive()
	return p.calls, nil
}

// stop kills the plugin process and waits for the goroutine that reads its Calls stream.
func (p *process) stop() {
	p.gp.Kill()
	p.mu.Lock()
	cs := p.calls
	p.mu.Unlock()
	if cs != nil {
		cs.cancel()
		<-cs.done
	}
}

// callAlone runs one call on a Call stream of its own: the way to call a plugin that does not
// serve Calls.
func (p *process) callAlone(ctx context.Context, req *pluginv1.CallRequest, progress func(*pluginv1.Progress)) (*pluginv1.CallResponse, error) {
	// Cancelling ctx cancels the stream, which cancels the call's context in the plugin.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := p.rpc.Call(ctx, req)
	if err != nil {
		return nil, err
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, errNoOutcome
		}
		if err != nil {
			return nil, err
		}
		if pg := resp.GetProgress(); pg != nil {
			if progress != nil {
				progress(pg)
			}
			continue
		}
		return resp, nil
	}
}

// A callStream is the host's end of a Calls stream: every call of one plugin process, each
// tagged with an id, on one long-lived gRPC stream (plugin.proto, "Calls", has the rules).
// Callers send their own requests; one goroutine, receive, reads everything the plugin sends
// and hands each event to the caller waiting for it.
type callStream struct {
	p      *process
	stream callsTransport
	// socket is stream when it is a calls socket, which the callers read themselves.
	socket *socketCalls
	// cancel ends the stream; receive then returns.
	cancel func()

	// sendMu serialises sends: gRPC allows one sender at a time on a stream.
	sendMu sync.Mutex

	// done is closed when receive returns.
	done chan struct{}

	mu       sync.Mutex
	nextID   uint64
	calls    map[uint64]*pendingCall // calls sent and not yet answered or cancelled
	err      error                   // why the stream ended; nil while it is open
	answered bool                    // the plugin has sent something: it serves Calls
	reading  bool                    // a caller reads the calls socket (callOnSocket)
}

// callsTransport carries the Calls stream's messages: a gRPC stream, or a calls socket.
// Send is called under callStream.sendMu, Recv by receive alone. A Send that returns io.EOF
// found the stream broken: Recv reports why.
type callsTransport interface {
	Send(*pluginv1.CallsRequest) error
	Recv() (*pluginv1.CallsResponse, error)
}

// A pendingCall is one call waiting for its events. receive fills it and wakes its caller.
type pendingCall struct {
	wake chan struct{} // capacity 1: something was delivered since the caller last looked
	// waiting says the caller waits on wake, and may be woken to read a calls socket;
	// guarded by callStream.mu.
	waiting bool

	mu       sync.Mutex
	progress []*pluginv1.Progress
	outcome  *pluginv1.CallResponse
	err      error // the stream ended before the outcome
}

func (cs *callStream) call(ctx context.Context, req *pluginv1.CallRequest, progress func(*pluginv1.Progress)) (*pluginv1.CallResponse, error) {
	if cs.socket != nil {
		return cs.callOnSocket(ctx, req, progress)
	}
	id, pc, err := cs.start(req)
	if err != nil {
		return nil, err
	}
	for {
		select {
		case <-pc.wake:
		case <-ctx.Done():
			if cs.forget(id) {
				// Sent apart, so that a plugin too stuck to read its stream cannot hold up a
				// caller who has given up.
				go cs.sendCancel(id)
			}
			return nil, ctx.Err()
		}
		if out, err, done := pc.take(progress); done {
			return out, err
		}
	}
}

// start sends a new call and returns its id and the pendingCall its events go to. An error
// is the stream's end, or a message that could not be sent on a stream that still works. (A
// Send that finds the stream broken returns io.EOF: the stream's reader then reports why to
// every pending call, this one included.)
func (cs *callStream) start(req *pluginv1.CallRequest) (uint64, *pendingCall, error) {
	pc := &pendingCall{wake: make(chan struct{}, 1)}
	cs.mu.Lock()
	if cs.err != nil {
		err := cs.err
		cs.mu.Unlock()
		return 0, nil, err
	}
	cs.nextID++
	id := cs.nextID
	cs.calls[id] = pc
	cs.mu.Unlock()

	cs.sendMu.Lock()
	err := cs.stream.Send(&pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Call{Call: req}})
	cs.sendMu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) {
		cs.forget(id)
		return 0, nil, err
	}
	return id, pc, nil
}

// forget drops a call the caller no longer waits for, and reports whether it was still
// pending (not answered, and the stream not ended).
func (cs *callStream) forget(id uint64) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	_, ok := cs.calls[id]
	delete(cs.calls, id)
	return ok
}

func (cs *callStream) sendCancel(id uint64) {
	cs.sendMu.Lock()
	defer cs.sendMu.Unlock()
	// An error means a broken stream, which receive reports.
	_ = cs.stream.Send(&pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Cancel{Cancel: &pluginv1.CancelCall{}}})
}

// receive reads the plugin's events until the stream ends, and hands each to its call. The
// process owns it: stop waits for it.
func (cs *callStream) receive() {
	defer close(cs.done)
	for {
		msg, err := cs.stream.Recv()
		if err != nil {
			cs.end(err)
			return
		}
		cs.dispatch(msg)
	}
}

// dispatch hands an event the plugin sent to the call it belongs to.
func (cs *callStream) dispatch(msg *pluginv1.CallsResponse) {
	ev := msg.GetEvent()
	if ev == nil {
		// An event of a kind this halo cannot read: as an outcome, it fails the call with a
		// message saying so instead of leaving it waiting.
		ev = &pluginv1.CallResponse{}
	}
	last := ev.GetProgress() == nil
	cs.mu.Lock()
	cs.answered = true
	pc := cs.calls[msg.GetCallId()]
	if last {
		delete(cs.calls, msg.GetCallId())
	}
	cs.mu.Unlock()
	if pc != nil { // nil: a call its caller gave up on
		pc.deliver(ev)
	}
}

func (pc *pendingCall) deliver(ev *pluginv1.CallResponse) {
	pc.mu.Lock()
	if pg := ev.GetProgress(); pg != nil {
		if n := len(pc.progress); n >= maxQueuedProgress {
			pc.progress[n-1] = pg
		} else {
			pc.progress = append(pc.progress, pg)
		}
	} else {
		pc.outcome = ev
	}
	pc.mu.Unlock()
	select {
	case pc.wake <- struct{}{}:
	default:
	}
}

// end records why the stream ended and fails every pending call with it. A plugin that turned
// the stream down before answering anything does not serve Calls: its process runs each call
// alone from now on. Any other end loses the calls in flight, and the process is not trusted
// with more: the next call starts a new one.
func (cs *callStream) end(err error) {
	cs.cancel()
	cs.mu.Lock()
	unsupported := !cs.answered && status.Code(err) == codes.Unimplemented
	if unsupported {
		err = errCallsUnsupported
	} else if errors.Is(err, io.EOF) {
		err = status.Error(codes.Unavailable, "the plugin ended the Calls stream")
	}
	cs.err = err
	calls := cs.calls
	cs.calls = nil
	cs.mu.Unlock()
	if unsupported {
		cs.p.mu.Lock()
		cs.p.alone = true
		cs.p.mu.Unlock()
	} else {
		cs.p.dead.Store(true)
	}
	for _, pc := range calls {
		pc.mu.Lock()
		pc.err = err
		pc.mu.Unlock()
		select {
		case pc.wake <- struct{}{}:
		default:
		}
	}
}
