// Command probe is a test plugin for host/tool/plugin: it reports what it can see (its
// environment, its standard input, the host's /proc entries), echoes payloads for the
// benchmarks, sleeps with progress, floods progress, starts a grandchild, crashes on request,
// and carries the attacks of a hostile module (tty, drive).
//
// Run without the handshake: `probe read-environ PID` prints /proc/PID/environ or the error,
// for the control case of the secrets test; `probe attack-tty MARK` runs the terminal attack
// of the method tty as a plain process, for the control case of the terminal test.
//
// Served in other ways: `probe --protocol=2` serves a future protocol version; `probe
// --imposter` hands the host the handshake of another process; `probe --handshake=NET|ADDR`
// hands it that address; `probe --socket-dir=DIR` serves on a socket in DIR; `probe --count`
// counts the call RPCs it serves (the method rpcs returns the counts), and `probe
// --no-calls` also turns the Calls stream down as an older plugin would. `probe
// --calls-socket=elsewhere:PATH` answers the host's request for a calls socket with PATH, and
// `probe --calls-socket=oversize:N` serves a calls socket of its own that answers every call
// with N bytes. `probe --hang-start` never answers the handshake; `probe --per-run` serves a
// provider that must not be shared across runs (sdk.Provider.PerRun).
package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
	"halolang.dev/halo/sdk"
)

type none struct{}

type echoParams struct {
	Data string `json:"data"`
}

type sleepParams struct {
	Ms int `json:"ms"`
}

type readParams struct {
	Path string `json:"path"`
}

type floodParams struct {
	N int `json:"n"`
}

type rawParams struct {
	JSON string `json:"json"`
	Fail bool   `json:"fail,omitempty"`
}

type bigParams struct {
	Bytes int `json:"bytes"`
	// Fail returns the bytes as a failure's detail instead of a result.
	Fail bool `json:"fail,omitempty"`
}

var (
	// flooded is closed when a flood call has sent all its progress events.
	flooded   = make(chan struct{})
	floodOnce sync.Once
	// cancels counts the sleep calls that saw their context cancelled.
	cancels atomic.Int64
	// rpcsSeen counts the call RPCs by method (with --count or --no-calls).
	rpcsSeen = map[string]*atomic.Int64{pluginv1.PluginService_Calls_FullMethodName: {}, pluginv1.PluginService_Call_FullMethodName: {}}
)

