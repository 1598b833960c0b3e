package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// testProvider has methods to steer calls from a test: block runs until its call is
// cancelled or release is closed, late reports progress after it returned.
type testProvider struct {
	cancelled chan string // the ids (args) of block calls whose context ended
	release   chan struct{}
	lateDone  chan struct{} // closed once late's progress after its return was attempted
	loggers   chan hclog.Logger
	// slowExited is set when a slow_exit call, cancelled, has finished cleaning up.
	slowExited atomic.Bool
}

func newTestProvider() *testProvider {
	return &testProvider{cancelled: make(chan string, 10), release: make(chan struct{}), lateDone: make(chan struct{}), loggers: make(chan hclog.Logger, 10)}
}

func (tp *testProvider) provider() Provider {
	return Provider{Name: "Test", Methods: []Method{
		{Name: "echo", Run: func(_ *CallInfo, args json.RawMessage) (any, error) { return args, nil }},
		{Name: "block", Run: func(c *CallInfo, args json.RawMessage) (any, error) {
			c.Progress(0, 1, "blocking")
			select {
			case <-c.Ctx.Done():
				tp.cancelled <- string(args)
				return nil, c.Ctx.Err()
			case <-tp.release:
				return "released", nil
			}
		}},
		{Name: "late", Run: func(c *CallInfo, _ json.RawMessage) (any, error) {
			go func() {
				time.Sleep(10 * time.Millisecond)
				c.Progress(1, 1, "too late")
				close(tp.lateDone)
			}()
			return "early", nil
		}},
		{Name: "after_late", Run: func(c *CallInfo, _ json.RawMessage) (any, error) {
			<-tp.lateDone
			return true, nil
		}},
		{Name: "slow_exit", Run: func(c *CallInfo, _ json.RawMessage) (any, error) {
			c.Progress(0, 1, "running")
			<-c.Ctx.Done()
			time.Sleep(50 * time.Millisecond) // cleaning up after the cancel
			tp.slowExited.Store(true)
			return nil, c.Ctx.Err()
		}},
		{Name: "logger", Run: func(c *CallInfo, _ json.RawMessage) (any, error) {
			tp.loggers <- c.Logger
			return true, nil
		}},
	}}
}

// start serves the provider over a real gRPC connection and configures one instance.
func start(t *testing.T, tp *testProvider) (pluginv1.PluginServiceClient, string) {
	t.Helper()
	return startPlugin(t, &Plugin{Providers: []Provider{tp.provider()}})
}

// startPlugin serves p over a real gRPC connection and configures one instance of Test.
func startPlugin(t *testing.T, p *Plugin) (pluginv1.PluginServiceClient, string) {
	t.Helper()
	client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{pluginv1.PluginName: p})
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense(pluginv1.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	rpc := raw.(pluginv1.PluginServiceClient)
	resp, err := rpc.Configure(context.Background(), &pluginv1.ConfigureRequest{Provider: "Test", ToolName: "T"})
	if err != nil || resp.GetError() != "" {
		t.Fatalf("configure: %v %s", err, resp.GetError())
	}
	return rpc, resp.GetInstanceId()
}

func openCalls(t *testing.T, rpc pluginv1.PluginServiceClient) pluginv1.PluginService_CallsClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stream, err := rpc.Calls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return stream
}

// callsClient is the host's end of a Calls stream or of a calls socket.
type callsClient interface {
	Send(*pluginv1.CallsRequest) error
	Recv() (*pluginv1.CallsResponse, error)
	CloseSend() error
}

func sendCall(t *testing.T, s callsClient, id uint64, instance, method, args string) {
	t.Helper()
	if err := s.Send(&pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Call{Call: &pluginv1.CallRequest{InstanceId: instance, Method: method, Args: []byte(args)}}}); err != nil {
		t.Fatal(err)
	}
}

func sendCancel(t *testing.T, s callsClient, id uint64) {
	t.Helper()
	if err := s.Send(&pluginv1.CallsRequest{CallId: id, Kind: &pluginv1.CallsRequest_Cancel{Cancel: &pluginv1.CancelCall{}}}); err != nil {
		t.Fatal(err)
	}
}

func recv(t *testing.T, s callsClient) *pluginv1.CallsResponse {
	t.Helper()
	msg, err := s.Recv()
	if err != nil {
		t.Fatalf("recv: %v", err)
	}
	return msg
}

// TestCallsStream runs calls side by side on one stream: a blocked call holds up nobody,
// events carry their call's id, a cancel reaches the right call and leaves no outcome
// behind, and nothing of a call follows its outcome.
func TestCallsStream(t *testing.T) {
	tp := newTestProvider()
	rpc, id := start(t, tp)
	testCalls(t, openCalls(t, rpc), tp, id)
}

