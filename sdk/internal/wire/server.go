package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// Stable codes a plugin answers with; they match the host's tool error codes.
const (
	CodeToolError     = "TOOL_ERROR"
	CodeToolArgument  = "TOOL_ARGUMENT"
	CodeToolConfig    = "TOOL_CONFIG"
	CodeUnknownMethod = "TOOL_UNKNOWN_METHOD"
	// CodeLimit: the result is larger than the declaration allows (max_result_bytes:).
	CodeLimit = "TOOL_LIMIT"
)

// MaxResultMetadata is the metadata key of a Configure request that carries the
// declaration's result limit in bytes; the host (host/tool/plugin) sends it.
const MaxResultMetadata = "halo-max-result-bytes"

// DefaultMaxResultBytes is the result limit of a declaration whose Configure carried none
// (an older host): the host's default.
const DefaultMaxResultBytes = 16 << 20

// Server implements PluginService over a fixed set of providers.
type Server struct {
	pluginv1.UnimplementedPluginServiceServer

	logger    hclog.Logger
	providers map[string]*Provider
	order     []string
	nextID    atomic.Uint64

	mu        sync.RWMutex
	instances map[string]*instance

	// socketDir is where calls sockets are made (PLUGIN_UNIX_SOCKET_DIR), and token the
	// secret the host sends first on one; with no socketDir, OpenCallsSocket is UNIMPLEMENTED.
	socketDir, token string
	// sockets counts the goroutines that accept and serve calls sockets.
	sockets sync.WaitGroup
	// scratch holds *[]byte buffers that methods encode results into (CallInfo.Scratch).
	scratch sync.Pool
}

type instance struct {
	tool    string
	state   any
	methods map[string]*boundMethod
	// maxResult is the largest result, in bytes, the host takes for this declaration. A
	// larger one is answered with a TOOL_LIMIT error instead: sent, it would go over the
	// host's limit on messages, which breaks the stream and every call on it.
	maxResult int
}

// boundMethod is a method as one instance offers it, with the logger its calls get: made once
// at Configure, because building a named logger with fields on every call showed in profiles.
type boundMethod struct {
	*Method
	logger hclog.Logger
	// took is a moving average of how long its calls run, in nanoseconds: a calls socket
	// runs the calls of a quick method on the goroutine that read them (socket.go).
	took atomic.Int64
}

// method returns the method a call names, or nil when it names none (the call's outcome is
// then an error, quickly).
func (s *Server) method(req *pluginv1.CallRequest) *boundMethod {
	s.mu.RLock()
	inst, ok := s.instances[req.GetInstanceId()]
	s.mu.RUnlock()
	if !ok {
		return nil
	}
	return inst.methods[req.GetMethod()]
}

// ran adds a call that took d to the method's average.
func (m *boundMethod) ran(d time.Duration) {
	old := m.took.Load()
	m.took.Store(old - old/4 + int64(d)/4)
}

// NewServer checks the providers (unique names, unique method names) and returns a server.
func NewServer(providers []Provider, logger hclog.Logger) (*Server, error) {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	s := &Server{logger: logger, providers: map[string]*Provider{}, instances: map[string]*instance{}}
	if len(providers) == 0 {
		return nil, errors.New("a plugin serves at least one provider")
	}
	for i := range providers {
		p := &providers[i]
		if p.Name == "" {
			return nil, errors.New("a provider needs a name")
		}
		if _, dup := s.providers[p.Name]; dup {
			return nil, fmt.Errorf("provider %s is served twice", p.Name)
		}
		seen := map[string]bool{}
		for _, m := range p.Methods {
			if m.Name == "" || m.Run == nil {
				return nil, fmt.Errorf("provider %s: a method needs a name and a function (use sdk.NewMethod)", p.Name)
			}
			if seen[m.Name] {
				return nil, fmt.Errorf("provider %s: method %s is defined twice", p.Name, m.Name)
			}
			seen[m.Name] = true
		}
		s.providers[p.Name] = p
		s.order = append(s.order, p.Name)
	}
	return s, nil
}

// Describe lists the providers.
func (s *Server) Describe(context.Context, *pluginv1.DescribeRequest) (*pluginv1.DescribeResponse, error) {
	out := &pluginv1.DescribeResponse{}
	for _, name := range s.order {
		p := s.providers[name]
		spec := &pluginv1.ProviderSpec{Name: p.Name, Description: p.Description}
		for i := range p.Methods {
			spec.Methods = append(spec.Methods, methodToProto(&p.Methods[i]))
		}
		out.Providers = append(out.Providers, spec)
	}
	return out, nil
}

