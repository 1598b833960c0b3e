// Package sdktest runs a Halo tool provider through the real plugin path in a test: the
// provider is served over gRPC exactly as a host would reach it (in-process with Start, or as
// a real child process with Exec), and the test calls its methods the way the host does, JSON
// in and JSON out. Setting up is one line:
//
//	clock := sdktest.Start(t, worldtime.New(time.Now)).Tool("WorldTime", nil)
//	out := clock.Call("now", map[string]any{"zone": "Asia/Tokyo"})
//	if !out.OK() { t.Fatal(out) }
package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
	"halolang.dev/halo/sdk"
	"halolang.dev/halo/sdk/internal/wire"
)

// A Client talks to one plugin, in-process or as a child process.
type Client struct {
	t   testing.TB
	rpc pluginv1.PluginServiceClient
}

// Start serves providers in this process over a real gRPC connection (a Unix socket) and
// returns a client. Everything is stopped when the test ends. The providers' log lines go to
// the test log, from the level HALO_LOG_LEVEL names (as for halo itself: trace, debug, info,
// warn, error or off; warn when it is unset).
func Start(t testing.TB, providers ...sdk.Provider) *Client {
	t.Helper()
	p, err := sdk.Plugin(providers...)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	wp := p.(*wire.Plugin)
	wp.Logger = testLogger(t, "plugin")
	// The provider's gRPC service, as sdk.Serve serves it, without go-plugin's process
	// plumbing (its stdio streams and controller): they belong to a child process, which Exec
	// starts, and in-process they only log.
	srv := wire.NewGRPCServer(nil)
	if err := wp.GRPCServer(nil, srv); err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	// A folder of its own with a short path: a socket's path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "sdktest-")
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	sock := filepath.Join(dir, "plugin.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		srv.Stop()
		<-served
		t.Fatalf("sdktest: %v", err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		<-served
	})
	return &Client{t: t, rpc: pluginv1.NewPluginServiceClient(conn)}
}

// testLogger logs to the test log at the level HALO_LOG_LEVEL names (warn when unset), so
// go-plugin's own lines (its debug lines about the child's stdio, for one) show only at debug.
func testLogger(t testing.TB, name string) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv("HALO_LOG_LEVEL"))
	if level == hclog.NoLevel {
		level = hclog.Warn
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level, Output: testWriter{t}})
}

// Exec starts the plugin executable at path as a child process, with the Halo handshake and a
// clean environment (PATH, HOME and the "NAME=value" pairs in env), and returns a client. The
// process is stopped when the test ends; its log lines and go-plugin's go to the test log,
// from the level HALO_LOG_LEVEL names (warn when unset; go-plugin's own lines are debug).
func Exec(t testing.TB, path string, env ...string) *Client {
	t.Helper()
	cmd := exec.Command(path)
	for _, name := range []string{"PATH", "HOME"} {
		if v, ok := os.LookupEnv(name); ok {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{pluginv1.ProtocolVersion: {pluginv1.PluginName: &wire.Plugin{}}},
		Cmd:              cmd,
		SkipHostEnv:      true,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           testLogger(t, "host"),
	})
	t.Cleanup(client.Kill)
	rpcClient, err := client.Client()
	if err != nil {
		t.Fatalf("sdktest: start %s: %v", path, err)
	}
	raw, err := rpcClient.Dispense(pluginv1.PluginName)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	return &Client{t: t, rpc: raw.(pluginv1.PluginServiceClient)}
}

// Build compiles the main package pkg (an import path or a ./relative folder, as `go build`
// takes it) into a temporary folder and returns the executable's path, for Exec.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "plugin")
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sdktest: go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// A ProviderInfo is one provider as Describe reports it.
type ProviderInfo struct {
	Name        string
	Description string
	Methods     []MethodInfo
}

// A MethodInfo is one method as the host sees it.
type MethodInfo struct {
	Name         string
	Description  string
	Effect       sdk.Effect
	Schema       json.RawMessage
	PipelineOnly bool
}

