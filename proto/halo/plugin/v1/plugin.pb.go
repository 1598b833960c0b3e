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

// Code generated by protoc-gen-go. DO NOT EDIT.
// versions:
// 	protoc-gen-go v1.36.12
// 	protoc        (unknown)
// source: halo/plugin/v1/plugin.proto

package pluginv1

import (
	protoreflect "google.golang.org/protobuf/reflect/protoreflect"
	protoimpl "google.golang.org/protobuf/runtime/protoimpl"
	reflect "reflect"
	sync "sync"
	unsafe "unsafe"
)

const (
	// Verify that this generated code is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(20 - protoimpl.MinVersion)
	// Verify that runtime/protoimpl is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(protoimpl.MaxVersion - 20)
)

// Effect classifies what a method can change. It is the author's word; Halo does not measure it.
type Effect int32

const (
	// Not declared: the host treats the method as EFFECT_EXTERNAL.
	Effect_EFFECT_UNSPECIFIED Effect = 0
	// Changes nothing.
	Effect_EFFECT_READ Effect = 1
	// Changes local or stored state: a file, a key, a row.
	Effect_EFFECT_WRITE Effect = 2
	// Acts outside this machine or cannot be taken back.
	Effect_EFFECT_EXTERNAL Effect = 3
)

// Enum value maps for Effect.
var (
	Effect_name = map[int32]string{
		0: "EFFECT_UNSPECIFIED",
		1: "EFFECT_READ",
		2: "EFFECT_WRITE",
		3: "EFFECT_EXTERNAL",
	}
	Effect_value = map[string]int32{
		"EFFECT_UNSPECIFIED": 0,
		"EFFECT_READ":        1,
		"EFFECT_WRITE":       2,
		"EFFECT_EXTERNAL":    3,
	}
)

func (x Effect) Enum() *Effect {
	p := new(Effect)
	*p = x
	return p
}

func (x Effect) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (Effect) Descriptor() protoreflect.EnumDescriptor {
	return file_halo_plugin_v1_plugin_proto_enumTypes[0].Descriptor()
}

func (Effect) Type() protoreflect.EnumType {
	return &file_halo_plugin_v1_plugin_proto_enumTypes[0]
}

func (x Effect) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use Effect.Descriptor instead.
func (Effect) EnumDescriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{0}
}

// DescribeRequest asks a plugin what it serves. It has no fields.
type DescribeRequest struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DescribeRequest) Reset() {
	*x = DescribeRequest{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[0]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DescribeRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DescribeRequest) ProtoMessage() {}

func (x *DescribeRequest) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[0]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DescribeRequest.ProtoReflect.Descriptor instead.
func (*DescribeRequest) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{0}
}

// DescribeResponse lists the providers of a plugin.
type DescribeResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The providers this plugin serves; a plugin serves at least one.
	Providers     []*ProviderSpec `protobuf:"bytes,1,rep,name=providers,proto3" json:"providers,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DescribeResponse) Reset() {
	*x = DescribeResponse{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[1]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DescribeResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DescribeResponse) ProtoMessage() {}

func (x *DescribeResponse) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[1]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DescribeResponse.ProtoReflect.Descriptor instead.
func (*DescribeResponse) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{1}
}

func (x *DescribeResponse) GetProviders() []*ProviderSpec {
	if x != nil {
		return x.Providers
	}
	return nil
}

// ProviderSpec describes one provider type, as `tool X : Name(...)` declarations name it.
type ProviderSpec struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The provider name: a capital letter, then letters and digits (`WorldTime`).
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
	// One line for people, shown by `halo tools`.
	Description string `protobuf:"bytes,2,opt,name=description,proto3" json:"description,omitempty"`
	// Every method the provider can offer, under any configuration.
	Methods       []*Method `protobuf:"bytes,3,rep,name=methods,proto3" json:"methods,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ProviderSpec) Reset() {
	*x = ProviderSpec{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[2]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ProviderSpec) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ProviderSpec) ProtoMessage() {}

func (x *ProviderSpec) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[2]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ProviderSpec.ProtoReflect.Descriptor instead.
func (*ProviderSpec) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{2}
}

func (x *ProviderSpec) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ProviderSpec) GetDescription() string {
	if x != nil {
		return x.Description
	}
	return ""
}

func (x *ProviderSpec) GetMethods() []*Method {
	if x != nil {
		return x.Methods
	}
	return nil
}

