package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/internal/ptytest"
	"halolang.dev/halo/internal/usertest"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// Attack tests: what a hostile module package, built with the SDK like any other, tries
// against the host and the user. The probe (testdata/probe) carries the attacks as methods.

// modeEnv names how a helper host starts its plugin: "plain" (no sandbox) or "sandbox", each
// with "+userns" for a user namespace even as root.
const modeEnv = "HALO_PLUGIN_TEST_MODE"

var startModes = []string{"plain", "plain+userns", "sandbox", "sandbox+userns"}

// startProbe starts the probe in the mode modeEnv names, as a helper host.
func startProbe(ctx context.Context) (*plugin.Client, tool.Provider, error) {
	mode := os.Getenv(modeEnv)
	cmd := plugin.Command{Name: "Probe", Path: os.Getenv("PROBE_BIN"), Getenv: os.LookupEnv}
	if strings.HasPrefix(mode, "sandbox") {
		cmd.Sandbox = func(env []string) error { return sandbox.ConfineThread(sandbox.Policy{}, cmd.Path, env) }
	}
	cl := plugin.New(cmd, plugin.Options{UserNamespace: strings.HasSuffix(mode, "+userns")})
	p, err := cl.Open(ctx, tool.Declaration{Name: "T", Provider: "Probe"})
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, p, nil
}

// helperTTY is a host whose standard input is its controlling terminal, as halo's is when a
// user runs it from a shell. A plain child of it attacks the terminal first (the control: the
// harness must see that). Then the probe, started as modeEnv says, tries the same from its
// tty method. It prints what each attempt got.
func helperTTY() int {
	out, err := exec.Command(os.Getenv("PROBE_BIN"), "attack-tty", "CONTROL").CombinedOutput()
	fmt.Printf("control: %v %s", err, out)
	ctx := context.Background()
	cl, p, err := startProbe(ctx)
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	defer cl.Close()
	res, err := p.Call(ctx, tool.Request{Method: "tty"})
	if err != nil {
		fmt.Println("tty:", err)
		return 1
	}
	fmt.Printf("module: %s\n", res)
	return 0
}