func testCalls(t *testing.T, s callsClient, tp *testProvider, id string) {
	sendCall(t, s, 1, id, "block", `"one"`)
	if msg := recv(t, s); msg.GetCallId() != 1 || msg.GetEvent().GetProgress().GetMessage() != "blocking" {
		t.Fatalf("first event = %v, want call 1's progress", msg)
	}
	sendCall(t, s, 2, id, "echo", `{"x":2}`)
	if msg := recv(t, s); msg.GetCallId() != 2 || string(msg.GetEvent().GetResult().GetJson()) != `{"x":2}` {
		t.Fatalf("event = %v, want call 2's result while call 1 blocks", msg)
	}
	sendCancel(t, s, 1)
	if got := <-tp.cancelled; got != `"one"` {
		t.Fatalf("cancelled %s, want call 1", got)
	}
	// A cancel of a call that ended, or that never was, changes nothing.
	sendCancel(t, s, 2)
	sendCancel(t, s, 99)
	sendCall(t, s, 3, id, "late", `{}`)
	if msg := recv(t, s); msg.GetCallId() != 3 || msg.GetEvent().GetResult() == nil {
		t.Fatalf("event = %v, want call 3's result", msg)
	}
	// after_late answers once late's goroutine has tried to report progress, so anything
	// sent for call 3 (or call 1, cancelled) would come before it.
	sendCall(t, s, 4, id, "after_late", `{}`)
	if msg := recv(t, s); msg.GetCallId() != 4 {
		t.Fatalf("event = %v: nothing of a call may follow its outcome or its cancellation", msg)
	}
	// Errors of one call are outcomes, not the stream's end.
	sendCall(t, s, 5, "nope", "echo", `{}`)
	if msg := recv(t, s); msg.GetCallId() != 5 || msg.GetEvent().GetError().GetCode() != CodeToolConfig {
		t.Fatalf("event = %v, want call 5's TOOL_CONFIG error", msg)
	}
	sendCall(t, s, 6, id, "nope", ``)
	if msg := recv(t, s); msg.GetCallId() != 6 || msg.GetEvent().GetError().GetCode() != CodeUnknownMethod {
		t.Fatalf("event = %v, want call 6's TOOL_UNKNOWN_METHOD error", msg)
	}
	// A kind of message this plugin does not know is ignored.
	if err := s.Send(&pluginv1.CallsRequest{CallId: 7}); err != nil {
		t.Fatal(err)
	}
	sendCall(t, s, 8, id, "echo", ``)
	if msg := recv(t, s); msg.GetCallId() != 8 || string(msg.GetEvent().GetResult().GetJson()) != `{}` {
		t.Fatalf("event = %v, want call 8's result, {} for no arguments", msg)
	}
}

// TestCallsStreamEnds checks the two ends of a stream: the host closing its side cancels the
// calls still running and ends the stream cleanly; a broken host (call id 0, an id already
// running) ends it with INVALID_ARGUMENT.
func TestCallsStreamEnds(t *testing.T) {
	tp := newTestProvider()
	rpc, id := start(t, tp)
	testCallsEnd(t, func() callsClient { return openCalls(t, rpc) }, tp, id, func(err error) bool { return status.Code(err) == codes.InvalidArgument })
}

// testCallsEnd checks the ends of the streams open returns; broken says whether an error is
// the end a broken host gets.
func testCallsEnd(t *testing.T, open func() callsClient, tp *testProvider, id string, broken func(error) bool) {
	s := open()
	sendCall(t, s, 1, id, "block", `"closed"`)
	recv(t, s) // its progress
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got := <-tp.cancelled; got != `"closed"` {
		t.Fatalf("cancelled %s", got)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the host closed its side: %v, want the stream's clean end", err)
	}

	for _, tt := range []struct {
		name string
		send func(s callsClient)
	}{
		{"call id 0", func(s callsClient) { sendCall(t, s, 0, id, "echo", `{}`) }},
		{"cancel id 0", func(s callsClient) { sendCancel(t, s, 0) }},
		{"id running", func(s callsClient) {
			sendCall(t, s, 1, id, "block", `"dup"`)
			sendCall(t, s, 1, id, "echo", `{}`)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := open()
			tt.send(s)
			for {
				_, err := s.Recv()
				if err == nil {
					continue // the blocked call's progress
				}
				if !broken(err) {
					t.Fatalf("stream ended with %v, want a broken host's end", err)
				}
				break
			}
		})
	}
	// The call left running by the duplicate id was cancelled with its stream.
	if got := <-tp.cancelled; got != `"dup"` {
		t.Fatalf("cancelled %s", got)
	}
}