// Configure makes an instance for one declaration.
func (s *Server) Configure(ctx context.Context, req *pluginv1.ConfigureRequest) (resp *pluginv1.ConfigureResponse, err error) {
	p, ok := s.providers[req.GetProvider()]
	if !ok {
		return &pluginv1.ConfigureResponse{Error: fmt.Sprintf("this plugin serves no provider %q (it serves %v)", req.GetProvider(), s.order)}, nil
	}
	d := Declaration{Tool: req.GetToolName(), Provider: p.Name, ProjectDir: req.GetProjectDir()}
	if b := req.GetArgs(); len(b) > 0 {
		if err := json.Unmarshal(b, &d.Args); err != nil {
			return &pluginv1.ConfigureResponse{Error: "positional arguments are not a JSON array: " + err.Error()}, nil
		}
	}
	if b := req.GetNamedArgs(); len(b) > 0 {
		if err := json.Unmarshal(b, &d.Named); err != nil {
			return &pluginv1.ConfigureResponse{Error: "named arguments are not a JSON object: " + err.Error()}, nil
		}
	}
	if d.Named == nil {
		d.Named = map[string]any{}
	}
	inst := &instance{tool: d.Tool, methods: map[string]*boundMethod{}, maxResult: maxResultOf(ctx)}
	logger := s.logger.Named(p.Name)
	bind := func(m *Method) *boundMethod {
		return &boundMethod{Method: m, logger: logger.With("tool", inst.tool, "method", m.Name)}
	}
	var offered []string
	if p.Configure != nil {
		defer func() {
			if r := recover(); r != nil {
				s.logger.Error("configure panicked", "provider", p.Name, "panic", r, "stack", string(debug.Stack()))
				resp, err = &pluginv1.ConfigureResponse{Error: fmt.Sprintf("configuring %s panicked: %v", p.Name, r)}, nil
			}
		}()
		state, names, cerr := p.Configure(ctx, d)
		if cerr != nil {
			return &pluginv1.ConfigureResponse{Error: cerr.Error()}, nil
		}
		inst.state, offered = state, names
	}
	out := &pluginv1.ConfigureResponse{PerRun: p.PerRun}
	if offered == nil {
		for i := range p.Methods {
			inst.methods[p.Methods[i].Name] = bind(&p.Methods[i])
		}
	} else {
		for _, name := range offered {
			m := findMethod(p, name)
			if m == nil {
				return &pluginv1.ConfigureResponse{Error: fmt.Sprintf("provider %s offers method %s, which it does not define", p.Name, name)}, nil
			}
			inst.methods[name] = bind(m)
			out.Methods = append(out.Methods, methodToProto(m))
		}
	}
	id := strconv.FormatUint(s.nextID.Add(1), 10)
	s.mu.Lock()
	s.instances[id] = inst
	s.mu.Unlock()
	out.InstanceId = id
	return out, nil
}

// maxResultOf reads the result limit the host sent with Configure.
func maxResultOf(ctx context.Context) int {
	md, _ := metadata.FromIncomingContext(ctx)
	if vs := md.Get(MaxResultMetadata); len(vs) > 0 {
		if n, err := strconv.Atoi(vs[0]); err == nil && n > 0 {
			return n
		}
	}
	return DefaultMaxResultBytes
}

func findMethod(p *Provider, name string) *Method {
	for i := range p.Methods {
		if p.Methods[i].Name == name {
			return &p.Methods[i]
		}
	}
	return nil
}

// Release forgets an instance.
func (s *Server) Release(_ context.Context, req *pluginv1.ReleaseRequest) (*pluginv1.ReleaseResponse, error) {
	s.mu.Lock()
	delete(s.instances, req.GetInstanceId())
	s.mu.Unlock()
	return &pluginv1.ReleaseResponse{}, nil
}