// TestModuleCannotTypeIntoTheTerminal is item 1 of the red-team review for module packages:
// a plugin stayed in the host's session, so it could open /dev/tty and queue a command into
// the user's terminal (TIOCSTI). Now every plugin starts in a session of its own without a
// controlling terminal (no /dev/tty), and under a seccomp filter that refuses TIOCSTI and
// TIOCLINUX, with or without a sandbox. Only a plugin without Landlock (a kernel without it)
// can still open the user's terminal by its /dev/pts path and write to it, as it can write
// any file of the user's: docs/plugins-sandbox.md says so.
func TestModuleCannotTypeIntoTheTerminal(t *testing.T) {
	requireLinux(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	asBothUsers(t, func(t *testing.T) {
		for _, mode := range startModes {
			t.Run(mode, func(t *testing.T) {
				term, err := ptytest.Open()
				if err != nil {
					t.Fatal(err)
				}
				defer term.Close()
				var out bytes.Buffer
				cmd := exec.Command(exe, "-test.run=^$")
				cmd.Env = append(os.Environ(), helperEnv+"=tty", modeEnv+"="+mode, "PROBE_BIN="+bins.probe)
				cmd.Stdout, cmd.Stderr = &out, &out
				if err := term.Start(cmd); err != nil {
					t.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					t.Fatalf("host: %v\n%s", err, out.String())
				}
				seen := term.Seen(5 * time.Second)
				t.Logf("host:\n%s\nterminal: %q", out.String(), seen)
				if !strings.Contains(seen, "INJECTED-BY-CONTROL") {
					t.Fatalf("control: a plain child of the host could not type into its terminal, so the test proves nothing (terminal: %q)", seen)
				}
				if strings.Contains(seen, "INJECTED-BY-MODULE") {
					t.Errorf("a module typed into the user's terminal")
				}
				if strings.Contains(seen, "WRITTEN-BY-MODULE") && strings.HasPrefix(mode, "sandbox") {
					t.Errorf("a sandboxed module wrote over the user's terminal")
				}
				_, res, _ := strings.Cut(out.String(), "module: ")
				var got map[string]string
				if err := json.Unmarshal([]byte(res), &got); err != nil {
					t.Fatalf("%v in %q", err, res)
				}
				if got["/dev/tty"] == "" {
					t.Errorf("the module opened /dev/tty: %v", got)
				}
			})
		}
	})
}

// TestModuleCannotDriveAnotherPlugin is item 3 of the red-team review for module packages: a
// plugin that reaches another plugin's socket (its path is in /proc/net/unix) gets
// UNAUTHENTICATED for every call, go-plugin's shutdown included, and the victim keeps
// serving its host.
func TestModuleCannotDriveAnotherPlugin(t *testing.T) {
	requireLinux(t)
	victim := newClient(t, plugin.Command{Name: "WorldTime", Path: bins.worldtime}, plugin.Options{})
	clock, err := victim.Open(context.Background(), tool.Declaration{Name: "Clock", Provider: "WorldTime"})
	if err != nil {
		t.Fatal(err)
	}
	pid := victim.PID()
	sock := pluginSocket(t, pid)
	attacker := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{}))
	// Its own secret is not in its environment, for the programs it starts to inherit.
	env, err := call(t, attacker, "env", `{}`)
	if err != nil || strings.Contains(string(env), pluginv1.TokenEnv) {
		t.Fatalf("the plugin's environment holds its connection secret: %s %v", env, err)
	}
	res, err := call(t, attacker, "drive", fmt.Sprintf(`{"path":%q}`, sock))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"describe": "Unauthenticated", "configure": "Unauthenticated", "calls-socket": "Unauthenticated", "shutdown": "Unauthenticated"}
	for step, code := range want {
		if got[step] != code {
			t.Errorf("%s: %q, want %q (all: %v)", step, got[step], code, got)
		}
	}
	if victim.PID() != pid {
		t.Fatal("the victim plugin was stopped")
	}
	if _, err := clock.Call(context.Background(), tool.Request{Method: "now", Args: json.RawMessage(`{"zone":"UTC"}`)}); err != nil {
		t.Fatalf("the victim no longer serves its host: %v", err)
	}
}

// TestHostTalksOnlyToItsPlugin: the host checks, before it sends anything (the connection
// secret included), that the socket the handshake names is served by the process it started.
// The probe hands the host another process's handshake, as a hostile process that replaced
// the plugin's socket file would have the host connect to it.
func TestHostTalksOnlyToItsPlugin(t *testing.T) {
	requireLinux(t)
	c := newClient(t, plugin.Command{Name: "Imposter", Path: bins.probe, Args: []string{"--imposter"}}, plugin.Options{StartTimeout: 5 * time.Second})
	_, err := c.Open(context.Background(), tool.Declaration{Name: "I", Provider: "Probe"})
	if err == nil || !strings.Contains(err.Error(), "not by the plugin") {
		t.Fatalf("the host talked to a socket another process serves: %v", err)
	}
}

