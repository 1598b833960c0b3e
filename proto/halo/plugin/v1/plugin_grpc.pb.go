// The contract between the Halo host and a tool-provider plugin, version 1.
//
// This file is the specification for plugin authors in every language. A Go author uses the
// SDK (halolang.dev/halo/sdk) and never sees these messages; an author in another
// language implements PluginService over gRPC and the go-plugin handshake described below.
//
// # Process and handshake
//
// The host starts the plugin executable with a clean environment: PATH, HOME, the variables
// the declaration or the package manifest names, and the go-plugin variables. The plugin's
// standard input is /dev/null. Before serving, a plugin checks the magic cookie: the variable
// HALO_PLUGIN_MAGIC_COOKIE must hold
// "7c1d2f0e-halo-plugin-8a4b6e93"; if it does not, the program was not started by a Halo
// host and should print a short explanation to stderr and exit with status 1.
//
// The host sets PLUGIN_PROTOCOL_VERSIONS to the comma-separated application protocol versions
// it speaks (this file is version 1). The plugin picks the highest version both sides speak,
// listens on a Unix socket inside the folder named by PLUGIN_UNIX_SOCKET_DIR (a folder only
// the host's user can enter, removed when the plugin ends), and writes exactly one line to
// standard output:
//
//	1|<app protocol version>|unix|<socket path>|grpc|
//
// The first field is go-plugin's core protocol version (always 1). After that line, the plugin
// never writes to standard output again. A host that does not speak the plugin's version
// refuses it with an error naming both versions (a newer plugin needs a newer Halo). Log lines
// go to standard error, one JSON object per line in hclog's format
// ({"@level":"info","@message":"...","@timestamp":"...", ...}); the host re-logs them under the
// provider's name. Plain text lines on standard error are logged at debug level.
//
// # Authentication
//
// The host hands every plugin process a secret of its own in the variable HALO_PLUGIN_TOKEN
// (64 hexadecimal digits) and sends it with every RPC it makes on the connection, of every
// service, as the gRPC metadata "halo-plugin-token". A plugin must answer any RPC whose
// metadata does not hold exactly that value with the status UNAUTHENTICATED, and should
// compare in constant time: its socket may be reachable by other processes of the same user
// (another plugin finds its path in /proc/net/unix), and nothing else stops them from
// configuring and calling it. It should also remove the variable from its environment before
// it starts any program. The host, for its part, connects only to a socket the plugin process
// itself listens on, inside the folder PLUGIN_UNIX_SOCKET_DIR names; it refuses any other
// address in the handshake line.
//
// The plugin must also serve go-plugin's standard services on the same gRPC server:
// plugin.GRPCController (Shutdown), plugin.GRPCStdio and grpc.health.v1.Health, with the
// service name "plugin" reported as SERVING. A plugin exits when Shutdown is called or when
// its parent dies.
//
// # Lifecycle
//
// One plugin process can serve several providers, and several configured instances of each:
// the host calls Describe once, then Configure once per `tool X : Provider(...)` declaration,
// then runs calls, any number and concurrently, with the instance id Configure returned.
//
// # Calls
//
// A call is one CallRequest answered by zero or more progress events and then exactly one
// outcome (a CallResponse holding result, failure, retry or error). The host runs calls over
// the Calls stream: one long-lived bidirectional stream per plugin process that carries every
// call, each message tagged with the call id the host chose. A call then costs one message
// each way on a stream that is already open; a stream per call also costs the stream's
// set-up, headers and trailers on both sides, which made a small call take 1.2 to 1.3 times
// the time and CPU (host/tool/plugin's BenchmarkRoundTrip; docs/plugins.md, "Performance").
//
// The older Call RPC runs one call on a stream of its own, with the same messages. A plugin
// must serve Call, and should serve Calls: a host opens Calls first and, when the plugin
// answers it with the gRPC status UNIMPLEMENTED (what a gRPC server answers for a method it
// does not have) before sending anything, sends every call of that process through Call
// instead. A plugin that serves only Call is slower, not wrong.
//
// On the Calls stream:
//
//   - The host opens the stream when it has the first call to run, and keeps it open for as
//     long as the plugin process runs. A plugin must accept any number of Calls streams at a
//     time; call ids belong to their stream.
//   - To start a call, the host sends a CallsRequest with a new call_id (not 0, never reused
//     on the stream) and the call. The plugin runs calls concurrently and keeps reading the
//     stream while they run: a slow call must not hold up the others, nor a cancellation.
//   - The plugin accepts messages of any size: a limit on received messages (gRPC's default
//     is 4 MB) would end the stream, and every call on it, at the first large argument.
//   - For each call, the plugin sends CallsResponse messages with the same call_id: any
//     number of progress events, then exactly one outcome, after which it sends nothing more
//     with that call_id. Messages of different calls interleave in any order. Progress is
//     advisory: when a caller takes events slower than the plugin sends them, the host keeps
//     the latest ones and drops some in between.
//   - To cancel a call (the caller's deadline passed, the user stopped the run), the host
//     sends a CallsRequest with the call's call_id and cancel set, and forgets the call at
//     once: anything the plugin still sends for it is ignored. The plugin cancels the call's
//     work and may send its outcome or nothing. A cancel for a call that already ended, or
//     for an id the plugin does not know, is ignored.
//   - A message with a call_id of 0, or a new call with an id already running, is a broken
//     host: the plugin ends the stream with the status INVALID_ARGUMENT. A CallsRequest with
//     neither call nor cancel set (a kind of message a newer host added) is ignored.
//   - An error of one call is that call's outcome (an Error event), never a gRPC status: a
//     status ends the stream. The plugin ends the stream only when the host closes its
//     sending side: it then cancels the calls still running and ends the stream with OK.
//   - When the stream ends, for any reason (the connection breaks, either process dies, the
//     plugin ends it), every call still running on it is lost: the plugin cancels them, and
//     the host reports each as TOOL_CRASHED, stops the plugin process and starts a new one
//     for the next call (which configures its declarations again).
//
// # The calls socket
//
// gRPC hands every message between goroutines several times on each side (a stream's
// reader, its writer, the handler), and on a small call those hand-offs cost more than the
// call itself: a 1 KB round trip on the Calls stream took 3 to 4 times what the same bytes
// take over a bare Unix socket. So a host first asks for a calls socket, which carries the
// Calls stream's messages, with the Calls stream's rules, on a connection of its own with no
// gRPC in between:
//
//   - The host calls OpenCallsSocket when it has the first call to run. The plugin listens on
//     a new Unix socket directly inside the folder PLUGIN_UNIX_SOCKET_DIR names (beside its
//     gRPC socket), answers with its path, and accepts one connection on it. A plugin that
//     does not serve OpenCallsSocket (UNIMPLEMENTED) is called on the Calls stream.
//   - The host connects, checks that the plugin process is the one listening (as it does for
//     the gRPC socket), and sends the connection's secret (TokenEnv) as the first frame; the
//     bytes are empty when the process got no secret. The plugin closes a connection whose
//     first frame is not the secret, compared in constant time, and keeps listening; it
//     answers the right secret with an empty frame, stops listening and removes the socket.
//     It stops listening as well when no connection sends the secret within 10 seconds, and
//     the host, which waits 5 seconds for the answer, then uses the Calls stream.
//   - A frame is a 4-byte big-endian length followed by that many bytes. After the secret,
//     each frame from the host holds one CallsRequest, and each frame from the plugin one
//     CallsResponse, in protobuf's binary encoding. The plugin accepts frames of any size;
//     the host refuses a frame over its limit on results (max_result_bytes: and an
//     envelope), which ends the socket and every call on it, as an oversized message ends
//     the Calls stream.
//   - The socket ends when the host closes it (the plugin then cancels the calls still
//     running) or when either process dies, with what the end of a Calls stream means.
//   - A plugin may run a call on the thread that reads the socket, which saves a hand-off
//     between threads on every small call, as long as a call that runs long does not hold up
//     the calls behind it, or its cancellation, for more than a moment: the Go SDK hands the
//     reading to another goroutine after 20 ms, and runs the calls of methods that usually
//     take longer than 200 µs apart from the start.