// Call runs one call on a stream of its own: the contract's older form, which a host uses
// only when the plugin does not serve Calls (an older host).
func (s *Server) Call(req *pluginv1.CallRequest, stream pluginv1.PluginService_CallServer) error {
	// Progress may come from goroutines the method started; after the outcome (or after the
	// handler returns) nothing may be sent on the stream.
	var sendMu sync.Mutex
	done := false
	send := func(r *pluginv1.CallResponse, last bool) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		if done {
			return nil
		}
		done = last
		return stream.Send(r)
	}
	defer func() {
		sendMu.Lock()
		done = true
		sendMu.Unlock()
	}()
	ctx := stream.Context()
	// gRPC may keep a message it sent for a while: the result's buffer is not reused.
	out, _ := s.call(ctx, req, func(r *pluginv1.CallResponse) { _ = send(r, false) })
	if out == nil {
		// The host gave up on the call; nobody reads an outcome.
		return ctx.Err()
	}
	return send(out, true)
}

// Calls serves the long-lived stream that carries every call of a host, each message tagged
// with its call id (plugin.proto, "Calls", has the rules). Each call runs on a goroutine of
// its own (a worker), so a slow one holds up nobody; this loop only reads, starts and
// cancels.
func (s *Server) Calls(stream pluginv1.PluginService_CallsServer) error {
	return s.serveCalls(stream.Context(), stream)
}

// callsTransport carries a Calls stream's messages: the gRPC stream, or a calls socket.
type callsTransport interface {
	Send(*pluginv1.CallsResponse) error
	Recv() (*pluginv1.CallsRequest, error)
}

// serveCalls serves the calls that arrive on t until the host closes its side (nil) or t
// breaks or the host breaks the rules (an error).
func (s *Server) serveCalls(ctx context.Context, t callsTransport) error {
	cs := &callStream{server: s, stream: t, calls: map[uint64]*streamCall{}, workers: newWorkers()}
	defer cs.end()
	for {
		req, err := t.Recv()
		if errors.Is(err, io.EOF) {
			// The host closed its side: it waits for nothing more on this stream.
			return nil
		}
		if err != nil {
			return err
		}
		switch kind := req.GetKind().(type) {
		case *pluginv1.CallsRequest_Call:
			if err := cs.start(ctx, req.GetCallId(), kind.Call); err != nil {
				return err
			}
		case *pluginv1.CallsRequest_Cancel:
			if req.GetCallId() == 0 {
				return status.Error(codes.InvalidArgument, "a cancel with call id 0")
			}
			cs.cancel(req.GetCallId())
		default:
			// A kind of message a newer host added; this plugin has nothing to do with it.
		}
	}
}

// callStream is one Calls stream: the calls running on it, and its sending side.
type callStream struct {
	server *Server
	stream callsTransport

	mu    sync.Mutex // guards calls
	calls map[uint64]*streamCall

	// workers run the calls; the handler waits for them before it returns.
	workers *workers

	// sendMu serialises sends (gRPC allows one sender at a time) and guards ended and each
	// call's done, so that nothing of a call follows its outcome and nothing at all follows
	// the handler's return. It is not mu: a send blocked on flow control must not stop the
	// reading loop from starting and cancelling calls.
	sendMu sync.Mutex
	ended  bool
}

// streamCall is one call running on a callStream.
type streamCall struct {
	cancel context.CancelFunc
	done   bool // its outcome was sent; guarded by callStream.sendMu
}

func (cs *callStream) start(ctx context.Context, id uint64, req *pluginv1.CallRequest) error {
	ctx, c, err := cs.register(ctx, id)
	if err != nil {
		return err
	}
	cs.workers.run(func() { cs.run(ctx, id, c, req) })
	return nil
}

// register adds the call id to the running calls, with a context of its own.
func (cs *callStream) register(ctx context.Context, id uint64) (context.Context, *streamCall, error) {
	if id == 0 {
		return nil, nil, status.Error(codes.InvalidArgument, "a call with call id 0")
	}
	ctx, cancel := context.WithCancel(ctx)
	c := &streamCall{cancel: cancel}
	cs.mu.Lock()
	if _, dup := cs.calls[id]; dup {
		cs.mu.Unlock()
		cancel()
		return nil, nil, status.Errorf(codes.InvalidArgument, "call id %d is already running", id)
	}
	cs.calls[id] = c
	cs.mu.Unlock()
	return ctx, c, nil
}