// Method describes one callable operation.
type Method struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The method name as written after the dot in a pipeline (`Clock.now`): lowercase
	// snake_case is the convention.
	Name string `protobuf:"bytes,1,opt,name=name,proto3" json:"name,omitempty"`
	// What the method does and what it changes. Models read this to decide whether to call the
	// method, so it is a prompt: say when to use it.
	Description string `protobuf:"bytes,2,opt,name=description,proto3" json:"description,omitempty"`
	// The JSON Schema (draft 2020-12) of the arguments object, as UTF-8 JSON. Empty means an
	// object with any fields.
	ParamsSchema []byte `protobuf:"bytes,3,opt,name=params_schema,json=paramsSchema,proto3" json:"params_schema,omitempty"`
	// What calling the method can change. Policies select methods by effect.
	Effect Effect `protobuf:"varint,4,opt,name=effect,proto3,enum=halo.plugin.v1.Effect" json:"effect,omitempty"`
	// When true, pipelines may call the method but agents are never offered it.
	PipelineOnly  bool `protobuf:"varint,5,opt,name=pipeline_only,json=pipelineOnly,proto3" json:"pipeline_only,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Method) Reset() {
	*x = Method{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[3]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Method) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Method) ProtoMessage() {}

func (x *Method) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[3]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Method.ProtoReflect.Descriptor instead.
func (*Method) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{3}
}

func (x *Method) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *Method) GetDescription() string {
	if x != nil {
		return x.Description
	}
	return ""
}

func (x *Method) GetParamsSchema() []byte {
	if x != nil {
		return x.ParamsSchema
	}
	return nil
}

func (x *Method) GetEffect() Effect {
	if x != nil {
		return x.Effect
	}
	return Effect_EFFECT_UNSPECIFIED
}

func (x *Method) GetPipelineOnly() bool {
	if x != nil {
		return x.PipelineOnly
	}
	return false
}

// ConfigureRequest carries one evaluated declaration, `tool Name : Provider(args...)`.
type ConfigureRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The provider type being configured; one of the names Describe returned.
	Provider string `protobuf:"bytes,1,opt,name=provider,proto3" json:"provider,omitempty"`
	// The declared tool name (`Clock` in `tool Clock : WorldTime()`), for messages and logs.
	ToolName string `protobuf:"bytes,2,opt,name=tool_name,json=toolName,proto3" json:"tool_name,omitempty"`
	// The positional arguments as a UTF-8 JSON array (`[]` when there are none).
	Args []byte `protobuf:"bytes,3,opt,name=args,proto3" json:"args,omitempty"`
	// The named arguments as a UTF-8 JSON object (`{}` when there are none).
	NamedArgs []byte `protobuf:"bytes,4,opt,name=named_args,json=namedArgs,proto3" json:"named_args,omitempty"`
	// The absolute path of the project folder; relative paths in arguments resolve against it.
	ProjectDir    string `protobuf:"bytes,5,opt,name=project_dir,json=projectDir,proto3" json:"project_dir,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ConfigureRequest) Reset() {
	*x = ConfigureRequest{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[4]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ConfigureRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ConfigureRequest) ProtoMessage() {}

func (x *ConfigureRequest) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[4]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ConfigureRequest.ProtoReflect.Descriptor instead.
func (*ConfigureRequest) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{4}
}

func (x *ConfigureRequest) GetProvider() string {
	if x != nil {
		return x.Provider
	}
	return ""
}

func (x *ConfigureRequest) GetToolName() string {
	if x != nil {
		return x.ToolName
	}
	return ""
}

func (x *ConfigureRequest) GetArgs() []byte {
	if x != nil {
		return x.Args
	}
	return nil
}

func (x *ConfigureRequest) GetNamedArgs() []byte {
	if x != nil {
		return x.NamedArgs
	}
	return nil
}

func (x *ConfigureRequest) GetProjectDir() string {
	if x != nil {
		return x.ProjectDir
	}
	return ""
}

// ConfigureResponse is either an instance or a configuration error.
type ConfigureResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The id to pass to Call and Release. Empty when error is set.
	InstanceId string `protobuf:"bytes,1,opt,name=instance_id,json=instanceId,proto3" json:"instance_id,omitempty"`
	// The methods this configuration offers. Empty means every method Describe listed for the
	// provider.
	Methods []*Method `protobuf:"bytes,2,rep,name=methods,proto3" json:"methods,omitempty"`
	// Set when the arguments are wrong: the host reports it as TOOL_CONFIG with this message
	// (say which argument and how to fix it).
	Error string `protobuf:"bytes,3,opt,name=error,proto3" json:"error,omitempty"`
	// Set when the provider must not be shared across runs: the host then gives each run a
	// process of its own and stops it when that run ends, instead of keeping the process for
	// the next run of the same declaration. A host that does not know the field gives every
	// run a process of its own anyway.
	PerRun        bool `protobuf:"varint,4,opt,name=per_run,json=perRun,proto3" json:"per_run,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ConfigureResponse) Reset() {
	*x = ConfigureResponse{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[5]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ConfigureResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ConfigureResponse) ProtoMessage() {}

func (x *ConfigureResponse) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[5]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ConfigureResponse.ProtoReflect.Descriptor instead.
func (*ConfigureResponse) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{5}
}

func (x *ConfigureResponse) GetInstanceId() string {
	if x != nil {
		return x.InstanceId
	}
	return ""
}

func (x *ConfigureResponse) GetMethods() []*Method {
	if x != nil {
		return x.Methods
	}
	return nil
}

func (x *ConfigureResponse) GetError() string {
	if x != nil {
		return x.Error
	}
	return ""
}

func (x *ConfigureResponse) GetPerRun() bool {
	if x != nil {
		return x.PerRun
	}
	return false
}

// CallRequest runs one method of a configured instance.
type CallRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The id Configure returned.
	InstanceId string `protobuf:"bytes,1,opt,name=instance_id,json=instanceId,proto3" json:"instance_id,omitempty"`
	// The method name.
	Method string `protobuf:"bytes,2,opt,name=method,proto3" json:"method,omitempty"`
	// The arguments as a UTF-8 JSON object. They were not validated against the schema: the
	// plugin checks them and answers a bad argument with an Error of code TOOL_ARGUMENT.
	Args          []byte `protobuf:"bytes,3,opt,name=args,proto3" json:"args,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CallRequest) Reset() {
	*x = CallRequest{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[6]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CallRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CallRequest) ProtoMessage() {}