// TestModuleCannotProxyTheNetwork is item 4 of the red-team review: a module without network
// named a TCP address in its handshake line, and the unconfined host connected there and sent
// it every declaration and call. Now the host accepts only a Unix socket directly inside the
// folder it made for that plugin, and connects to nothing else.
func TestModuleCannotProxyTheNetwork(t *testing.T) {
	requireLinux(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := countConnections(ln)
	outside := t.TempDir()
	for _, c := range []struct {
		name, arg, want string
	}{
		{"tcp", "--handshake=tcp|" + ln.Addr().String(), `names a "tcp" address`},
		{"unix elsewhere", "--socket-dir=" + outside, "outside the folder the host made for it"},
		{"unix path with ..", "--handshake=unix|" + filepath.Join(outside, "..", "x"), "outside the folder the host made for it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newClient(t, plugin.Command{Name: "Proxy", Path: bins.probe, Args: []string{c.arg}}, plugin.Options{StartTimeout: 5 * time.Second})
			_, err := cl.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	if n := accepted(); n != 0 {
		t.Fatalf("the host connected %d times to the TCP address a plugin named", n)
	}
}

// TestSilentModuleTimesOut is item 13 of the red-team review, its first half: a module call
// had no time limit, so a module that never answers hung the run. Now every call of a module
// (and its Configure and Describe) has one (Options.CallTimeout; the module declarations of
// host/tool/packages use DefaultCallTimeout), a declaration may set its own with timeout_ms:,
// which the host takes out of the arguments the plugin sees, and the plugin keeps serving.
func TestSilentModuleTimesOut(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{CallTimeout: time.Minute, TimeoutArg: "timeout_ms"})
	p, err := c.Open(context.Background(), tool.Declaration{Name: "Slow", Provider: "Probe", Named: map[string]any{"timeout_ms": float64(300), "other": "kept"}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Call(context.Background(), tool.Request{Method: "hang"})
	took := time.Since(start)
	if tool.Code(err) != tool.CodeTimeout || !tool.IsRetryable(err) || !strings.Contains(err.Error(), "within 300ms") || !strings.Contains(err.Error(), "timeout_ms") {
		t.Fatalf("a call that never answers: %v (code %q)", err, tool.Code(err))
	}
	if took > 10*time.Second {
		t.Fatalf("the call took %s to time out", took)
	}
	named, err := call(t, p, "named", `{}`)
	if err != nil || string(named) != `{"other":"kept"}` {
		t.Fatalf("the plugin saw the named arguments %s (%v); want timeout_ms taken out", named, err)
	}
	for _, bad := range []any{"soon", float64(-1), float64(0)} {
		_, err := c.Open(context.Background(), tool.Declaration{Name: "Bad", Provider: "Probe", Named: map[string]any{"timeout_ms": bad}})
		if tool.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "timeout_ms") {
			t.Errorf("timeout_ms: %v: %v, want TOOL_CONFIG", bad, err)
		}
	}
	// Without timeout_ms, CallTimeout applies; the caller's own sooner deadline still wins.
	d := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{CallTimeout: 200 * time.Millisecond})
	q := openProbe(t, d)
	if _, err := q.Call(context.Background(), tool.Request{Method: "hang"}); tool.Code(err) != tool.CodeTimeout || !strings.Contains(err.Error(), "within 200ms") {
		t.Fatalf("the default call timeout: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := q.Call(ctx, tool.Request{Method: "hang"}); tool.Code(err) != tool.CodeTimeout || strings.Contains(err.Error(), "within 200ms") {
		t.Fatalf("the caller's deadline: %v", err)
	}
}

// TestForkBombIsLimited is item 13 of the red-team review, its second half: a plugin started
// 1,000 processes, and nothing stopped it. Now a plugin and what it starts may have at most
// Options.MaxProcs processes and threads at once: a cgroup of its own where the host may make
// one (root), RLIMIT_NPROC in its own user namespace (any other host, or UserNamespace).
func TestForkBombIsLimited(t *testing.T) {
	requireLinux(t)
	spawn := func(t *testing.T, opts plugin.Options) (started int, firstErr string) {
		t.Helper()
		c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, opts)
		p := openProbe(t, c)
		res, err := call(t, p, "spawn_many", `{"n":150}`)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Started int
			Error   string
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		return r.Started, r.Error
	}
	if n, msg := spawn(t, plugin.Options{MaxProcs: -1}); n != 150 {
		t.Fatalf("control: without a limit the probe started %d of 150 processes (%s), so the test proves nothing", n, msg)
	}
	for _, userNS := range []bool{false, true} {
		n, msg := spawn(t, plugin.Options{MaxProcs: 40, UserNamespace: userNS})
		t.Logf("user namespace %v: %d started, then %q", userNS, n, msg)
		if n == 0 || n >= 40 || !strings.Contains(msg, "resource temporarily unavailable") {
			t.Errorf("user namespace %v: the probe started %d processes under a limit of 40 (%s)", userNS, n, msg)
		}
	}
	usertest.Rerun(t, binsEnv+"="+bins.dir)
}
