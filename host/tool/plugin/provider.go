package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/metadata"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// MaxResultMetadata is the gRPC metadata key of a Configure request that carries the
// declaration's result limit in bytes (decimal). A plugin may answer a call whose result
// would be larger with an Error of code TOOL_LIMIT; the host refuses it either way.
const MaxResultMetadata = "halo-max-result-bytes"

// provider is one configured declaration on a plugin. When the plugin restarts, the next call
// configures the declaration again on the new process.
type provider struct {
	client *Client
	decl   tool.Declaration
	// timeout bounds each call (Options.CallTimeout, or the declaration's own); 0: none.
	timeout time.Duration
	// maxResult bounds each result and failure detail of the declaration's calls.
	maxResult int

	mu      sync.Mutex
	gen     uint64
	id      string
	methods []tool.Method
	closed  bool
}

// instance returns the live process and this declaration's instance id on it, configuring
// the declaration when the process is new. A process that was already running (kept by a
// pool between runs) and turns out dead when the declaration is configured on it was killed
// while idle: nothing of the call has reached a plugin yet, so a new process is started and
// configured once more, and the call does not pay for a death it did not meet.
func (pr *provider) instance(ctx context.Context) (*process, string, error) {
	pr.client.mu.Lock()
	started := pr.client.gen
	pr.client.mu.Unlock()
	p, id, err := pr.configured(ctx)
	if err != nil && p != nil && p.gen <= started && errcode.Code(err) == tool.CodeToolCrashed {
		p, id, err = pr.configured(ctx)
	}
	if err != nil {
		return nil, "", err
	}
	return p, id, nil
}

// configured is instance's one attempt; on a failure, it returns the process it met, if any.
func (pr *provider) configured(ctx context.Context) (*process, string, error) {
	p, err := pr.client.running()
	if err != nil {
		return nil, "", err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.closed {
		return nil, "", tool.Errorf(tool.CodeToolError, "tool %s is closed", pr.decl.Name)
	}
	if pr.gen == p.gen && pr.id != "" {
		return p, pr.id, nil
	}
	req, err := configureRequest(pr.decl)
	if err != nil {
		return nil, "", err
	}
	cctx, cancel := withCallTimeout(ctx, pr.timeout)
	defer cancel()
	// The SDK reads the limit from the call's metadata and fails a call whose result would go
	// over it, so that an honest plugin loses that call only, not its stream.
	mctx := metadata.AppendToOutgoingContext(cctx, MaxResultMetadata, strconv.Itoa(pr.maxResult))
	resp, err := p.rpc.Configure(mctx, req)
	if err != nil {
		return p, "", pr.client.callError(ctx, p, "configure", err)
	}
	if msg := resp.GetError(); msg != "" {
		return nil, "", tool.Errorf(tool.CodeToolConfig, "tool %s: %s", pr.decl.Name, msg)
	}
	methods, err := methodsFromProto(pr.client.cmd.Name, resp.GetMethods())
	if err != nil {
		return nil, "", err
	}
	if len(methods) == 0 {
		specs, err := pr.client.describe(ctx, p)
		if err != nil {
			return nil, "", err
		}
		for _, s := range specs {
			if s.Name == pr.decl.Provider {
				methods = s.Methods
			}
		}
	}
	pr.gen, pr.id, pr.methods = p.gen, resp.GetInstanceId(), methods
	if resp.GetPerRun() {
		pr.client.mu.Lock()
		pr.client.perRun = true
		pr.client.mu.Unlock()
	}
	return p, pr.id, nil
}

func configureRequest(d tool.Declaration) (*pluginv1.ConfigureRequest, error) {
	args := d.Args
	if args == nil {
		args = []any{}
	}
	named := d.Named
	if named == nil {
		named = map[string]any{}
	}
	a, err := json.Marshal(args)
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "tool %s: arguments: %v", d.Name, err)
	}
	n, err := json.Marshal(named)
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "tool %s: named arguments: %v", d.Name, err)
	}
	return &pluginv1.ConfigureRequest{Provider: d.Provider, ToolName: d.Name, Args: a, NamedArgs: n, ProjectDir: d.Dir}, nil
}