func (x *CallRequest) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[6]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CallRequest.ProtoReflect.Descriptor instead.
func (*CallRequest) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{6}
}

func (x *CallRequest) GetInstanceId() string {
	if x != nil {
		return x.InstanceId
	}
	return ""
}

func (x *CallRequest) GetMethod() string {
	if x != nil {
		return x.Method
	}
	return ""
}

func (x *CallRequest) GetArgs() []byte {
	if x != nil {
		return x.Args
	}
	return nil
}

// CallResponse is one event of a call's stream: progress, or the outcome that ends it.
type CallResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Exactly one field is set. Progress may come any number of times; the stream's last
	// message holds one of the outcomes (result, failure, retry, error).
	//
	// Types that are valid to be assigned to Event:
	//
	//	*CallResponse_Progress
	//	*CallResponse_Result
	//	*CallResponse_Failure
	//	*CallResponse_Retry
	//	*CallResponse_Error
	Event         isCallResponse_Event `protobuf_oneof:"event"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CallResponse) Reset() {
	*x = CallResponse{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[7]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CallResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CallResponse) ProtoMessage() {}

func (x *CallResponse) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[7]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CallResponse.ProtoReflect.Descriptor instead.
func (*CallResponse) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{7}
}

func (x *CallResponse) GetEvent() isCallResponse_Event {
	if x != nil {
		return x.Event
	}
	return nil
}

func (x *CallResponse) GetProgress() *Progress {
	if x != nil {
		if x, ok := x.Event.(*CallResponse_Progress); ok {
			return x.Progress
		}
	}
	return nil
}

func (x *CallResponse) GetResult() *Result {
	if x != nil {
		if x, ok := x.Event.(*CallResponse_Result); ok {
			return x.Result
		}
	}
	return nil
}

func (x *CallResponse) GetFailure() *Failure {
	if x != nil {
		if x, ok := x.Event.(*CallResponse_Failure); ok {
			return x.Failure
		}
	}
	return nil
}

func (x *CallResponse) GetRetry() *Retry {
	if x != nil {
		if x, ok := x.Event.(*CallResponse_Retry); ok {
			return x.Retry
		}
	}
	return nil
}

func (x *CallResponse) GetError() *Error {
	if x != nil {
		if x, ok := x.Event.(*CallResponse_Error); ok {
			return x.Error
		}
	}
	return nil
}

type isCallResponse_Event interface {
	isCallResponse_Event()
}

type CallResponse_Progress struct {
	// A progress report while the call runs.
	Progress *Progress `protobuf:"bytes,1,opt,name=progress,proto3,oneof"`
}

type CallResponse_Result struct {
	// The call succeeded.
	Result *Result `protobuf:"bytes,2,opt,name=result,proto3,oneof"`
}

type CallResponse_Failure struct {
	// The call failed in a way the model should read and act on.
	Failure *Failure `protobuf:"bytes,3,opt,name=failure,proto3,oneof"`
}

type CallResponse_Retry struct {
	// The call failed for a passing reason and may succeed if tried again.
	Retry *Retry `protobuf:"bytes,4,opt,name=retry,proto3,oneof"`
}

type CallResponse_Error struct {
	// The call could not be carried out at all.
	Error *Error `protobuf:"bytes,5,opt,name=error,proto3,oneof"`
}

func (*CallResponse_Progress) isCallResponse_Event() {}

func (*CallResponse_Result) isCallResponse_Event() {}

func (*CallResponse_Failure) isCallResponse_Event() {}

func (*CallResponse_Retry) isCallResponse_Event() {}

func (*CallResponse_Error) isCallResponse_Event() {}

// Progress reports how far a long call has got: filled of total units, with a message.
type Progress struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Units done so far.
	Filled float64 `protobuf:"fixed64,1,opt,name=filled,proto3" json:"filled,omitempty"`
	// Units in all; 0 when unknown.
	Total float64 `protobuf:"fixed64,2,opt,name=total,proto3" json:"total,omitempty"`
	// What is happening now, for people watching the run. Optional.
	Message       string `protobuf:"bytes,3,opt,name=message,proto3" json:"message,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Progress) Reset() {
	*x = Progress{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[8]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Progress) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Progress) ProtoMessage() {}

