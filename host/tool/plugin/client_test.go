package plugin_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/sandbox"
)

func requireLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("skipped on %s: the proof reads /proc, which only Linux has", runtime.GOOS)
	}
}

func openProbe(t *testing.T, c *plugin.Client) tool.Provider {
	t.Helper()
	p, err := c.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func call(t *testing.T, p tool.Provider, method, args string) (json.RawMessage, error) {
	t.Helper()
	return p.Call(context.Background(), tool.Request{Method: method, Args: json.RawMessage(args)})
}

func TestWorldTimeThroughTheHost(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "WorldTime", Path: bins.worldtime}, plugin.Options{})
	specs, err := c.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 || specs[0].Name != "WorldTime" || len(specs[0].Methods) != 4 {
		t.Fatalf("describe = %+v", specs)
	}
	if m := specs[0].Methods[0]; m.Name != "now" || m.Effect != tool.Read || !strings.Contains(string(m.Params), `"zone"`) {
		t.Errorf("now = %+v", m)
	}
	types, err := c.Types(context.Background(), tool.KindModule, "world-time")
	if err != nil || len(types) != 1 || types[0].Name != "WorldTime" || types[0].Package != "world-time" || len(types[0].Methods) != 4 {
		t.Fatalf("types = %+v, %v", types, err)
	}
	reg := tool.NewRegistry()
	if err := reg.Add(types[0]); err != nil {
		t.Fatal(err)
	}
	p, err := reg.Open(context.Background(), tool.Declaration{Name: "Clock", Provider: "WorldTime"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := call(t, p, "convert", `{"time":"2026-01-18T12:00:00Z","to":"Asia/Tokyo"}`)
	if err != nil || !strings.Contains(string(res), `"time":"2026-01-18T21:00:00+09:00"`) {
		t.Fatalf("convert = %s, %v", res, err)
	}

	// A domain failure is a *tool.Error whose Detail is what the model reads.
	_, err = call(t, p, "now", `{"zone":"Mars/Olympus"}`)
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeToolError || !strings.Contains(string(te.Detail), `"error":"unknown time zone`) {
		t.Errorf("unknown zone: %#v", err)
	}
	// Bad arguments and unknown methods keep their codes across the process boundary.
	if _, err := call(t, p, "convert", `{"to":"UTC"}`); errcode.Code(err) != tool.CodeToolArgument {
		t.Errorf("missing argument: %v (code %s)", err, errcode.Code(err))
	}
	if _, err := call(t, p, "yesterday", `{}`); errcode.Code(err) != tool.CodeUnknownMethod {
		t.Errorf("unknown method: %v (code %s)", err, errcode.Code(err))
	}
	// A bad declaration is a TOOL_CONFIG error.
	if _, err := c.Open(context.Background(), tool.Declaration{Name: "X", Provider: "NoSuch"}); errcode.Code(err) != tool.CodeToolConfig {
		t.Errorf("unknown provider: %v", err)
	}
}

func TestProgressAndRetry(t *testing.T) {
	p := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{}))
	var got []tool.Progress
	res, err := p.Call(context.Background(), tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":1}`), Progress: func(pr tool.Progress) { got = append(got, pr) }})
	if err != nil || string(res) != `"slept"` {
		t.Fatalf("sleep = %s, %v", res, err)
	}
	if len(got) != 1 || got[0].Message != "sleeping" || got[0].Total != 1 {
		t.Errorf("progress = %+v", got)
	}
	_, err = call(t, p, "retry", `{}`)
	var te *tool.Error
	if !errors.As(err, &te) || !te.Retryable || te.RetryAfter != 1500*time.Millisecond {
		t.Errorf("retry = %#v", err)
	}
}