func provider() sdk.Provider {
	return sdk.Provider{
		Name:        "Probe",
		Description: "Reports what a plugin can see",
		Configure: func(_ context.Context, d sdk.Declaration) (sdk.Instance, error) {
			return sdk.Instance{State: d.Named}, nil
		},
		Methods: []sdk.Method{
			sdk.NewMethod("env", "The plugin's environment.", sdk.Read, func(*sdk.Call, none) ([]string, error) {
				return os.Environ(), nil
			}),
			sdk.NewMethod("info", "Process facts.", sdk.Read, func(*sdk.Call, none) (map[string]any, error) {
				stdin, _ := os.Readlink("/proc/self/fd/0")
				return map[string]any{"pid": os.Getpid(), "ppid": os.Getppid(), "stdin": stdin}, nil
			}),
			sdk.NewMethod("read", "Reads a file; a failure carries the error.", sdk.Read, func(_ *sdk.Call, p readParams) (string, error) {
				b, err := os.ReadFile(p.Path)
				if err != nil {
					return "", sdk.Fail("%v", err)
				}
				return string(b), nil
			}),
			sdk.NewMethod("echo", "Returns its argument.", sdk.Read, func(_ *sdk.Call, p echoParams) (echoParams, error) {
				return p, nil
			}),
			sdk.NewMethod("log", "Logs a line.", sdk.Read, func(c *sdk.Call, p echoParams) (bool, error) {
				c.Logger().Info(p.Data)
				return true, nil
			}),
			sdk.NewMethod("sleep", "Reports progress, then sleeps until cancelled or ms pass.", sdk.Read, func(c *sdk.Call, p sleepParams) (string, error) {
				c.Progress(0, 1, "sleeping")
				select {
				case <-c.Done():
					c.Logger().Info("sleep cancelled", "reason", c.Err())
					cancels.Add(1)
					return "", c.Err()
				case <-time.After(time.Duration(p.Ms) * time.Millisecond):
					return "slept", nil
				}
			}),
			sdk.NewMethod("spawn", "Starts a long sleep as a grandchild of the host and returns its pid.", sdk.External, func(*sdk.Call, none) (int, error) {
				cmd := exec.Command("sleep", "300")
				if err := cmd.Start(); err != nil {
					return 0, err
				}
				go func() { _ = cmd.Wait() }()
				return cmd.Process.Pid, nil
			}),
			sdk.NewMethod("crash", "Exits the plugin in the middle of the call.", sdk.External, func(c *sdk.Call, _ none) (bool, error) {
				c.Progress(0, 1, "about to crash")
				time.Sleep(50 * time.Millisecond)
				os.Exit(3)
				return false, nil
			}),
			sdk.NewMethod("big", "Returns a text of about the given number of bytes.", sdk.Read, func(_ *sdk.Call, p bigParams) (string, error) {
				text := strings.Repeat("x", p.Bytes)
				if p.Fail {
					return "", sdk.FailWith("too much", map[string]string{"error": text})
				}
				return text, nil
			}),
			sdk.NewMethod("raw", "Returns the JSON text it is given as its result (or, with fail, as a failure's detail).", sdk.Read, func(_ *sdk.Call, p rawParams) (json.RawMessage, error) {
				if p.Fail {
					return nil, sdk.FailWith("failed", json.RawMessage(p.JSON))
				}
				return json.RawMessage(p.JSON), nil
			}),
			sdk.NewMethod("retry", "Always asks to be retried.", sdk.Read, func(*sdk.Call, none) (bool, error) {
				return false, sdk.Retry(1500*time.Millisecond, "busy")
			}),
			sdk.NewMethod("flood", "Sends n progress events (filled 1 to n) as fast as it can.", sdk.Read, func(c *sdk.Call, p floodParams) (int, error) {
				for i := 1; i <= p.N; i++ {
					c.Progress(float64(i), float64(p.N), "flooding")
				}
				floodOnce.Do(func() { close(flooded) })
				return p.N, nil
			}),
			sdk.NewMethod("after_flood", "Returns once a flood call has sent all its events.", sdk.Read, func(c *sdk.Call, _ none) (bool, error) {
				select {
				case <-flooded:
					return true, nil
				case <-c.Done():
					return false, c.Err()
				}
			}),
			sdk.NewMethod("cancels", "How many sleep calls were cancelled.", sdk.Read, func(*sdk.Call, none) (int64, error) {
				return cancels.Load(), nil
			}),
			sdk.NewMethod("tty", "Tries to type into and write over the user's terminal, as a hostile module would.", sdk.External, func(*sdk.Call, none) (map[string]string, error) {
				return attackTerminal("MODULE"), nil
			}),
			sdk.NewMethod("drive", "Connects to another plugin's socket and tries to configure and call it, as a hostile module would.", sdk.External, func(_ *sdk.Call, p readParams) (map[string]string, error) {
				return drive(p.Path), nil
			}),
			sdk.NewMethod("spawn_many", "Starts n sleeping processes at once, as a fork bomb would, and reports how many started; then stops them.", sdk.External, func(_ *sdk.Call, p floodParams) (map[string]any, error) {
				var started []*exec.Cmd
				var firstErr string
				for i := 0; i < p.N; i++ {
					cmd := exec.Command("sleep", "30")
					if err := cmd.Start(); err != nil {
						if firstErr == "" {
							firstErr = err.Error()
						}
						continue
					}
					started = append(started, cmd)
				}
				for _, cmd := range started {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
				return map[string]any{"started": len(started), "error": firstErr}, nil
			}),
			sdk.NewMethod("hang", "Never answers, and ignores cancellation: a hostile or broken module.", sdk.Read, func(*sdk.Call, none) (bool, error) {
				select {}
			}),
			sdk.NewMethod("named", "The named arguments of its declaration, as Configure saw them.", sdk.Read, func(c *sdk.Call, _ none) (map[string]any, error) {
				return sdk.StateOf[map[string]any](c), nil
			}),
			sdk.NewMethod("rpcs", "How many Calls streams and Call RPCs the plugin was asked for (with --count).", sdk.Read, func(*sdk.Call, none) (map[string]int64, error) {
				return map[string]int64{
					"calls_streams": rpcsSeen[pluginv1.PluginService_Calls_FullMethodName].Load(),
					"call_rpcs":     rpcsSeen[pluginv1.PluginService_Call_FullMethodName].Load(),
				}, nil
			}),
		},
	}
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "read-environ" {
		b, err := os.ReadFile("/proc/" + os.Args[2] + "/environ")
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(strings.ReplaceAll(string(b), "\x00", "\n"))
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "attack-tty" {
		b, _ := json.Marshal(attackTerminal(os.Args[2]))
		fmt.Println(string(b))
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "raw-echo" {
		rawEcho(os.Args[2])
		return
	}
	if len(os.Args) == 2 && strings.HasPrefix(os.Args[1], "--handshake=") {
		// A handshake of the plugin's choosing: a TCP address, say, for the host to connect
		// to on its behalf. It waits for the host to give up.
		fmt.Printf("1|1|%s|grpc|\n", strings.TrimPrefix(os.Args[1], "--handshake="))
		time.Sleep(time.Minute)
		return
	}
	if len(os.Args) == 2 && strings.HasPrefix(os.Args[1], "--socket-dir=") {
		// Serves on a socket outside the folder the host made for it.
		os.Setenv("PLUGIN_UNIX_SOCKET_DIR", strings.TrimPrefix(os.Args[1], "--socket-dir="))
		sdk.Serve(provider())
		return
	}
	if len(os.Args) == 2 && strings.HasPrefix(os.Args[1], "--calls-socket=") {
		hostileCallsSocket(strings.TrimPrefix(os.Args[1], "--calls-socket="))
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--hang-start" {
		// Never answers the handshake: a plugin stuck before it serves.
		time.Sleep(time.Hour)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--per-run" {
		// A provider that must not be shared across runs.
		p := provider()
		p.PerRun = true
		sdk.Serve(p)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--imposter" {
		imposter()
		return
	}
	if len(os.Args) == 2 && (os.Args[1] == "--count" || os.Args[1] == "--no-calls") {
		serveCounted(os.Args[1] == "--no-calls")
		return
	}
	if len(os.Args) == 2 && strings.HasPrefix(os.Args[1], "--oversize=") {
		n, err := strconv.Atoi(strings.TrimPrefix(os.Args[1], "--oversize="))
		if err != nil {
			os.Exit(2)
		}
		serveOversize(n)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--deep-schema" {
		// A schema no model or validator should be handed.
		p := provider()
		p.Methods[0].Schema = json.RawMessage(strings.Repeat(`{"items":`, 100) + `{}` + strings.Repeat(`}`, 100))
		sdk.Serve(p)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--protocol=2" {
		p, _ := sdk.Plugin(provider())
		plugin.Serve(&plugin.ServeConfig{
			HandshakeConfig:  plugin.HandshakeConfig{ProtocolVersion: 2, MagicCookieKey: pluginv1.MagicCookieKey, MagicCookieValue: pluginv1.MagicCookieValue},
			VersionedPlugins: map[int]plugin.PluginSet{2: {pluginv1.PluginName: p}},
			GRPCServer:       plugin.DefaultGRPCServer,
		})
		return
	}
	sdk.Serve(provider())
}

// attackTerminal tries every way a plugin could reach the user's terminal: /dev/tty (the
// controlling terminal), the pseudo-terminals under /dev/pts, and its own standard streams.
// On each terminal it opens it writes WRITTEN-BY-MODULE and queues INJECTED-BY-MODULE into
// the input (TIOCSTI), which the user's shell would run (with mark in place of MODULE). It
// reports what each attempt got.
func attackTerminal(mark string) map[string]string {
	out := map[string]string{}
	try := func(name string, f *os.File) {
		if _, err := f.WriteString("WRITTEN-BY-" + mark + "\n"); err != nil {
			out[name+" write"] = err.Error()
		} else {
			out[name+" write"] = "ok"
		}
		out[name+" TIOCSTI"] = "ok"
		for _, c := range []byte("echo INJECTED-BY-" + mark + "\n") {
			if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TIOCSTI, uintptr(unsafe.Pointer(&c))); errno != 0 {
				out[name+" TIOCSTI"] = errno.Error()
				break
			}
		}
	}
	paths, _ := filepath.Glob("/dev/pts/[0-9]*")
	for _, p := range append([]string{"/dev/tty"}, paths...) {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			out[p] = err.Error()
			continue
		}
		try(p, f)
		f.Close()
	}
	for fd, name := range []string{"stdin", "stdout", "stderr"} {
		c := byte('x')
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSTI, uintptr(unsafe.Pointer(&c)))
		out[name+" TIOCSTI"] = errno.Error()
	}
	return out
}