func (x *Progress) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[8]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Progress.ProtoReflect.Descriptor instead.
func (*Progress) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{8}
}

func (x *Progress) GetFilled() float64 {
	if x != nil {
		return x.Filled
	}
	return 0
}

func (x *Progress) GetTotal() float64 {
	if x != nil {
		return x.Total
	}
	return 0
}

func (x *Progress) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

// Result is a successful outcome.
type Result struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The result as UTF-8 JSON: any JSON value. The model reads it as the tool's answer.
	Json          []byte `protobuf:"bytes,1,opt,name=json,proto3" json:"json,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Result) Reset() {
	*x = Result{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[9]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Result) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Result) ProtoMessage() {}

func (x *Result) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[9]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Result.ProtoReflect.Descriptor instead.
func (*Result) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{9}
}

func (x *Result) GetJson() []byte {
	if x != nil {
		return x.Json
	}
	return nil
}

// Failure is a domain failure: the method ran and the answer is "no", such as a missing file.
// It is still a result the model reads, so it can change course in one turn, and it does not
// make the call count as an error for @retry.
type Failure struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// What went wrong and what to do instead ("no such file; call list to see what exists").
	Message string `protobuf:"bytes,1,opt,name=message,proto3" json:"message,omitempty"`
	// Optional UTF-8 JSON object the model reads instead of {"error": message}. When set it
	// should carry an "error" field.
	Detail        []byte `protobuf:"bytes,2,opt,name=detail,proto3" json:"detail,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Failure) Reset() {
	*x = Failure{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[10]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Failure) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Failure) ProtoMessage() {}

func (x *Failure) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[10]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Failure.ProtoReflect.Descriptor instead.
func (*Failure) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{10}
}

func (x *Failure) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

func (x *Failure) GetDetail() []byte {
	if x != nil {
		return x.Detail
	}
	return nil
}

// Retry is a transient failure, such as a rate limit or a busy resource. @retry tries the call
// again; other callers see a TOOL_ERROR marked retryable.
type Retry struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// What went wrong.
	Message string `protobuf:"bytes,1,opt,name=message,proto3" json:"message,omitempty"`
	// How long to wait before trying again, in milliseconds; 0 lets the host choose.
	RetryAfterMs  int64 `protobuf:"varint,2,opt,name=retry_after_ms,json=retryAfterMs,proto3" json:"retry_after_ms,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Retry) Reset() {
	*x = Retry{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[11]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Retry) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Retry) ProtoMessage() {}

func (x *Retry) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[11]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Retry.ProtoReflect.Descriptor instead.
func (*Retry) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{11}
}

func (x *Retry) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

func (x *Retry) GetRetryAfterMs() int64 {
	if x != nil {
		return x.RetryAfterMs
	}
	return 0
}

// Error is a fatal failure of the call.
type Error struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// A stable UPPER_SNAKE code: TOOL_ARGUMENT (the arguments do not fit the method),
	// TOOL_UNKNOWN_METHOD (no such method), TOOL_CONFIG (no such instance), or TOOL_ERROR
	// (anything else). Empty means TOOL_ERROR.
	Code string `protobuf:"bytes,1,opt,name=code,proto3" json:"code,omitempty"`
	// What went wrong, for people and models.
	Message       string `protobuf:"bytes,2,opt,name=message,proto3" json:"message,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Error) Reset() {
	*x = Error{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[12]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Error) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Error) ProtoMessage() {}

func (x *Error) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[12]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Error.ProtoReflect.Descriptor instead.
func (*Error) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{12}
}

func (x *Error) GetCode() string {
	if x != nil {
		return x.Code
	}
	return ""
}

func (x *Error) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

// CallsRequest is one message from the host on the Calls stream: a new call, or the
// cancellation of one.
type CallsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The call this message is about: chosen by the host when it starts the call, never 0,
	// never reused on the same stream.
	CallId uint64 `protobuf:"varint,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// What the host asks. Exactly one is set; a plugin ignores a message with neither.
	//
	// Types that are valid to be assigned to Kind:
	//
	//	*CallsRequest_Call
	//	*CallsRequest_Cancel
	Kind          isCallsRequest_Kind `protobuf_oneof:"kind"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CallsRequest) Reset() {
	*x = CallsRequest{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[13]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CallsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CallsRequest) ProtoMessage() {}

func (x *CallsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[13]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CallsRequest.ProtoReflect.Descriptor instead.
func (*CallsRequest) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{13}
}

func (x *CallsRequest) GetCallId() uint64 {
	if x != nil {
		return x.CallId
	}
	return 0
}

func (x *CallsRequest) GetKind() isCallsRequest_Kind {
	if x != nil {
		return x.Kind
	}
	return nil
}

func (x *CallsRequest) GetCall() *CallRequest {
	if x != nil {
		if x, ok := x.Kind.(*CallsRequest_Call); ok {
			return x.Call
		}
	}
	return nil
}

func (x *CallsRequest) GetCancel() *CancelCall {
	if x != nil {
		if x, ok := x.Kind.(*CallsRequest_Cancel); ok {
			return x.Cancel
		}
	}
	return nil
}

type isCallsRequest_Kind interface {
	isCallsRequest_Kind()
}

type CallsRequest_Call struct {
	// Start a call: the same request the Call RPC takes.
	Call *CallRequest `protobuf:"bytes,2,opt,name=call,proto3,oneof"`
}

type CallsRequest_Cancel struct {
	// Cancel the call: stop its work. The host no longer waits for its outcome.
	Cancel *CancelCall `protobuf:"bytes,3,opt,name=cancel,proto3,oneof"`
}

func (*CallsRequest_Call) isCallsRequest_Kind() {}

func (*CallsRequest_Cancel) isCallsRequest_Kind() {}

// CancelCall asks the plugin to stop a running call. It has no fields.
type CancelCall struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CancelCall) Reset() {
	*x = CancelCall{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[14]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CancelCall) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CancelCall) ProtoMessage() {}