// Methods returns what this declaration offers.
func (pr *provider) Methods(ctx context.Context) ([]tool.Method, error) {
	if _, _, err := pr.instance(ctx); err != nil {
		return nil, err
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return append([]tool.Method(nil), pr.methods...), nil
}

// emptyArgs stands for a request without arguments.
var emptyArgs = json.RawMessage("{}")

// Call runs one method: progress goes to req.Progress, the outcome becomes the result or a
// *tool.Error (a domain failure carries the model's result in Detail). Cancelling ctx cancels
// the call in the plugin.
func (pr *provider) Call(ctx context.Context, req tool.Request) (json.RawMessage, error) {
	p, id, err := pr.instance(ctx)
	if err != nil {
		return nil, err
	}
	args := req.Args
	if len(args) == 0 {
		args = emptyArgs
	}
	var progress func(*pluginv1.Progress)
	if req.Progress != nil {
		progress = func(pg *pluginv1.Progress) {
			req.Progress(tool.Progress{Filled: pg.GetFilled(), Total: pg.GetTotal(), Message: pg.GetMessage()})
		}
	}
	cctx, cancel := withCallTimeout(ctx, pr.timeout)
	defer cancel()
	resp, err := p.call(cctx, &pluginv1.CallRequest{InstanceId: id, Method: req.Method, Args: args}, progress)
	if err != nil {
		what := pr.decl.Name + "." + req.Method
		if errors.Is(err, errNoOutcome) && cctx.Err() == nil {
			return nil, tool.Errorf(tool.CodeToolError, "%s: %v", what, err)
		}
		if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			// The host's own limit, not the caller's: say which, and how to change it.
			return nil, &tool.Error{Code: tool.CodeTimeout, Retryable: true, Err: context.DeadlineExceeded,
				Message: fmt.Sprintf("%s did not answer within %s%s", what, pr.timeout, pr.client.timeoutHint())}
		}
		return nil, pr.client.callError(cctx, p, what, err)
	}
	who := "tool " + pr.decl.Name + "." + req.Method
	switch ev := resp.GetEvent().(type) {
	case *pluginv1.CallResponse_Result:
		out := ev.Result.GetJson()
		if err := tool.CheckReply(who, out, pr.maxResult); err != nil {
			return nil, err
		}
		return json.RawMessage(out), nil
	case *pluginv1.CallResponse_Failure:
		detail := json.RawMessage(ev.Failure.GetDetail())
		if err := tool.CheckReply(who, detail, pr.maxResult); err != nil {
			return nil, err
		}
		if len(detail) == 0 {
			detail, _ = json.Marshal(map[string]string{"error": ev.Failure.GetMessage()})
		}
		return nil, &tool.Error{Code: tool.CodeToolError, Message: ev.Failure.GetMessage(), Detail: detail}
	case *pluginv1.CallResponse_Retry:
		return nil, &tool.Error{Code: tool.CodeToolError, Message: ev.Retry.GetMessage(), Retryable: true, RetryAfter: time.Duration(ev.Retry.GetRetryAfterMs()) * time.Millisecond}
	case *pluginv1.CallResponse_Error:
		code := ev.Error.GetCode()
		switch code {
		case tool.CodeToolArgument, tool.CodeUnknownMethod, tool.CodeToolConfig, tool.CodeToolError, tool.CodeLimit:
		default:
			code = tool.CodeToolError
		}
		return nil, &tool.Error{Code: code, Message: ev.Error.GetMessage()}
	default:
		return nil, tool.Errorf(tool.CodeToolError, "%s.%s: the plugin sent an event this halo does not know (%T); upgrade halo", pr.decl.Name, req.Method, ev)
	}
}

// Close releases the declaration on the plugin. The process stays for other declarations.
func (pr *provider) Close() error {
	pr.mu.Lock()
	id, gen := pr.id, pr.gen
	already := pr.closed
	pr.closed = true
	pr.mu.Unlock()
	if already || id == "" {
		return nil
	}
	pr.client.mu.Lock()
	p := pr.client.proc
	pr.client.mu.Unlock()
	if p == nil || p.gen != gen || !p.alive() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := p.rpc.Release(ctx, &pluginv1.ReleaseRequest{InstanceId: id}); err != nil {
		return fmt.Errorf("tool %s: release: %w", pr.decl.Name, err)
	}
	return nil
}

// withCallTimeout bounds ctx by d, when d is set and ctx has no sooner deadline.
func withCallTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// callTimeout returns the declaration without its timeout argument (Options.TimeoutArg), and
// the timeout of its calls.
func (c *Client) callTimeout(d tool.Declaration) (tool.Declaration, time.Duration, error) {
	timeout := c.opts.CallTimeout
	name := c.opts.TimeoutArg
	v, ok := d.Named[name]
	if name == "" || !ok {
		return d, timeout, nil
	}
	ms, isNum := v.(float64)
	if n, isInt := v.(int); isInt {
		ms, isNum = float64(n), true
	}
	if !isNum || ms <= 0 || ms > float64(24*time.Hour/time.Millisecond) {
		return d, 0, tool.Errorf(tool.CodeToolConfig, "tool %s: %s must be a number of milliseconds, above 0 and at most a day (got %v)", d.Name, name, v)
	}
	named := make(map[string]any, len(d.Named)-1)
	for k, val := range d.Named {
		if k != name {
			named[k] = val
		}
	}
	d.Named = named
	return d, time.Duration(ms * float64(time.Millisecond)), nil
}

// timeoutHint says how a declaration changes its call timeout, when it can.
func (c *Client) timeoutHint() string {
	if c.opts.TimeoutArg == "" {
		return ""
	}
	return fmt.Sprintf(" (set %s: on the declaration to allow more)", c.opts.TimeoutArg)
}