func TestCancellationReachesThePlugin(t *testing.T) {
	var logs syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs})
	p := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{Logger: logger}))
	// A second call shares the stream with the cancelled one and must not notice.
	other := make(chan error, 1)
	go func() {
		res, err := call(t, p, "sleep", `{"ms":300}`)
		if err == nil && string(res) != `"slept"` {
			err = fmt.Errorf("got %s", res)
		}
		other <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Call(ctx, tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":30000}`)})
	if errcode.Code(err) != tool.CodeTimeout || time.Since(start) > 5*time.Second {
		t.Fatalf("after %s: %v (code %s)", time.Since(start), err, errcode.Code(err))
	}
	// The method's context in the plugin was cancelled, and the plugin still answers.
	waitFor(t, "the plugin logs the cancellation", func() bool { return strings.Contains(logs.String(), "sleep cancelled") })
	if err := <-other; err != nil {
		t.Errorf("the call beside the cancelled one: %v", err)
	}
	if _, err := call(t, p, "echo", `{"data":"x"}`); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "sleep cancelled"); n != 1 {
		t.Errorf("%d calls were cancelled in the plugin, want 1", n)
	}
}

// TestCallsShareOneStream checks that every call of a process, concurrent or not, of any
// declaration, goes through one Calls stream: no stream per call.
func TestCallsShareOneStream(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: []string{"--count"}}, plugin.Options{})
	first, second := openProbe(t, c), openProbe(t, c)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := first
			if i%2 == 1 {
				target = second
			}
			if _, err := call(t, target, "echo", `{"data":"x"}`); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	res, err := call(t, first, "rpcs", `{}`)
	if err != nil || string(res) != `{"call_rpcs":0,"calls_streams":1}` {
		t.Fatalf("rpcs = %s, %v", res, err)
	}
}