func (x *CancelCall) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[14]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CancelCall.ProtoReflect.Descriptor instead.
func (*CancelCall) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{14}
}

// CallsResponse is one event of one call on the Calls stream.
type CallsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The call_id of the CallsRequest that started the call.
	CallId uint64 `protobuf:"varint,1,opt,name=call_id,json=callId,proto3" json:"call_id,omitempty"`
	// A progress event or the call's outcome, exactly as the Call RPC would stream it. The
	// last message of each call holds its outcome.
	Event         *CallResponse `protobuf:"bytes,2,opt,name=event,proto3" json:"event,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CallsResponse) Reset() {
	*x = CallsResponse{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[15]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CallsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CallsResponse) ProtoMessage() {}

func (x *CallsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[15]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CallsResponse.ProtoReflect.Descriptor instead.
func (*CallsResponse) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{15}
}

func (x *CallsResponse) GetCallId() uint64 {
	if x != nil {
		return x.CallId
	}
	return 0
}

func (x *CallsResponse) GetEvent() *CallResponse {
	if x != nil {
		return x.Event
	}
	return nil
}

// OpenCallsSocketRequest asks for a calls socket. It has no fields.
type OpenCallsSocketRequest struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *OpenCallsSocketRequest) Reset() {
	*x = OpenCallsSocketRequest{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[16]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *OpenCallsSocketRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*OpenCallsSocketRequest) ProtoMessage() {}

func (x *OpenCallsSocketRequest) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[16]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use OpenCallsSocketRequest.ProtoReflect.Descriptor instead.
func (*OpenCallsSocketRequest) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{16}
}

// OpenCallsSocketResponse names the calls socket the plugin listens on.
type OpenCallsSocketResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The socket's absolute path, directly inside the folder PLUGIN_UNIX_SOCKET_DIR names.
	Path          string `protobuf:"bytes,1,opt,name=path,proto3" json:"path,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *OpenCallsSocketResponse) Reset() {
	*x = OpenCallsSocketResponse{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[17]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *OpenCallsSocketResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*OpenCallsSocketResponse) ProtoMessage() {}

func (x *OpenCallsSocketResponse) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[17]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use OpenCallsSocketResponse.ProtoReflect.Descriptor instead.
func (*OpenCallsSocketResponse) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{17}
}

func (x *OpenCallsSocketResponse) GetPath() string {
	if x != nil {
		return x.Path
	}
	return ""
}

