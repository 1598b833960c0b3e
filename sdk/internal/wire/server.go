package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"

	pluginv1 "github.com/halo-lang/halo/proto/halo/plugin/v1"
)

// Stable codes a plugin answers with; they match the host's tool error codes.
const (
	CodeToolError     = "TOOL_ERROR"
	CodeToolArgument  = "TOOL_ARGUMENT"
	CodeToolConfig    = "TOOL_CONFIG"
	CodeUnknownMethod = "TOOL_UNKNOWN_METHOD"
)

// Server implements PluginService over a fixed set of providers.
type Server struct {
	pluginv1.UnimplementedPluginServiceServer

	logger    hclog.Logger
	providers map[string]*Provider
	order     []string
	nextID    atomic.Uint64

	mu        sync.RWMutex
	instances map[string]*instance
}

type instance struct {
	provider *Provider
	tool     string
	state    any
	methods  map[string]*Method
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
	inst := &instance{provider: p, tool: d.Tool, methods: map[string]*Method{}}
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
	out := &pluginv1.ConfigureResponse{}
	if offered == nil {
		for i := range p.Methods {
			inst.methods[p.Methods[i].Name] = &p.Methods[i]
		}
	} else {
		for _, name := range offered {
			m := findMethod(p, name)
			if m == nil {
				return &pluginv1.ConfigureResponse{Error: fmt.Sprintf("provider %s offers method %s, which it does not define", p.Name, name)}, nil
			}
			inst.methods[name] = m
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

// Call runs one method and streams its progress and outcome.
func (s *Server) Call(req *pluginv1.CallRequest, stream pluginv1.PluginService_CallServer) error {
	s.mu.RLock()
	inst, ok := s.instances[req.GetInstanceId()]
	s.mu.RUnlock()
	if !ok {
		return stream.Send(errorResponse(CodeToolConfig, "no configured tool with id "+strconv.Quote(req.GetInstanceId())+"; the plugin may have restarted"))
	}
	m, ok := inst.methods[req.GetMethod()]
	if !ok {
		return stream.Send(errorResponse(CodeUnknownMethod, fmt.Sprintf("%s has no method %q", inst.tool, req.GetMethod())))
	}
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
	info := &CallInfo{
		Ctx:    ctx,
		State:  inst.state,
		Tool:   inst.tool,
		Method: m.Name,
		Logger: s.logger.Named(inst.provider.Name).With("tool", inst.tool, "method", m.Name),
		Progress: func(filled, total float64, message string) {
			if ctx.Err() != nil {
				return
			}
			_ = send(&pluginv1.CallResponse{Event: &pluginv1.CallResponse_Progress{Progress: &pluginv1.Progress{Filled: filled, Total: total, Message: message}}}, false)
		},
	}
	args := req.GetArgs()
	if len(args) == 0 {
		args = []byte("{}")
	}
	result, err := run(m, info, args)
	if ctx.Err() != nil {
		// The host gave up on the call; nobody reads an outcome.
		return ctx.Err()
	}
	return send(Outcome(result, err, info.Logger), true)
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