// TestPluginWithoutCallsStream runs a plugin that answers the Calls stream with
// UNIMPLEMENTED, as one built before it does: every call then has a Call stream of its own,
// with the same results, progress, cancellation and concurrency.
func TestPluginWithoutCallsStream(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Args: []string{"--no-calls"}}, plugin.Options{})
	p := openProbe(t, c)
	var got []tool.Progress
	res, err := p.Call(context.Background(), tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":1}`), Progress: func(pr tool.Progress) { got = append(got, pr) }})
	if err != nil || string(res) != `"slept"` || len(got) != 1 || got[0].Message != "sleeping" {
		t.Fatalf("sleep = %s, %v, progress %+v", res, err, got)
	}
	if _, err := call(t, p, "retry", `{}`); errcode.Code(err) != tool.CodeToolError {
		t.Errorf("retry = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":30000}`)}); errcode.Code(err) != tool.CodeTimeout {
		t.Fatalf("cancelled sleep: %v (code %s)", err, errcode.Code(err))
	}
	waitFor(t, "the plugin sees the cancellation", func() bool {
		res, err := call(t, p, "cancels", `{}`)
		return err == nil && string(res) == "1"
	})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf(`{"data":"call %d"}`, i)
			if res, err := call(t, p, "echo", want); err != nil || string(res) != want {
				t.Errorf("echo = %s, %v", res, err)
			}
		}()
	}
	wg.Wait()
	// The stream was asked for once; every call (rpcs included) had a Call stream of its own.
	res, err = call(t, p, "rpcs", `{}`)
	var n struct {
		CallRPCs     int `json:"call_rpcs"`
		CallsStreams int `json:"calls_streams"`
	}
	if err == nil {
		err = json.Unmarshal(res, &n)
	}
	if err != nil || n.CallsStreams != 1 || n.CallRPCs < 15 {
		t.Fatalf("rpcs = %s, %v", res, err)
	}
}

// TestProgressFloodKeepsTheLatest floods a caller whose progress callback is stuck: what
// waits for it is bounded, in order, and ends with the latest event.
func TestProgressFloodKeepsTheLatest(t *testing.T) {
	p := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{}))
	const n = 1000
	var filled []float64
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		res, err := p.Call(context.Background(), tool.Request{Method: "flood", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Progress: func(pr tool.Progress) {
			if len(filled) == 0 {
				<-release
			}
			filled = append(filled, pr.Filled)
		}})
		if err == nil && string(res) != fmt.Sprint(n) {
			err = fmt.Errorf("flood = %s", res)
		}
		done <- err
	}()
	// after_flood answers once the flood has sent everything: its answer comes behind all the
	// flood's events on the stream, so by then the host has received them all.
	if _, err := call(t, p, "after_flood", `{}`); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(filled) < 2 || len(filled) >= n || filled[len(filled)-1] != n || !slices.IsSorted(filled) {
		t.Errorf("the stuck caller got %d events ending with %v, want fewer than %d, in order, ending with %d", len(filled), filled[len(filled)-1], n, n)
	}
}

// TestLargeArguments sends arguments past gRPC's default 4 MB message limit: on the shared
// stream, a refused message would end every call on it.
func TestLargeArguments(t *testing.T) {
	p := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{}))
	args := echoArgs(5 << 20)
	res, err := p.Call(context.Background(), tool.Request{Method: "echo", Args: args})
	if err != nil || len(res) != len(args) {
		t.Fatalf("echo of %d bytes: %d bytes, %v", len(args), len(res), err)
	}
	if _, err := call(t, p, "echo", `{"data":"x"}`); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentCallsShareOneProcess(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	p := openProbe(t, c)
	second := openProbe(t, c)
	pid := c.PID()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := p
			if i%2 == 1 {
				target = second
			}
			want := fmt.Sprintf(`{"data":"call %d"}`, i)
			res, err := target.Call(context.Background(), tool.Request{Method: "echo", Args: json.RawMessage(want)})
			if err == nil && string(res) != want {
				err = fmt.Errorf("got %s, want %s", res, want)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if c.PID() != pid {
		t.Errorf("the plugin was restarted: pid %d, then %d", pid, c.PID())
	}
}

// TestCrashMidCall kills the plugin while a call runs: the caller gets TOOL_CRASHED, the next
// call runs on a fresh process, and nothing the plugin started is left behind.
func TestCrashMidCall(t *testing.T) {
	requireLinux(t)
	before := len(childrenOf(os.Getpid()))
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	p := openProbe(t, c)
	if _, err := call(t, p, "spawn", `{}`); err != nil {
		t.Fatal(err)
	}
	first := c.PID()
	grandchildren := childrenOf(first)
	if len(grandchildren) != 1 {
		t.Fatalf("the probe should have one child, has %v", grandchildren)
	}

	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(context.Background(), tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":30000}`), Progress: func(tool.Progress) { close(started) }})
		done <- err
	}()
	<-started
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if errcode.Code(err) != tool.CodeToolCrashed {
			t.Fatalf("mid-call crash: %v (code %q), want TOOL_CRASHED", err, errcode.Code(err))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not return after the plugin died")
	}

	// A crash from inside (the plugin exits during the call) is the same.
	res, err := call(t, p, "echo", `{"data":"again"}`)
	if err != nil || string(res) != `{"data":"again"}` {
		t.Fatalf("call after the crash: %s, %v", res, err)
	}
	second := c.PID()
	if second == first || second == 0 {
		t.Fatalf("pid %d after the crash, %d before: want a fresh process", second, first)
	}
	if _, err := call(t, p, "crash", `{}`); errcode.Code(err) != tool.CodeToolCrashed {
		t.Fatalf("crash: %v (code %q)", err, errcode.Code(err))
	}
	if _, err := call(t, p, "echo", `{"data":"x"}`); err != nil {
		t.Fatalf("call after the second crash: %v", err)
	}
	// A plugin that dies between calls is restarted by the next call, which does not fail
	// once the host has seen the process end (its socket close, or its exit).
	idle := c.PID()
	if err := syscall.Kill(idle, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the host notices the idle plugin died", func() bool { return c.PID() != idle })
	if _, err := call(t, p, "echo", `{"data":"x"}`); err != nil || c.PID() == idle {
		t.Fatalf("call after an idle crash: %v (pid %d, was %d)", err, c.PID(), idle)
	}

	// The grandchild of the killed plugin went with it.
	waitGone(t, grandchildren[0])
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "no child process left", func() bool { return len(childrenOf(os.Getpid())) == before })
	if _, err := call(t, p, "echo", `{"data":"x"}`); err == nil {
		t.Error("a call after Close should fail")
	}
}

