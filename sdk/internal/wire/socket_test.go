package wire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// startSocket serves the provider with calls sockets enabled in a folder of the test's.
func startSocket(t *testing.T, tp *testProvider) (pluginv1.PluginServiceClient, string) {
	t.Helper()
	rpc, id, _ := startSocketPlugin(t, tp)
	return rpc, id
}

func startSocketPlugin(t *testing.T, tp *testProvider) (pluginv1.PluginServiceClient, string, *Plugin) {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "wire") // short: a socket path has a length limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &Plugin{Providers: []Provider{tp.provider()}, SocketDir: dir, Token: testSecret}
	rpc, id := startPlugin(t, p)
	return rpc, id, p
}

// socketClient is the host's end of a calls socket, as the tests drive it: it has the
// methods of the Calls stream's client that the tests use.
type socketClient struct {
	conn *net.UnixConn
	r    *bufio.Reader
}

// openSocket asks for a calls socket and connects to it with the secret.
func openSocket(t *testing.T, rpc pluginv1.PluginServiceClient) *socketClient {
	t.Helper()
	resp, err := rpc.OpenCallsSocket(context.Background(), &pluginv1.OpenCallsSocketRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sc := connectSocket(t, resp.GetPath(), testSecret)
	if sc == nil {
		t.Fatal("the plugin refused the secret")
	}
	if _, err := os.Stat(resp.GetPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the calls socket is still there once the host connected: %v", err)
	}
	return sc
}

// connectSocket connects to the socket at path and sends secret; nil when the plugin closed
// the connection instead of answering.
func connectSocket(t *testing.T, path, secret string) *socketClient {
	t.Helper()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	sc := &socketClient{conn: conn, r: bufio.NewReader(conn)}
	if _, err := conn.Write(pluginv1.AppendRawFrame(nil, []byte(secret))); err != nil {
		t.Fatal(err)
	}
	ack, err := pluginv1.ReadFrame(sc.r, nil, 0)
	if err != nil {
		conn.Close()
		return nil
	}
	if len(ack) != 0 {
		t.Fatalf("answer %q", ack)
	}
	t.Cleanup(func() { conn.Close() })
	return sc
}

func (s *socketClient) Send(m *pluginv1.CallsRequest) error {
	b, err := pluginv1.AppendFrame(nil, m)
	if err != nil {
		return err
	}
	_, err = s.conn.Write(b)
	return err
}

func (s *socketClient) Recv() (*pluginv1.CallsResponse, error) {
	b, err := pluginv1.ReadFrame(s.r, nil, -1)
	if err != nil {
		return nil, err
	}
	m := &pluginv1.CallsResponse{}
	return m, proto.Unmarshal(b, m)
}

func (s *socketClient) CloseSend() error { return s.conn.CloseWrite() }

// The tests of the Calls stream, run on a calls socket: the same rules hold.
func TestCallsSocketRules(t *testing.T) {
	t.Run("calls side by side", func(t *testing.T) {
		tp := newTestProvider()
		rpc, id := startSocket(t, tp)
		testCalls(t, openSocket(t, rpc), tp, id)
	})
	t.Run("ends", func(t *testing.T) {
		tp := newTestProvider()
		rpc, id := startSocket(t, tp)
		// A broken host gets its socket closed, the gRPC stream's INVALID_ARGUMENT.
		testCallsEnd(t, func() callsClient { return openSocket(t, rpc) }, tp, id, func(err error) bool { return errors.Is(err, io.EOF) })
	})
	t.Run("waits for its calls", func(t *testing.T) {
		tp := newTestProvider()
		rpc, id := startSocket(t, tp)
		testWaitsForCalls(t, openSocket(t, rpc), tp, id)
	})
}

// TestCallsSocketSecret: the calls socket serves only a connection that sends the secret
// first. Others are closed without an answer, and the host still gets the socket after them:
// a process that found the socket can neither use it nor hold it.
func TestCallsSocketSecret(t *testing.T) {
	tp := newTestProvider()
	rpc, id, p := startSocketPlugin(t, tp)
	resp, err := rpc.OpenCallsSocket(context.Background(), &pluginv1.OpenCallsSocketRequest{})
	if err != nil {
		t.Fatal(err)
	}
	path := resp.GetPath()
	if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("the socket is open to others: %v %v", st.Mode(), err)
	}
	for _, secret := range []string{"", "guess", testSecret[:63] + "0", testSecret + "0"} {
		if connectSocket(t, path, secret) != nil {
			t.Fatalf("the secret %q opened the calls socket", secret)
		}
	}
	// A connection that sends nothing is dropped after a moment, not kept.
	silent, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	start := time.Now()
	sc := connectSocket(t, path, testSecret)
	if sc == nil {
		t.Fatal("the host's connection was refused after the others")
	}
	t.Logf("the host connected %v after a silent connection", time.Since(start).Round(time.Millisecond))
	if _, err := silent.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("the silent connection got %v, want it closed", err)
	}
	sendCall(t, sc, 1, id, "echo", `{"x":1}`)
	if msg := recv(t, sc); string(msg.GetEvent().GetResult().GetJson()) != `{"x":1}` {
		t.Fatalf("event %v", msg)
	}
	// Once the host is in, nobody else can connect: the socket is gone.
	if _, err := net.Dial("unix", path); err == nil {
		t.Fatal("the calls socket took another connection")
	}
	// The host closing the socket ends every goroutine the plugin ran for it.
	sc.conn.Close()
	ended := make(chan struct{})
	go func() { p.server.WaitCallsSockets(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin's goroutines for a closed calls socket did not end")
	}
}

// A plugin started without a socket folder (by sdktest, say) has no calls socket: the host
// uses the Calls stream.
func TestCallsSocketUnavailable(t *testing.T) {
	rpc, _ := start(t, newTestProvider())
	_, err := rpc.OpenCallsSocket(context.Background(), &pluginv1.OpenCallsSocketRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("got %v, want UNIMPLEMENTED", err)
	}
}

// A call that runs long on the socket's reading goroutine holds up the calls behind it only
// until another goroutine takes over reading; the method is then run apart from the start.
func TestCallsSocketLongCall(t *testing.T) {
	tp := newTestProvider()
	rpc, id, p := startSocketPlugin(t, tp)
	s := openSocket(t, rpc)
	sendCall(t, s, 1, id, "block", `"long"`)
	if msg := recv(t, s); msg.GetCallId() != 1 || msg.GetEvent().GetProgress() == nil {
		t.Fatalf("event %v", msg)
	}
	start := time.Now()
	sendCall(t, s, 2, id, "echo", `{}`)
	if msg := recv(t, s); msg.GetCallId() != 2 {
		t.Fatalf("event %v, want call 2's outcome while call 1 blocks", msg)
	}
	t.Logf("a call behind a long one waited %v (inlineFor %v)", time.Since(start).Round(time.Microsecond), inlineFor)
	close(tp.release)
	if msg := recv(t, s); msg.GetCallId() != 1 || msg.GetEvent().GetResult() == nil {
		t.Fatalf("event %v", msg)
	}
	// The call's time is counted just after its outcome is sent.
	m := p.server.method(&pluginv1.CallRequest{InstanceId: id, Method: "block"})
	for deadline := time.Now().Add(5 * time.Second); time.Duration(m.took.Load()) <= quickCall; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a method that ran long is still taken for a quick one")
		}
	}
}
