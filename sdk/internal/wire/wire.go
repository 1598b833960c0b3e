// Package wire owns the SDK's side of the gRPC contract: the PluginService server that runs
// an author's providers, the go-plugin plugin that registers it, and the coded outcomes a
// method can end with. The generated protobuf types stop here; the public sdk package and
// sdktest see only the plain Go types below.
package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// A Provider is one provider type as the server runs it.
type Provider struct {
	Name        string
	Description string
	Methods     []Method
	// Configure checks a declaration and returns the instance's state and the names of the
	// methods it offers (nil: all). Nil Configure accepts any declaration.
	Configure func(ctx context.Context, d Declaration) (state any, offered []string, err error)
	// PerRun is sdk.Provider.PerRun: Configure tells the host.
	PerRun bool
}

// A Method is one method as the server runs it.
type Method struct {
	Name         string
	Description  string
	Schema       json.RawMessage
	Effect       string
	PipelineOnly bool
	// Run decodes args and runs the method. Its result is marshalled to JSON.
	Run func(c *CallInfo, args json.RawMessage) (any, error)
}

// A Declaration is one evaluated `tool X : Provider(...)`.
type Declaration struct {
	Tool       string
	Provider   string
	Args       []any
	Named      map[string]any
	ProjectDir string
}

// CallInfo is what a running method can reach beyond its arguments.
type CallInfo struct {
	Ctx      context.Context
	State    any
	Tool     string
	Method   string
	Logger   hclog.Logger
	Progress func(filled, total float64, message string)
	// Scratch is a buffer the SDK may encode the result into, returning it as Encoded; it
	// sets Scratch to the buffer it used (grown, perhaps), which the server reuses once the
	// outcome is sent. Authors' code never sees it.
	Scratch []byte
}

// Encoded is a result already encoded as JSON, by a method that knows its result's type: the
// server sends it as it is.
type Encoded []byte

// Failure is a domain failure: a result the model reads.
type Failure struct {
	Message string
	Detail  json.RawMessage
}

func (f *Failure) Error() string { return f.Message }

// RetryError is a transient failure.
type RetryError struct {
	Message string
	After   time.Duration
}

func (r *RetryError) Error() string { return r.Message }

// CodedError is a fatal failure with a stable code.
type CodedError struct {
	Code    string
	Message string
}

func (e *CodedError) Error() string { return e.Message }

// ErrorCode returns the stable code.
func (e *CodedError) ErrorCode() string { return e.Code }

// Plugin is the go-plugin GRPCPlugin that serves a set of providers. Its client side returns
// the generated client, which sdktest uses.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Providers []Provider
	Logger    hclog.Logger
	// SocketDir and Token enable calls sockets (Server.EnableCallsSocket): sdk.Serve sets
	// them from what the host handed the process.
	SocketDir, Token string

	// server is the server GRPCServer made, for tests.
	server *Server
}

// GRPCServer registers the PluginService.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	srv, err := NewServer(p.Providers, p.Logger)
	if err != nil {
		return err
	}
	if p.SocketDir != "" {
		srv.EnableCallsSocket(p.SocketDir, p.Token)
	}
	p.server = srv
	pluginv1.RegisterPluginServiceServer(s, srv)
	return nil
}

// GRPCClient returns a pluginv1.PluginServiceClient.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginv1.NewPluginServiceClient(c), nil
}

// ErrorOf formats a panic value or error for a fatal outcome.
func ErrorOf(v any) string { return fmt.Sprint(v) }

// windowSize is the gRPC flow-control window, per stream and per connection. gRPC's default
// (64 KB, grown by bandwidth-delay probing) sends window updates and BDP pings around the calls
// of a busy stream; a fixed window of 1 MB lets calls of up to a few hundred KB go through
// without either, and bounds what a host that stops reading can make the plugin buffer.
const windowSize = 1 << 20

// NewGRPCServer makes the plugin's gRPC server, with go-plugin's options (opts) and those the
// call path wants. It is the ServeConfig.GRPCServer of sdk.Serve.
//
// The message size limit is lifted as go-plugin lifts it on the host's side: the host is
// trusted, and on the Calls stream a message over gRPC's default 4 MB would not fail one call
// but end the stream, and with it every call in flight.
func NewGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts,
		grpc.InitialWindowSize(windowSize),
		grpc.InitialConnWindowSize(windowSize),
		grpc.MaxRecvMsgSize(math.MaxInt32),
	)...)
}