// TestCrashFailsEveryCallInFlight kills the plugin while several calls share its stream:
// each of them gets TOOL_CRASHED, and the next call runs on a fresh process.
func TestCrashFailsEveryCallInFlight(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	p := openProbe(t, c)
	first := c.PID()
	const n = 3
	var started sync.WaitGroup
	started.Add(n)
	errs := make(chan error, n)
	for range n {
		go func() {
			var once sync.Once
			_, err := p.Call(context.Background(), tool.Request{Method: "sleep", Args: json.RawMessage(`{"ms":30000}`), Progress: func(tool.Progress) { once.Do(started.Done) }})
			errs <- err
		}()
	}
	started.Wait()
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for range n {
		select {
		case err := <-errs:
			if errcode.Code(err) != tool.CodeToolCrashed {
				t.Errorf("a call in flight: %v (code %q), want TOOL_CRASHED", err, errcode.Code(err))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call did not return after the plugin died")
		}
	}
	if _, err := call(t, p, "echo", `{"data":"x"}`); err != nil || c.PID() == first {
		t.Fatalf("call after the crash: %v (pid %d, was %d)", err, c.PID(), first)
	}
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("process %d gone", pid), func() bool { return !alive(pid) })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSecretsStayInTheHost runs a host process whose environment holds a secret, and shows
// that neither the probe nor the world-time plugin can see it: not in its environment, not in
// /proc/<host pid>/environ, not on its standard input; and that a listed variable does reach it.
func TestSecretsStayInTheHost(t *testing.T) {
	requireLinux(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=secrets", secretName+"="+secretValue, allowedName+"=visible",
		"PROBE_BIN="+bins.probe, "WORLDTIME_BIN="+bins.worldtime)
	out, err := cmd.CombinedOutput()
	t.Logf("helper host:\n%s", out)
	if err != nil {
		t.Fatalf("the helper host reported a leak or failed: %v", err)
	}
	if strings.Count(string(out), "ok: ") < 10 {
		t.Fatalf("too few checks ran")
	}
}

// TestKilledHostLeavesNoPlugin kills a host (SIGKILL: no clean-up; SIGINT: what Ctrl-C sends
// when nothing handles it) and checks that its plugin and the plugin's child die too.
func TestKilledHostLeavesNoPlugin(t *testing.T) {
	requireLinux(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=orphans", "PROBE_BIN="+bins.probe)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatalf("helper: %v", err)
			}
			var pluginPID, grandchild int
			if _, err := fmt.Sscanf(line, "plugin=%d grandchild=%d", &pluginPID, &grandchild); err != nil {
				t.Fatalf("helper said %q", line)
			}
			if !alive(pluginPID) || !alive(grandchild) {
				t.Fatal("the plugin and its child should be running")
			}
			_ = cmd.Process.Signal(sig)
			_ = cmd.Wait()
			waitGone(t, pluginPID)
			waitGone(t, grandchild)
		})
	}
}

func TestSocketFolderIsPrivateAndRemoved(t *testing.T) {
	requireLinux(t)
	// The folder of a host that died without cleaning up: a process that has exited.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(os.TempDir(), fmt.Sprintf("halo-plugins-%d-123", gone.ProcessState.Pid()))
	if err := os.MkdirAll(filepath.Join(stale, "plugin-dir1"), 0o700); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(stale)

	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{})
	openProbe(t, c)
	// The plugin's socket is the one Unix socket it listens on; find it through /proc.
	sock := pluginSocket(t, c.PID())
	dir := filepath.Dir(sock)
	for _, d := range []string{dir, filepath.Dir(dir)} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("%s has mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), fmt.Sprintf("halo-plugins-%d-", os.Getpid())) {
		t.Errorf("socket folder %s is not named after the host's pid", filepath.Dir(dir))
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale folder %s of a dead host was not removed", stale)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); !os.IsNotExist(err) {
		t.Errorf("socket folder %s still exists after Close", filepath.Dir(dir))
	}
}

// pluginSocket finds the path of the Unix socket process pid listens on: the inodes of its
// socket descriptors, looked up in /proc/net/unix.
func pluginSocket(t *testing.T, pid int) string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 8 && inodes[f[6]] && f[5] == "01" { // 01: listening
			return f[7]
		}
	}
	t.Fatalf("no listening socket for pid %d", pid)
	return ""
}