func (cs *callStream) run(ctx context.Context, id uint64, c *streamCall, req *pluginv1.CallRequest) {
	defer func() {
		cs.mu.Lock()
		delete(cs.calls, id)
		cs.mu.Unlock()
		c.cancel()
	}()
	out, release := cs.server.call(ctx, req, func(r *pluginv1.CallResponse) { cs.send(id, c, r, false) })
	if out != nil {
		cs.send(id, c, out, true)
	}
	if _, socket := cs.stream.(*socketTransport); socket {
		// A calls socket copied the outcome into its frame: the result's buffer is free.
		// (gRPC may keep a message it sent for a while.)
		release()
	}
}

func (cs *callStream) send(id uint64, c *streamCall, r *pluginv1.CallResponse, last bool) {
	cs.sendMu.Lock()
	defer cs.sendMu.Unlock()
	if cs.ended || c.done {
		return
	}
	c.done = last
	if err := cs.stream.Send(&pluginv1.CallsResponse{CallId: id, Event: r}); err != nil {
		// The stream is broken. The reading loop sees it as well and ends the handler, which
		// cancels every call; until then, sending more is pointless.
		cs.ended = true
		cs.server.logger.Debug("calls stream broken", "error", err)
	}
}

func (cs *callStream) cancel(id uint64) {
	cs.mu.Lock()
	c := cs.calls[id]
	cs.mu.Unlock()
	if c != nil {
		c.cancel()
	}
}

// end runs when the handler returns: gRPC forbids sending after that, and every call still
// running has lost the stream its outcome would go to.
func (cs *callStream) end() {
	cs.sendMu.Lock()
	cs.ended = true
	cs.sendMu.Unlock()
	cs.mu.Lock()
	for _, c := range cs.calls {
		c.cancel()
	}
	cs.mu.Unlock()
	cs.workers.stop()
}

// workers runs calls on goroutines that stay for the next one. A goroutine per call would
// start each call on a small stack and grow it (morestack, copystack: a few percent of a
// small call's CPU in the plugin); a worker keeps the stack its last call grew.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only when a worker waits
	idle atomic.Int32
	// done is closed by stop: idle workers end, busy ones end after their call.
	done chan struct{}
	wg   sync.WaitGroup
}

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), done: make(chan struct{})}
}

// maxIdleWorkers is how many workers wait for calls at most; more, left by a burst of
// concurrent calls, end.
const maxIdleWorkers = 4

func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		w.wg.Add(1)
		go w.work(job)
	}
}

func (w *workers) work(job func()) {
	defer w.wg.Done()
	for {
		job()
		if w.idle.Add(1) > maxIdleWorkers {
			w.idle.Add(-1)
			return
		}
		select {
		case job = <-w.jobs:
			w.idle.Add(-1)
		case <-w.done:
			return
		}
	}
}

// stop ends the workers and waits for them, and so for the calls they run. The caller has
// cancelled those calls and starts no more.
func (w *workers) stop() {
	close(w.done)
	w.wg.Wait()
}

// emptyArgs stands for arguments the host left empty.
var emptyArgs = json.RawMessage("{}")

// call runs one call and returns its outcome, or nil when ctx ended first (the host gave up on
// the call, and nobody reads its outcome). progress sends a progress event; the method may
// call it from any goroutine, and the caller drops what comes after the outcome.
//
// The method may encode its result into a buffer the server lends it (CallInfo.Scratch);
// release gives the buffer back, once the outcome has been copied out.
func (s *Server) call(ctx context.Context, req *pluginv1.CallRequest, progress func(*pluginv1.CallResponse)) (out *pluginv1.CallResponse, release func()) {
	release = func() {}
	s.mu.RLock()
	inst, ok := s.instances[req.GetInstanceId()]
	s.mu.RUnlock()
	if !ok {
		return errorResponse(CodeToolConfig, "no configured tool with id "+strconv.Quote(req.GetInstanceId())+"; the plugin may have restarted"), release
	}
	m, ok := inst.methods[req.GetMethod()]
	if !ok {
		return errorResponse(CodeUnknownMethod, fmt.Sprintf("%s has no method %q", inst.tool, req.GetMethod())), release
	}
	buf, _ := s.scratch.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	info := &CallInfo{
		Scratch: (*buf)[:0],
		Ctx:     ctx,
		State:   inst.state,
		Tool:    inst.tool,
		Method:  m.Name,
		Logger:  m.logger,
		Progress: func(filled, total float64, message string) {
			if ctx.Err() != nil {
				return
			}
			progress(&pluginv1.CallResponse{Event: &pluginv1.CallResponse_Progress{Progress: &pluginv1.Progress{Filled: filled, Total: total, Message: message}}})
		},
	}
	args := req.GetArgs()
	if len(args) == 0 {
		args = emptyArgs
	}
	result, err := run(m.Method, info, args)
	release = func() {
		if cap(info.Scratch) <= pluginv1.KeepBuffer {
			*buf = info.Scratch[:0]
			s.scratch.Put(buf)
		}
	}
	if ctx.Err() != nil {
		return nil, release
	}
	out = Outcome(result, err, info.Logger)
	if n := outcomeSize(out); n > inst.maxResult {
		return errorResponse(CodeLimit, fmt.Sprintf("%s.%s: the result is %d bytes, over the limit of %d this declaration allows (max_result_bytes: raises it)", inst.tool, m.Name, n, inst.maxResult)), release
	}
	return out, release
}