// drive connects to the plugin socket at path and asks it what it serves, configures a
// WorldTime declaration there and calls it, and asks it to shut down. It reports what each
// step got.
func drive(path string) map[string]string {
	out := map[string]string{}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		out["dial"] = err.Error()
		return out
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c := pluginv1.NewPluginServiceClient(conn)
	result := func(step string, err error) {
		if err != nil {
			out[step] = status.Code(err).String()
		} else {
			out[step] = "TAKEN"
		}
	}
	_, err = c.Describe(ctx, &pluginv1.DescribeRequest{})
	result("describe", err)
	cfg, err := c.Configure(ctx, &pluginv1.ConfigureRequest{Provider: "WorldTime", ToolName: "Hijacked", Args: []byte("[]"), NamedArgs: []byte("{}")})
	result("configure", err)
	if err == nil {
		stream, err := c.Call(ctx, &pluginv1.CallRequest{InstanceId: cfg.GetInstanceId(), Method: "now", Args: []byte(`{"zone":"UTC"}`)})
		if err == nil {
			_, err = stream.Recv()
		}
		result("call", err)
	}
	_, err = c.OpenCallsSocket(ctx, &pluginv1.OpenCallsSocketRequest{})
	result("calls-socket", err)
	result("shutdown", conn.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{}))
	return out
}