// ReleaseRequest forgets one configured instance.
type ReleaseRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The id Configure returned.
	InstanceId    string `protobuf:"bytes,1,opt,name=instance_id,json=instanceId,proto3" json:"instance_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ReleaseRequest) Reset() {
	*x = ReleaseRequest{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[18]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ReleaseRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ReleaseRequest) ProtoMessage() {}

func (x *ReleaseRequest) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[18]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ReleaseRequest.ProtoReflect.Descriptor instead.
func (*ReleaseRequest) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{18}
}

func (x *ReleaseRequest) GetInstanceId() string {
	if x != nil {
		return x.InstanceId
	}
	return ""
}

// ReleaseResponse acknowledges a Release. It has no fields.
type ReleaseResponse struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ReleaseResponse) Reset() {
	*x = ReleaseResponse{}
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[19]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ReleaseResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ReleaseResponse) ProtoMessage() {}

func (x *ReleaseResponse) ProtoReflect() protoreflect.Message {
	mi := &file_halo_plugin_v1_plugin_proto_msgTypes[19]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ReleaseResponse.ProtoReflect.Descriptor instead.
func (*ReleaseResponse) Descriptor() ([]byte, []int) {
	return file_halo_plugin_v1_plugin_proto_rawDescGZIP(), []int{19}
}

var File_halo_plugin_v1_plugin_proto protoreflect.FileDescriptor

const file_halo_plugin_v1_plugin_proto_rawDesc = "" +
	"\n" +
	"\x1bhalo/plugin/v1/plugin.proto\x12\x0ehalo.plugin.v1\"\x11\n" +
	"\x0fDescribeRequest\"N\n" +
	"\x10DescribeResponse\x12:\n" +
	"\tproviders\x18\x01 \x03(\v2\x1c.halo.plugin.v1.ProviderSpecR\tproviders\"v\n" +
	"\fProviderSpec\x12\x12\n" +
	"\x04name\x18\x01 \x01(\tR\x04name\x12 \n" +
	"\vdescription\x18\x02 \x01(\tR\vdescription\x120\n" +
	"\amethods\x18\x03 \x03(\v2\x16.halo.plugin.v1.MethodR\amethods\"\xb8\x01\n" +
	"\x06Method\x12\x12\n" +
	"\x04name\x18\x01 \x01(\tR\x04name\x12 \n" +
	"\vdescription\x18\x02 \x01(\tR\vdescription\x12#\n" +
	"\rparams_schema\x18\x03 \x01(\fR\fparamsSchema\x12.\n" +
	"\x06effect\x18\x04 \x01(\x0e2\x16.halo.plugin.v1.EffectR\x06effect\x12#\n" +
	"\rpipeline_only\x18\x05 \x01(\bR\fpipelineOnly\"\x9f\x01\n" +
	"\x10ConfigureRequest\x12\x1a\n" +
	"\bprovider\x18\x01 \x01(\tR\bprovider\x12\x1b\n" +
	"\ttool_name\x18\x02 \x01(\tR\btoolName\x12\x12\n" +
	"\x04args\x18\x03 \x01(\fR\x04args\x12\x1d\n" +
	"\n" +
	"named_args\x18\x04 \x01(\fR\tnamedArgs\x12\x1f\n" +
	"\vproject_dir\x18\x05 \x01(\tR\n" +
	"projectDir\"\x95\x01\n" +
	"\x11ConfigureResponse\x12\x1f\n" +
	"\vinstance_id\x18\x01 \x01(\tR\n" +
	"instanceId\x120\n" +
	"\amethods\x18\x02 \x03(\v2\x16.halo.plugin.v1.MethodR\amethods\x12\x14\n" +
	"\x05error\x18\x03 \x01(\tR\x05error\x12\x17\n" +
	"\aper_run\x18\x04 \x01(\bR\x06perRun\"Z\n" +
	"\vCallRequest\x12\x1f\n" +
	"\vinstance_id\x18\x01 \x01(\tR\n" +
	"instanceId\x12\x16\n" +
	"\x06method\x18\x02 \x01(\tR\x06method\x12\x12\n" +
	"\x04args\x18\x03 \x01(\fR\x04args\"\x94\x02\n" +
	"\fCallResponse\x126\n" +
	"\bprogress\x18\x01 \x01(\v2\x18.halo.plugin.v1.ProgressH\x00R\bprogress\x120\n" +
	"\x06result\x18\x02 \x01(\v2\x16.halo.plugin.v1.ResultH\x00R\x06result\x123\n" +
	"\afailure\x18\x03 \x01(\v2\x17.halo.plugin.v1.FailureH\x00R\afailure\x12-\n" +
	"\x05retry\x18\x04 \x01(\v2\x15.halo.plugin.v1.RetryH\x00R\x05retry\x12-\n" +
	"\x05error\x18\x05 \x01(\v2\x15.halo.plugin.v1.ErrorH\x00R\x05errorB\a\n" +
	"\x05event\"R\n" +
	"\bProgress\x12\x16\n" +
	"\x06filled\x18\x01 \x01(\x01R\x06filled\x12\x14\n" +
	"\x05total\x18\x02 \x01(\x01R\x05total\x12\x18\n" +
	"\amessage\x18\x03 \x01(\tR\amessage\"\x1c\n" +
	"\x06Result\x12\x12\n" +
	"\x04json\x18\x01 \x01(\fR\x04json\";\n" +
	"\aFailure\x12\x18\n" +
	"\amessage\x18\x01 \x01(\tR\amessage\x12\x16\n" +
	"\x06detail\x18\x02 \x01(\fR\x06detail\"G\n" +
	"\x05Retry\x12\x18\n" +
	"\amessage\x18\x01 \x01(\tR\amessage\x12$\n" +
	"\x0eretry_after_ms\x18\x02 \x01(\x03R\fretryAfterMs\"5\n" +
	"\x05Error\x12\x12\n" +
	"\x04code\x18\x01 \x01(\tR\x04code\x12\x18\n" +
	"\amessage\x18\x02 \x01(\tR\amessage\"\x98\x01\n" +
	"\fCallsRequest\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\x04R\x06callId\x121\n" +
	"\x04call\x18\x02 \x01(\v2\x1b.halo.plugin.v1.CallRequestH\x00R\x04call\x124\n" +
	"\x06cancel\x18\x03 \x01(\v2\x1a.halo.plugin.v1.CancelCallH\x00R\x06cancelB\x06\n" +
	"\x04kind\"\f\n" +
	"\n" +
	"CancelCall\"\\\n" +
	"\rCallsResponse\x12\x17\n" +
	"\acall_id\x18\x01 \x01(\x04R\x06callId\x122\n" +
	"\x05event\x18\x02 \x01(\v2\x1c.halo.plugin.v1.CallResponseR\x05event\"\x18\n" +
	"\x16OpenCallsSocketRequest\"-\n" +
	"\x17OpenCallsSocketResponse\x12\x12\n" +
	"\x04path\x18\x01 \x01(\tR\x04path\"1\n" +
	"\x0eReleaseRequest\x12\x1f\n" +
	"\vinstance_id\x18\x01 \x01(\tR\n" +
	"instanceId\"\x11\n" +
	"\x0fReleaseResponse*X\n" +
	"\x06Effect\x12\x16\n" +
	"\x12EFFECT_UNSPECIFIED\x10\x00\x12\x0f\n" +
	"\vEFFECT_READ\x10\x01\x12\x10\n" +
	"\fEFFECT_WRITE\x10\x02\x12\x13\n" +
	"\x0fEFFECT_EXTERNAL\x10\x032\xef\x03\n" +
	"\rPluginService\x12M\n" +
	"\bDescribe\x12\x1f.halo.plugin.v1.DescribeRequest\x1a .halo.plugin.v1.DescribeResponse\x12P\n" +
	"\tConfigure\x12 .halo.plugin.v1.ConfigureRequest\x1a!.halo.plugin.v1.ConfigureResponse\x12C\n" +
	"\x04Call\x12\x1b.halo.plugin.v1.CallRequest\x1a\x1c.halo.plugin.v1.CallResponse0\x01\x12H\n" +
	"\x05Calls\x12\x1c.halo.plugin.v1.CallsRequest\x1a\x1d.halo.plugin.v1.CallsResponse(\x010\x01\x12J\n" +
	"\aRelease\x12\x1e.halo.plugin.v1.ReleaseRequest\x1a\x1f.halo.plugin.v1.ReleaseResponse\x12b\n" +
	"\x0fOpenCallsSocket\x12&.halo.plugin.v1.OpenCallsSocketRequest\x1a'.halo.plugin.v1.OpenCallsSocketResponseB1Z/halolang.dev/halo/proto/halo/plugin/v1;pluginv1b\x06proto3"

var (
	file_halo_plugin_v1_plugin_proto_rawDescOnce sync.Once
	file_halo_plugin_v1_plugin_proto_rawDescData []byte
)

func file_halo_plugin_v1_plugin_proto_rawDescGZIP() []byte {
	file_halo_plugin_v1_plugin_proto_rawDescOnce.Do(func() {
		file_halo_plugin_v1_plugin_proto_rawDescData = protoimpl.X.CompressGZIP(unsafe.Slice(unsafe.StringData(file_halo_plugin_v1_plugin_proto_rawDesc), len(file_halo_plugin_v1_plugin_proto_rawDesc)))
	})
	return file_halo_plugin_v1_plugin_proto_rawDescData
}

var file_halo_plugin_v1_plugin_proto_enumTypes = make([]protoimpl.EnumInfo, 1)
var file_halo_plugin_v1_plugin_proto_msgTypes = make([]protoimpl.MessageInfo, 20)
var file_halo_plugin_v1_plugin_proto_goTypes = []any{
	(Effect)(0),                     // 0: halo.plugin.v1.Effect
	(*DescribeRequest)(nil),         // 1: halo.plugin.v1.DescribeRequest
	(*DescribeResponse)(nil),        // 2: halo.plugin.v1.DescribeResponse
	(*ProviderSpec)(nil),            // 3: halo.plugin.v1.ProviderSpec
	(*Method)(nil),                  // 4: halo.plugin.v1.Method
	(*ConfigureRequest)(nil),        // 5: halo.plugin.v1.ConfigureRequest
	(*ConfigureResponse)(nil),       // 6: halo.plugin.v1.ConfigureResponse
	(*CallRequest)(nil),             // 7: halo.plugin.v1.CallRequest
	(*CallResponse)(nil),            // 8: halo.plugin.v1.CallResponse
	(*Progress)(nil),                // 9: halo.plugin.v1.Progress
	(*Result)(nil),                  // 10: halo.plugin.v1.Result
	(*Failure)(nil),                 // 11: halo.plugin.v1.Failure
	(*Retry)(nil),                   // 12: halo.plugin.v1.Retry
	(*Error)(nil),                   // 13: halo.plugin.v1.Error
	(*CallsRequest)(nil),            // 14: halo.plugin.v1.CallsRequest
	(*CancelCall)(nil),              // 15: halo.plugin.v1.CancelCall
	(*CallsResponse)(nil),           // 16: halo.plugin.v1.CallsResponse
	(*OpenCallsSocketRequest)(nil),  // 17: halo.plugin.v1.OpenCallsSocketRequest
	(*OpenCallsSocketResponse)(nil), // 18: halo.plugin.v1.OpenCallsSocketResponse
	(*ReleaseRequest)(nil),          // 19: halo.plugin.v1.ReleaseRequest
	(*ReleaseResponse)(nil),         // 20: halo.plugin.v1.ReleaseResponse
}
var file_halo_plugin_v1_plugin_proto_depIdxs = []int32{
	3,  // 0: halo.plugin.v1.DescribeResponse.providers:type_name -> halo.plugin.v1.ProviderSpec
	4,  // 1: halo.plugin.v1.ProviderSpec.methods:type_name -> halo.plugin.v1.Method
	0,  // 2: halo.plugin.v1.Method.effect:type_name -> halo.plugin.v1.Effect
	4,  // 3: halo.plugin.v1.ConfigureResponse.methods:type_name -> halo.plugin.v1.Method
	9,  // 4: halo.plugin.v1.CallResponse.progress:type_name -> halo.plugin.v1.Progress
	10, // 5: halo.plugin.v1.CallResponse.result:type_name -> halo.plugin.v1.Result
	11, // 6: halo.plugin.v1.CallResponse.failure:type_name -> halo.plugin.v1.Failure
	12, // 7: halo.plugin.v1.CallResponse.retry:type_name -> halo.plugin.v1.Retry
	13, // 8: halo.plugin.v1.CallResponse.error:type_name -> halo.plugin.v1.Error
	7,  // 9: halo.plugin.v1.CallsRequest.call:type_name -> halo.plugin.v1.CallRequest
	15, // 10: halo.plugin.v1.CallsRequest.cancel:type_name -> halo.plugin.v1.CancelCall
	8,  // 11: halo.plugin.v1.CallsResponse.event:type_name -> halo.plugin.v1.CallResponse
	1,  // 12: halo.plugin.v1.PluginService.Describe:input_type -> halo.plugin.v1.DescribeRequest
	5,  // 13: halo.plugin.v1.PluginService.Configure:input_type -> halo.plugin.v1.ConfigureRequest
	7,  // 14: halo.plugin.v1.PluginService.Call:input_type -> halo.plugin.v1.CallRequest
	14, // 15: halo.plugin.v1.PluginService.Calls:input_type -> halo.plugin.v1.CallsRequest
	19, // 16: halo.plugin.v1.PluginService.Release:input_type -> halo.plugin.v1.ReleaseRequest
	17, // 17: halo.plugin.v1.PluginService.OpenCallsSocket:input_type -> halo.plugin.v1.OpenCallsSocketRequest
	2,  // 18: halo.plugin.v1.PluginService.Describe:output_type -> halo.plugin.v1.DescribeResponse
	6,  // 19: halo.plugin.v1.PluginService.Configure:output_type -> halo.plugin.v1.ConfigureResponse
	8,  // 20: halo.plugin.v1.PluginService.Call:output_type -> halo.plugin.v1.CallResponse
	16, // 21: halo.plugin.v1.PluginService.Calls:output_type -> halo.plugin.v1.CallsResponse
	20, // 22: halo.plugin.v1.PluginService.Release:output_type -> halo.plugin.v1.ReleaseResponse
	18, // 23: halo.plugin.v1.PluginService.OpenCallsSocket:output_type -> halo.plugin.v1.OpenCallsSocketResponse
	18, // [18:24] is the sub-list for method output_type
	12, // [12:18] is the sub-list for method input_type
	12, // [12:12] is the sub-list for extension type_name
	12, // [12:12] is the sub-list for extension extendee
	0,  // [0:12] is the sub-list for field type_name
}

func init() { file_halo_plugin_v1_plugin_proto_init() }
func file_halo_plugin_v1_plugin_proto_init() {
	if File_halo_plugin_v1_plugin_proto != nil {
		return
	}
	file_halo_plugin_v1_plugin_proto_msgTypes[7].OneofWrappers = []any{
		(*CallResponse_Progress)(nil),
		(*CallResponse_Result)(nil),
		(*CallResponse_Failure)(nil),
		(*CallResponse_Retry)(nil),
		(*CallResponse_Error)(nil),
	}
	file_halo_plugin_v1_plugin_proto_msgTypes[13].OneofWrappers = []any{
		(*CallsRequest_Call)(nil),
		(*CallsRequest_Cancel)(nil),
	}
	type x struct{}
	out := protoimpl.TypeBuilder{
		File: protoimpl.DescBuilder{
			GoPackagePath: reflect.TypeOf(x{}).PkgPath(),
			RawDescriptor: unsafe.Slice(unsafe.StringData(file_halo_plugin_v1_plugin_proto_rawDesc), len(file_halo_plugin_v1_plugin_proto_rawDesc)),
			NumEnums:      1,
			NumMessages:   20,
			NumExtensions: 0,
			NumServices:   1,
		},
		GoTypes:           file_halo_plugin_v1_plugin_proto_goTypes,
		DependencyIndexes: file_halo_plugin_v1_plugin_proto_depIdxs,
		EnumInfos:         file_halo_plugin_v1_plugin_proto_enumTypes,
		MessageInfos:      file_halo_plugin_v1_plugin_proto_msgTypes,
	}.Build()
	File_halo_plugin_v1_plugin_proto = out.File
	file_halo_plugin_v1_plugin_proto_goTypes = nil
	file_halo_plugin_v1_plugin_proto_depIdxs = nil
}