// Code generated by protoc-gen-go-grpc. DO NOT EDIT.
// versions:
// - protoc-gen-go-grpc v1.6.2
// - protoc             (unknown)
// source: halo/plugin/v1/plugin.proto

package pluginv1

import (
	context "context"
	grpc "google.golang.org/grpc"
	codes "google.golang.org/grpc/codes"
	status "google.golang.org/grpc/status"
)

// This is a compile-time assertion to ensure that this generated file
// is compatible with the grpc package it is being compiled against.
// Requires gRPC-Go v1.64.0 or later.
const _ = grpc.SupportPackageIsVersion9

const (
	PluginService_Describe_FullMethodName        = "/halo.plugin.v1.PluginService/Describe"
	PluginService_Configure_FullMethodName       = "/halo.plugin.v1.PluginService/Configure"
	PluginService_Call_FullMethodName            = "/halo.plugin.v1.PluginService/Call"
	PluginService_Calls_FullMethodName           = "/halo.plugin.v1.PluginService/Calls"
	PluginService_Release_FullMethodName         = "/halo.plugin.v1.PluginService/Release"
	PluginService_OpenCallsSocket_FullMethodName = "/halo.plugin.v1.PluginService/OpenCallsSocket"
)

// PluginServiceClient is the client API for PluginService service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// PluginService is what a plugin process serves to the host.
type PluginServiceClient interface {
	// Describe lists the providers the plugin serves, with every method each one can offer.
	// The host calls it after the handshake, and `halo tools` shows what it returns.
	Describe(ctx context.Context, in *DescribeRequest, opts ...grpc.CallOption) (*DescribeResponse, error)
	// Configure checks one declaration's arguments and returns an instance id for Call, and the
	// methods that configuration offers (a subset of the described ones: a read-only workspace
	// hides its writing methods). A bad argument is reported in the response, not as an RPC error.
	Configure(ctx context.Context, in *ConfigureRequest, opts ...grpc.CallOption) (*ConfigureResponse, error)
	// Call runs one method of a configured instance on a stream of its own. The plugin streams
	// zero or more progress events, then exactly one outcome, then ends the stream. Cancelling
	// the RPC cancels the call: the plugin must stop the work and may end the stream without an
	// outcome. A host uses Call only with a plugin that does not serve Calls.
	Call(ctx context.Context, in *CallRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[CallResponse], error)
	// Calls runs any number of calls, concurrently, on one long-lived stream: the host sends
	// calls and cancellations, the plugin sends each call's progress and outcome, every message
	// tagged with its call id. "Calls" at the top of this file gives the rules.
	Calls(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[CallsRequest, CallsResponse], error)
	// Release forgets a configured instance; the host calls it when a declaration's tool is
	// closed. Releasing an unknown instance is not an error.
	Release(ctx context.Context, in *ReleaseRequest, opts ...grpc.CallOption) (*ReleaseResponse, error)
	// OpenCallsSocket asks the plugin for a calls socket: a Unix socket that carries the Calls
	// stream's messages without gRPC. "The calls socket" at the top of this file gives the
	// rules.
	OpenCallsSocket(ctx context.Context, in *OpenCallsSocketRequest, opts ...grpc.CallOption) (*OpenCallsSocketResponse, error)
}