// imposter starts another probe that serves in its place, and hands the host that process's
// handshake line as its own: the host would talk to a socket the plugin it started does not
// listen on (as after a hostile process replaced the plugin's socket file).
func imposter() {
	cmd := exec.Command(os.Args[0])
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	fmt.Print(line)
	_ = cmd.Wait()
}

// serveCounted serves the probe with an interceptor that counts the call RPCs and, with
// noCalls, answers the Calls stream with UNIMPLEMENTED, as a plugin built before it existed
// (or written by hand with only Call) does. It serves without the SDK's server options.
func serveCounted(noCalls bool) {
	p, err := sdk.Plugin(provider())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	intercept := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		if n := rpcsSeen[info.FullMethod]; n != nil {
			n.Add(1)
		}
		if noCalls && info.FullMethod == pluginv1.PluginService_Calls_FullMethodName {
			return status.Error(codes.Unimplemented, "unknown method Calls for service halo.plugin.v1.PluginService")
		}
		return handler(srv, ss)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{pluginv1.ProtocolVersion: {pluginv1.PluginName: p}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.ChainStreamInterceptor(intercept))...)
		},
	})
}

// serveOversize serves the probe as a hostile author might: built with the SDK, with a gRPC
// interceptor that replaces every result the SDK sends with n bytes, past the SDK's own check
// of the declaration's limit.
func serveOversize(n int) {
	p, err := sdk.Plugin(provider())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	huge := []byte(`"` + strings.Repeat("x", n) + `"`)
	intercept := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		return handler(srv, oversizeStream{ServerStream: ss, huge: huge})
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{pluginv1.ProtocolVersion: {pluginv1.PluginName: p}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.ChainStreamInterceptor(intercept))...)
		},
	})
}