// Describe returns what the plugin serves, as the host reads it.
func (c *Client) Describe() []ProviderInfo {
	c.t.Helper()
	resp, err := c.rpc.Describe(context.Background(), &pluginv1.DescribeRequest{})
	if err != nil {
		c.t.Fatalf("sdktest: describe: %v", err)
	}
	var out []ProviderInfo
	for _, p := range resp.GetProviders() {
		out = append(out, ProviderInfo{Name: p.GetName(), Description: p.GetDescription(), Methods: methodInfos(p.GetMethods())})
	}
	return out
}

func methodInfos(ms []*pluginv1.Method) []MethodInfo {
	var out []MethodInfo
	for _, m := range ms {
		out = append(out, MethodInfo{Name: m.GetName(), Description: m.GetDescription(), Effect: sdk.Effect(wire.EffectFromProto(m.GetEffect())), Schema: m.GetParamsSchema(), PipelineOnly: m.GetPipelineOnly()})
	}
	return out
}

// A Tool is one configured declaration: `tool X : Provider(args..., named...)`.
type Tool struct {
	c       *Client
	id      string
	name    string
	methods []MethodInfo
}

// Configure configures provider as a declaration with named and positional arguments would,
// and returns the tool, or the configuration error the user would see.
func (c *Client) Configure(provider string, named map[string]any, args ...any) (*Tool, error) {
	if named == nil {
		named = map[string]any{}
	}
	if args == nil {
		args = []any{}
	}
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	n, err := json.Marshal(named)
	if err != nil {
		return nil, err
	}
	dir, _ := os.Getwd()
	resp, err := c.rpc.Configure(context.Background(), &pluginv1.ConfigureRequest{Provider: provider, ToolName: "Test" + provider, Args: a, NamedArgs: n, ProjectDir: dir})
	if err != nil {
		return nil, fmt.Errorf("configure: %w", err)
	}
	if msg := resp.GetError(); msg != "" {
		return nil, errors.New(msg)
	}
	tl := &Tool{c: c, id: resp.GetInstanceId(), name: "Test" + provider, methods: methodInfos(resp.GetMethods())}
	if len(tl.methods) == 0 {
		for _, p := range c.Describe() {
			if p.Name == provider {
				tl.methods = p.Methods
			}
		}
	}
	return tl, nil
}

// Tool is Configure for a configuration the test expects to work: an error fails the test.
func (c *Client) Tool(provider string, named map[string]any, args ...any) *Tool {
	c.t.Helper()
	tl, err := c.Configure(provider, named, args...)
	if err != nil {
		c.t.Fatalf("sdktest: configure %s: %v", provider, err)
	}
	return tl
}

// Methods returns the methods this configuration offers.
func (tl *Tool) Methods() []MethodInfo { return tl.methods }

// An Outcome is how a call ended, as the host saw it. Exactly one of Result, Failure, Retry
// and Code is set.
type Outcome struct {
	// Result is the JSON result of a successful call.
	Result json.RawMessage
	// Failure is the message of a domain failure (sdk.Fail), and Detail the JSON the model
	// reads for it.
	Failure string
	Detail  json.RawMessage
	// Retry marks a passing failure (sdk.Retry), with its message in Message.
	Retry      bool
	RetryAfter time.Duration
	// Code is the stable code of a fatal error (TOOL_ARGUMENT, TOOL_ERROR, ...), with its
	// message in Message.
	Code    string
	Message string
	// Progress lists the progress reports the call sent, in order.
	Progress []Progress
}

// A Progress is one progress report.
type Progress struct {
	Filled, Total float64
	Message       string
}

// OK reports whether the call returned a result.
func (o Outcome) OK() bool { return o.Result != nil }

// Decode decodes the result into v; it fails when the call did not succeed.
func (o Outcome) Decode(v any) error {
	if !o.OK() {
		return fmt.Errorf("no result: %s", o)
	}
	return json.Unmarshal(o.Result, v)
}