// outcomeSize is the size of what an outcome carries for the model: a result's JSON, a
// failure's detail.
func outcomeSize(out *pluginv1.CallResponse) int {
	switch ev := out.GetEvent().(type) {
	case *pluginv1.CallResponse_Result:
		return len(ev.Result.GetJson())
	case *pluginv1.CallResponse_Failure:
		return len(ev.Failure.GetDetail()) + len(ev.Failure.GetMessage())
	}
	return 0
}

func run(m *Method, info *CallInfo, args json.RawMessage) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			info.Logger.Error("method panicked", "panic", r, "stack", string(debug.Stack()))
			err = &CodedError{Code: CodeToolError, Message: fmt.Sprintf("%s.%s panicked: %v", info.Tool, m.Name, r)}
		}
	}()
	return m.Run(info, args)
}

// Outcome turns a method's return values into the stream's last message.
func Outcome(result any, err error, logger hclog.Logger) *pluginv1.CallResponse {
	if err != nil {
		var f *Failure
		var r *RetryError
		var c *CodedError
		switch {
		case errors.As(err, &f):
			return &pluginv1.CallResponse{Event: &pluginv1.CallResponse_Failure{Failure: &pluginv1.Failure{Message: f.Message, Detail: f.Detail}}}
		case errors.As(err, &r):
			return &pluginv1.CallResponse{Event: &pluginv1.CallResponse_Retry{Retry: &pluginv1.Retry{Message: r.Message, RetryAfterMs: r.After.Milliseconds()}}}
		case errors.As(err, &c):
			return errorResponse(c.Code, err.Error())
		default:
			return errorResponse(CodeToolError, err.Error())
		}
	}
	if enc, ok := result.(Encoded); ok {
		return &pluginv1.CallResponse{Event: &pluginv1.CallResponse_Result{Result: &pluginv1.Result{Json: enc}}}
	}
	b, merr := json.Marshal(result)
	if merr != nil {
		logger.Error("result is not JSON", "error", merr)
		return errorResponse(CodeToolError, "the result cannot be encoded as JSON: "+merr.Error())
	}
	return &pluginv1.CallResponse{Event: &pluginv1.CallResponse_Result{Result: &pluginv1.Result{Json: b}}}
}

func errorResponse(code, msg string) *pluginv1.CallResponse {
	return &pluginv1.CallResponse{Event: &pluginv1.CallResponse_Error{Error: &pluginv1.Error{Code: code, Message: msg}}}
}

func methodToProto(m *Method) *pluginv1.Method {
	return &pluginv1.Method{
		Name:         m.Name,
		Description:  m.Description,
		ParamsSchema: m.Schema,
		Effect:       EffectToProto(m.Effect),
		PipelineOnly: m.PipelineOnly,
	}
}

// EffectToProto maps "read", "write", "external" to the enum; anything else is unspecified.
func EffectToProto(e string) pluginv1.Effect {
	switch e {
	case "read":
		return pluginv1.Effect_EFFECT_READ
	case "write":
		return pluginv1.Effect_EFFECT_WRITE
	case "external":
		return pluginv1.Effect_EFFECT_EXTERNAL
	}
	return pluginv1.Effect_EFFECT_UNSPECIFIED
}

// EffectFromProto maps the enum back; unspecified is "external", the safe default.
func EffectFromProto(e pluginv1.Effect) string {
	switch e {
	case pluginv1.Effect_EFFECT_READ:
		return "read"
	case pluginv1.Effect_EFFECT_WRITE:
		return "write"
	}
	return "external"
}