func TestPinnedChecksum(t *testing.T) {
	b, err := os.ReadFile(bins.probe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	good := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, SHA256: sum[:]}, plugin.Options{})
	openProbe(t, good)
	// The pinned descriptor is what starts, in the sandbox and in a user namespace too.
	confine := func(env []string) error {
		return sandbox.ConfineThread(sandbox.Policy{ReadOnly: []string{filepath.Dir(bins.probe)}}, bins.probe, env)
	}
	for _, userNS := range []bool{false, true} {
		c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, SHA256: sum[:], Sandbox: confine}, plugin.Options{UserNamespace: userNS})
		openProbe(t, c)
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", c.PID())); err != nil || exe != bins.probe {
			t.Errorf("the pinned plugin runs %q (%v), want %s", exe, err, bins.probe)
		}
	}

	// A wrapper would execute the path again: refused.
	wrapped := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, SHA256: sum[:], Wrap: func(*exec.Cmd) error { return nil }}, plugin.Options{})
	if _, err := wrapped.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"}); err == nil || !strings.Contains(err.Error(), "cannot be started through a wrapper") {
		t.Errorf("a pinned executable through a wrapper: %v", err)
	}

	wrong := sha256.Sum256([]byte("another build"))
	bad := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, SHA256: wrong[:]}, plugin.Options{})
	_, err = bad.Open(context.Background(), tool.Declaration{Name: "P", Provider: "Probe"})
	if errcode.Code(err) != plugin.CodeIntegrity || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("wrong pin: %v (code %q)", err, errcode.Code(err))
	}
}

func TestNewerPluginIsRefused(t *testing.T) {
	c := newClient(t, plugin.Command{Name: "Future", Path: bins.probe, Args: []string{"--protocol=2"}}, plugin.Options{})
	_, err := c.Open(context.Background(), tool.Declaration{Name: "F", Provider: "Probe"})
	if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "protocol version 2") || !strings.Contains(err.Error(), "speaks version 1") {
		t.Fatalf("newer plugin: %v (code %q)", err, errcode.Code(err))
	}
}

func TestPluginLogsUnderProviderName(t *testing.T) {
	var buf syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Name: "halo", Level: hclog.Info, Output: &buf})
	c := newClient(t, plugin.Command{Name: "Probe", Path: bins.probe}, plugin.Options{Logger: logger})
	p := openProbe(t, c)
	if _, err := call(t, p, "log", `{"data":"hello from the plugin"}`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log line", func() bool { return strings.Contains(buf.String(), "hello from the plugin") })
	for _, line := range strings.Split(buf.String(), "\n") {
		if strings.Contains(line, "hello from the plugin") {
			if !strings.Contains(line, "[INFO]") || !strings.Contains(line, "halo.Probe") || !strings.Contains(line, "method=log") {
				t.Errorf("log line %q: want it at INFO under halo.Probe with the method", line)
			}
		}
	}
}

func TestWrapRewritesTheCommand(t *testing.T) {
	// A wrapper that runs the plugin through env(1) with an extra variable: the shape of the
	// sandbox step (a different executable that ends by exec'ing the original command line).
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Skip("skipped: no env(1) on this system")
	}
	var wrapped []string
	wrap := func(cmd *exec.Cmd) error {
		wrapped = append([]string{}, cmd.Args...)
		cmd.Args = append([]string{envBin, "WRAPPED=yes", cmd.Path}, cmd.Args[1:]...)
		cmd.Path = envBin
		return nil
	}
	p := openProbe(t, newClient(t, plugin.Command{Name: "Probe", Path: bins.probe, Wrap: wrap}, plugin.Options{}))
	res, err := call(t, p, "env", `{}`)
	if err != nil || !strings.Contains(string(res), "WRAPPED=yes") {
		t.Fatalf("env = %s, %v", res, err)
	}
	if len(wrapped) != 1 || wrapped[0] != bins.probe {
		t.Errorf("wrap saw %v", wrapped)
	}
}