func (o Outcome) String() string {
	switch {
	case o.Result != nil:
		return "result " + string(o.Result)
	case o.Failure != "":
		return "failure " + string(o.Detail)
	case o.Retry:
		return fmt.Sprintf("retry after %s: %s", o.RetryAfter, o.Message)
	default:
		return o.Code + ": " + o.Message
	}
}

// Call calls method with args (anything that marshals to a JSON object; nil for none).
func (tl *Tool) Call(method string, args any) Outcome {
	tl.c.t.Helper()
	return tl.CallContext(context.Background(), method, args)
}

// CallContext is Call with a context, to test cancellation and deadlines. A call cancelled
// or out of time before its outcome has Code "CANCELLED".
func (tl *Tool) CallContext(ctx context.Context, method string, args any) Outcome {
	tl.c.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		tl.c.t.Fatalf("sdktest: arguments of %s: %v", method, err)
	}
	var o Outcome
	// The call runs on a Calls stream of its own, which the test ends when it returns: the
	// host's path (one stream for every call) with nothing to tell calls apart.
	streamCtx, endStream := context.WithCancel(context.Background())
	defer endStream()
	stream, err := tl.c.rpc.Calls(streamCtx)
	if err != nil {
		tl.c.t.Fatalf("sdktest: call %s: %v", method, err)
	}
	const id = 1
	if err := stream.Send(&pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Call{Call: &pluginv1.CallRequest{InstanceId: tl.id, Method: method, Args: b}}}); err != nil {
		tl.c.t.Fatalf("sdktest: call %s: %v", method, err)
	}
	type received struct {
		msg *pluginv1.CallsResponse
		err error
	}
	events := make(chan received)
	go func() {
		for {
			msg, err := stream.Recv()
			select {
			case events <- received{msg, err}:
			case <-streamCtx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var r received
		select {
		case <-ctx.Done():
			// What the host does: tell the plugin, and wait no more.
			_ = stream.Send(&pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Cancel{Cancel: &pluginv1.CancelCall{}}})
			o.Code, o.Message = "CANCELLED", ctx.Err().Error()
			return o
		case r = <-events:
		}
		if r.err != nil {
			if errors.Is(r.err, io.EOF) {
				tl.c.t.Fatalf("sdktest: the plugin ended the Calls stream during %s", method)
			}
			tl.c.t.Fatalf("sdktest: call %s: %v", method, r.err)
		}
		if r.msg.GetCallId() != id {
			tl.c.t.Fatalf("sdktest: call %s: an event for call %d, which was never made", method, r.msg.GetCallId())
		}
		switch ev := r.msg.GetEvent().GetEvent().(type) {
		case *pluginv1.CallResponse_Progress:
			o.Progress = append(o.Progress, Progress{Filled: ev.Progress.GetFilled(), Total: ev.Progress.GetTotal(), Message: ev.Progress.GetMessage()})
		case *pluginv1.CallResponse_Result:
			o.Result = ev.Result.GetJson()
			return o
		case *pluginv1.CallResponse_Failure:
			o.Failure, o.Detail = ev.Failure.GetMessage(), ev.Failure.GetDetail()
			if len(o.Detail) == 0 {
				o.Detail, _ = json.Marshal(map[string]string{"error": o.Failure})
			}
			return o
		case *pluginv1.CallResponse_Retry:
			o.Retry, o.Message = true, ev.Retry.GetMessage()
			o.RetryAfter = time.Duration(ev.Retry.GetRetryAfterMs()) * time.Millisecond
			return o
		case *pluginv1.CallResponse_Error:
			o.Code, o.Message = ev.Error.GetCode(), ev.Error.GetMessage()
			if o.Code == "" {
				o.Code = wire.CodeToolError
			}
			return o
		default:
			tl.c.t.Fatalf("sdktest: call %s: an event of no known kind (%T)", method, ev)
		}
	}
}

// testWriter sends log lines to the test log while the test runs.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	defer func() { _ = recover() }() // a line after the test ended has nowhere to go
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