type pluginServiceClient struct {
	cc grpc.ClientConnInterface
}

func NewPluginServiceClient(cc grpc.ClientConnInterface) PluginServiceClient {
	return &pluginServiceClient{cc}
}

func (c *pluginServiceClient) Describe(ctx context.Context, in *DescribeRequest, opts ...grpc.CallOption) (*DescribeResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DescribeResponse)
	err := c.cc.Invoke(ctx, PluginService_Describe_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Configure(ctx context.Context, in *ConfigureRequest, opts ...grpc.CallOption) (*ConfigureResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ConfigureResponse)
	err := c.cc.Invoke(ctx, PluginService_Configure_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) Call(ctx context.Context, in *CallRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[CallResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &PluginService_ServiceDesc.Streams[0], PluginService_Call_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[CallRequest, CallResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type PluginService_CallClient = grpc.ServerStreamingClient[CallResponse]

func (c *pluginServiceClient) Calls(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[CallsRequest, CallsResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &PluginService_ServiceDesc.Streams[1], PluginService_Calls_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[CallsRequest, CallsResponse]{ClientStream: stream}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type PluginService_CallsClient = grpc.BidiStreamingClient[CallsRequest, CallsResponse]

func (c *pluginServiceClient) Release(ctx context.Context, in *ReleaseRequest, opts ...grpc.CallOption) (*ReleaseResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ReleaseResponse)
	err := c.cc.Invoke(ctx, PluginService_Release_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *pluginServiceClient) OpenCallsSocket(ctx context.Context, in *OpenCallsSocketRequest, opts ...grpc.CallOption) (*OpenCallsSocketResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(OpenCallsSocketResponse)
	err := c.cc.Invoke(ctx, PluginService_OpenCallsSocket_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PluginServiceServer is the server API for PluginService service.
// All implementations must embed UnimplementedPluginServiceServer
// for forward compatibility.
//
// PluginService is what a plugin process serves to the host.
type PluginServiceServer interface {
	// Describe lists the providers the plugin serves, with every method each one can offer.
	// The host calls it after the handshake, and `halo tools` shows what it returns.
	Describe(context.Context, *DescribeRequest) (*DescribeResponse, error)
	// Configure checks one declaration's arguments and returns an instance id for Call, and the
	// methods that configuration offers (a subset of the described ones: a read-only workspace
	// hides its writing methods). A bad argument is reported in the response, not as an RPC error.
	Configure(context.Context, *ConfigureRequest) (*ConfigureResponse, error)
	// Call runs one method of a configured instance on a stream of its own. The plugin streams
	// zero or more progress events, then exactly one outcome, then ends the stream. Cancelling
	// the RPC cancels the call: the plugin must stop the work and may end the stream without an
	// outcome. A host uses Call only with a plugin that does not serve Calls.
	Call(*CallRequest, grpc.ServerStreamingServer[CallResponse]) error
	// Calls runs any number of calls, concurrently, on one long-lived stream: the host sends
	// calls and cancellations, the plugin sends each call's progress and outcome, every message
	// tagged with its call id. "Calls" at the top of this file gives the rules.
	Calls(grpc.BidiStreamingServer[CallsRequest, CallsResponse]) error
	// Release forgets a configured instance; the host calls it when a declaration's tool is
	// closed. Releasing an unknown instance is not an error.
	Release(context.Context, *ReleaseRequest) (*ReleaseResponse, error)
	// OpenCallsSocket asks the plugin for a calls socket: a Unix socket that carries the Calls
	// stream's messages without gRPC. "The calls socket" at the top of this file gives the
	// rules.
	OpenCallsSocket(context.Context, *OpenCallsSocketRequest) (*OpenCallsSocketResponse, error)
	mustEmbedUnimplementedPluginServiceServer()
}

// UnimplementedPluginServiceServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
type UnimplementedPluginServiceServer struct{}

func (UnimplementedPluginServiceServer) Describe(context.Context, *DescribeRequest) (*DescribeResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Describe not implemented")
}
func (UnimplementedPluginServiceServer) Configure(context.Context, *ConfigureRequest) (*ConfigureResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Configure not implemented")
}
func (UnimplementedPluginServiceServer) Call(*CallRequest, grpc.ServerStreamingServer[CallResponse]) error {
	return status.Error(codes.Unimplemented, "method Call not implemented")
}
func (UnimplementedPluginServiceServer) Calls(grpc.BidiStreamingServer[CallsRequest, CallsResponse]) error {
	return status.Error(codes.Unimplemented, "method Calls not implemented")
}
func (UnimplementedPluginServiceServer) Release(context.Context, *ReleaseRequest) (*ReleaseResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method Release not implemented")
}
func (UnimplementedPluginServiceServer) OpenCallsSocket(context.Context, *OpenCallsSocketRequest) (*OpenCallsSocketResponse, error) {
	return nil, status.Error(codes.Unimplemented, "method OpenCallsSocket not implemented")
}
func (UnimplementedPluginServiceServer) mustEmbedUnimplementedPluginServiceServer() {}
func (UnimplementedPluginServiceServer) testEmbeddedByValue()                       {}

// UnsafePluginServiceServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to PluginServiceServer will
// result in compilation errors.
type UnsafePluginServiceServer interface {
	mustEmbedUnimplementedPluginServiceServer()
}

func RegisterPluginServiceServer(s grpc.ServiceRegistrar, srv PluginServiceServer) {
	// If the following call panics, it indicates UnimplementedPluginServiceServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&PluginService_ServiceDesc, srv)
}

func _PluginService_Describe_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DescribeRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Describe(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Describe_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Describe(ctx, req.(*DescribeRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Configure_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ConfigureRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Configure(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Configure_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Configure(ctx, req.(*ConfigureRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_Call_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(CallRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(PluginServiceServer).Call(m, &grpc.GenericServerStream[CallRequest, CallResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type PluginService_CallServer = grpc.ServerStreamingServer[CallResponse]

func _PluginService_Calls_Handler(srv interface{}, stream grpc.ServerStream) error {
	return srv.(PluginServiceServer).Calls(&grpc.GenericServerStream[CallsRequest, CallsResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type PluginService_CallsServer = grpc.BidiStreamingServer[CallsRequest, CallsResponse]

func _PluginService_Release_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ReleaseRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).Release(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_Release_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).Release(ctx, req.(*ReleaseRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _PluginService_OpenCallsSocket_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(OpenCallsSocketRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(PluginServiceServer).OpenCallsSocket(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: PluginService_OpenCallsSocket_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(PluginServiceServer).OpenCallsSocket(ctx, req.(*OpenCallsSocketRequest))
	}
	return interceptor(ctx, in, info, handler)
}

// PluginService_ServiceDesc is the grpc.ServiceDesc for PluginService service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var PluginService_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "halo.plugin.v1.PluginService",
	HandlerType: (*PluginServiceServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "Describe",
			Handler:    _PluginService_Describe_Handler,
		},
		{
			MethodName: "Configure",
			Handler:    _PluginService_Configure_Handler,
		},
		{
			MethodName: "Release",
			Handler:    _PluginService_Release_Handler,
		},
		{
			MethodName: "OpenCallsSocket",
			Handler:    _PluginService_OpenCallsSocket_Handler,
		},
	},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "Call",
			Handler:       _PluginService_Call_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "Calls",
			Handler:       _PluginService_Calls_Handler,
			ServerStreams: true,
			ClientStreams: true,
		},
	},
	Metadata: "halo/plugin/v1/plugin.proto",
}