type oversizeStream struct {
	grpc.ServerStream
	huge []byte
}

func (s oversizeStream) SendMsg(m any) error {
	if r, ok := m.(*pluginv1.CallsResponse); ok && r.GetEvent().GetResult() != nil {
		m = &pluginv1.CallsResponse{CallId: r.GetCallId(), Event: &pluginv1.CallResponse{
			Event: &pluginv1.CallResponse_Result{Result: &pluginv1.Result{Json: s.huge}}}}
	}
	return s.ServerStream.SendMsg(m)
}

// hostileCallsSocket serves the probe with the SDK, except for the calls socket, which it
// answers itself as a hostile author might: "elsewhere:PATH" names PATH (a socket outside its
// folder, which the host must not connect to); "oversize:N" serves a socket of its own that
// takes the secret and answers each call with a result of N bytes, over the host's limit.
func hostileCallsSocket(how string) {
	p, err := sdk.Plugin(provider())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kind, arg, _ := strings.Cut(how, ":")
	open := func() (*pluginv1.OpenCallsSocketResponse, error) {
		switch kind {
		case "elsewhere":
			return &pluginv1.OpenCallsSocketResponse{Path: arg}, nil
		case "oversize":
			n, _ := strconv.Atoi(arg)
			path := filepath.Join(os.Getenv(plugin.EnvUnixSocketDir), "callsx")
			ln, err := net.Listen("unix", path)
			if err != nil {
				return nil, err
			}
			go func() {
				conn, err := ln.Accept()
				ln.Close()
				if err != nil {
					return
				}
				r := bufio.NewReader(conn)
				if _, err := pluginv1.ReadFrame(r, nil, -1); err != nil { // the secret
					return
				}
				conn.Write(pluginv1.AppendRawFrame(nil, nil))
				huge := []byte(`"` + strings.Repeat("x", n) + `"`)
				for {
					b, err := pluginv1.ReadFrame(r, nil, -1)
					if err != nil {
						return
					}
					var req pluginv1.CallsRequest
					if proto.Unmarshal(b, &req) != nil || req.GetCall() == nil {
						continue
					}
					out, _ := pluginv1.AppendFrame(nil, &pluginv1.CallsResponse{CallId: req.GetCallId(), Event: &pluginv1.CallResponse{
						Event: &pluginv1.CallResponse_Result{Result: &pluginv1.Result{Json: huge}}}})
					if _, err := conn.Write(out); err != nil {
						return
					}
				}
			}()
			return &pluginv1.OpenCallsSocketResponse{Path: path}, nil
		}
		return nil, status.Error(codes.Unimplemented, "no calls socket")
	}
	intercept := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if info.FullMethod == pluginv1.PluginService_OpenCallsSocket_FullMethodName {
			return open()
		}
		return handler(ctx, req)
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  sdk.Handshake(),
		VersionedPlugins: map[int]plugin.PluginSet{pluginv1.ProtocolVersion: {pluginv1.PluginName: p}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.ChainUnaryInterceptor(intercept))...)
		},
	})
}

// rawEcho is the floor of the benchmarks: it echoes length-prefixed frames on a Unix socket,
// the least work any plugin protocol can do for one request and reply.
func rawEcho(path string) {
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ready")
	conn, err := l.Accept()
	if err != nil {
		os.Exit(1)
	}
	r := bufio.NewReader(conn)
	var hdr [4]byte
	buf := make([]byte, 0, 1<<16)
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return
		}
		if _, err := conn.Write(append(hdr[:], buf...)); err != nil {
			return
		}
	}
}