// TestCallsStreamWaitsForItsCalls: the handler, which owns the goroutines running the calls,
// returns (and the stream ends) only once they have, cancelled, returned.
func TestCallsStreamWaitsForItsCalls(t *testing.T) {
	tp := newTestProvider()
	rpc, id := start(t, tp)
	testWaitsForCalls(t, openCalls(t, rpc), tp, id)
}

func testWaitsForCalls(t *testing.T, s callsClient, tp *testProvider, id string) {
	sendCall(t, s, 1, id, "slow_exit", `{}`)
	recv(t, s) // its progress: the call is running
	if err := s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the host closed its side: %v, want the stream's clean end", err)
	}
	if !tp.slowExited.Load() {
		t.Fatal("the stream ended while one of its calls was still running")
	}
}

// TestCallRPC covers the older form, one stream per call, which older hosts use.
func TestCallRPC(t *testing.T) {
	tp := newTestProvider()
	rpc, id := start(t, tp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := rpc.Call(ctx, &pluginv1.CallRequest{InstanceId: id, Method: "block", Args: []byte(`"rpc"`)})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := stream.Recv(); err != nil || msg.GetProgress().GetMessage() != "blocking" {
		t.Fatalf("first event = %v, %v", msg, err)
	}
	cancel()
	if got := <-tp.cancelled; got != `"rpc"` {
		t.Fatalf("cancelled %s", got)
	}
	stream, err = rpc.Call(context.Background(), &pluginv1.CallRequest{InstanceId: id, Method: "echo", Args: []byte(`[1]`)})
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := stream.Recv(); err != nil || string(msg.GetResult().GetJson()) != `[1]` {
		t.Fatalf("echo = %v, %v", msg, err)
	}
	if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the outcome: %v, want the end of the stream", err)
	}
}

// TestLoggerMadeOncePerMethod checks that calls of one instance's method share their logger:
// building a named logger with fields on every call showed in profiles.
func TestLoggerMadeOncePerMethod(t *testing.T) {
	tp := newTestProvider()
	rpc, id := start(t, tp)
	s := openCalls(t, rpc)
	for i := range 2 {
		sendCall(t, s, uint64(i+1), id, "logger", `{}`)
		recv(t, s)
	}
	if a, b := <-tp.loggers, <-tp.loggers; a != b {
		t.Error("each call made its own logger")
	}
}

// The limit the host sends with Configure bounds each result of that instance: a larger one
// is answered with TOOL_LIMIT, and the stream goes on. Without the metadata, the default holds.
func TestResultLimit(t *testing.T) {
	tp := newTestProvider()
	rpc, defaultID := start(t, tp)
	ctx := metadata.AppendToOutgoingContext(context.Background(), MaxResultMetadata, "100")
	resp, err := rpc.Configure(ctx, &pluginv1.ConfigureRequest{Provider: "Test", ToolName: "Small"})
	if err != nil || resp.GetError() != "" {
		t.Fatalf("configure: %v %s", err, resp.GetError())
	}
	small := resp.GetInstanceId()
	s := openCalls(t, rpc)
	big := `"` + strings.Repeat("x", 200) + `"`
	sendCall(t, s, 1, small, "echo", big)
	if e := recv(t, s).GetEvent().GetError(); e.GetCode() != CodeLimit || !strings.Contains(e.GetMessage(), "max_result_bytes") {
		t.Errorf("over the limit: %v", e)
	}
	sendCall(t, s, 2, small, "echo", `"ok"`)
	if r := recv(t, s).GetEvent().GetResult(); string(r.GetJson()) != `"ok"` {
		t.Errorf("under the limit: %v", r)
	}
	sendCall(t, s, 3, defaultID, "echo", big)
	if r := recv(t, s).GetEvent().GetResult(); len(r.GetJson()) != len(big) {
		t.Errorf("the default limit: %v", r)
	}
}

// Configure tells the host whether the provider must not be shared across runs.
func TestConfigureSaysPerRun(t *testing.T) {
	for _, perRun := range []bool{false, true} {
		p := (&testProvider{}).provider()
		p.PerRun = perRun
		client, _ := plugin.TestPluginGRPCConn(t, false, map[string]plugin.Plugin{pluginv1.PluginName: &Plugin{Providers: []Provider{p}}})
		raw, err := client.Dispense(pluginv1.PluginName)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := raw.(pluginv1.PluginServiceClient).Configure(context.Background(), &pluginv1.ConfigureRequest{Provider: "Test", ToolName: "T"})
		if err != nil || resp.GetPerRun() != perRun {
			t.Errorf("PerRun %v: Configure answered per_run %v (%v)", perRun, resp.GetPerRun(), err)
		}
		client.Close()
	}
}
