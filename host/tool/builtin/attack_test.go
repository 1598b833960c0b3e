package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/emptypb"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/internal/ptytest"
	"halolang.dev/halo/internal/usertest"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// Attack tests: what a hostile Bash command (one an agent was talked into, say) tries against
// the host and the user. Some need a host process of their own (one with a controlling
// terminal, say): the test binary re-executes itself with helperEnv set to the attack, and
// TestMain sends it to runHelper.
const (
	helperEnv     = "HALO_BUILTIN_TEST_HELPER"
	helperModeEnv = "HALO_BUILTIN_TEST_MODE"
	helperWorkEnv = "HALO_BUILTIN_TEST_WORK"
)

func runHelper() int {
	switch os.Getenv(helperEnv) {
	case "tty":
		return helperTTY()
	}
	fmt.Println("unknown helper", os.Getenv(helperEnv))
	return 2
}

// helperHost builds the built-in types as the CLI does, in the sandbox mode the test asked
// for, and opens decl with them.
func helperHost(decl tool.Declaration) (tool.Provider, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	mode := os.Getenv(helperModeEnv)
	sandboxed := mode != "none"
	b := New(Config{Executable: exe, Getenv: os.LookupEnv, Sandbox: &sandboxed, userNamespace: mode == "sandbox+userns"})
	reg := tool.NewRegistry()
	for _, ty := range b.Types() {
		if err := reg.Add(ty); err != nil {
			return nil, err
		}
	}
	decl.Dir = os.Getenv(helperWorkEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return reg.Open(ctx, decl)
}

// typeInto is a Perl program that queues its argument into the input of the terminal file
// named by the first, one character at a time (TIOCSTI, 0x5412), as the review's attack did:
// the user's shell would read it as a command once halo exits.
const typeInto = `open(T, "+<", $ARGV[0]) or die "open $ARGV[0]: $!\n"; for (split //, $ARGV[1]) { ioctl(T, 0x5412, $_) or die "TIOCSTI $ARGV[0]: $!\n" } print "typed into $ARGV[0]\n";`

// helperTTY is a host whose standard input is its controlling terminal, as halo's is when a
// user runs it from a shell. A plain child of it types into the terminal first (the control:
// the harness sees that). Then a Bash command with network: false tries the same through
// /dev/tty and every /dev/pts entry, and to write over the terminal. It prints what each
// command got.
func helperTTY() int {
	ctl := exec.Command("perl", "-e", typeInto, "/dev/tty", "echo CONTROL-TYPED\n")
	out, err := ctl.CombinedOutput()
	fmt.Printf("control: %v %s", err, out)

	p, err := helperHost(tool.Declaration{Name: "Shell", Provider: "Bash", Named: map[string]any{"network": false}})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	defer p.Close()
	for _, a := range []struct{ name, command string }{
		{"type into /dev/tty", fmt.Sprintf(`perl -e '%s' /dev/tty 'echo INJECTED-BY-BASH
'`, typeInto)},
		{"type into /dev/pts/*", fmt.Sprintf(`for t in /dev/pts/[0-9]*; do perl -e '%s' "$t" 'echo INJECTED-BY-BASH
'; done`, typeInto)},
		{"write over /dev/tty", `echo WRITTEN-BY-BASH > /dev/tty`},
		{"controlling terminal", `ps -o tty= -p $$; tty`},
	} {
		res, err := p.Call(context.Background(), tool.Request{Method: "run", Args: mustJSON(map[string]any{"command": a.command})})
		var r runResult
		_ = json.Unmarshal(res, &r)
		fmt.Printf("bash, %s: err=%v exit=%d stdout=%q stderr=%q\n", a.name, err, r.ExitCode, r.Stdout, r.Stderr)
	}
	return 0
}

// TestBashCannotTypeIntoTheTerminal is item 1 of the red-team review: a network: false Bash
// command opened /dev/tty and queued a command (TIOCSTI) that the user's shell ran,
// unconfined, after halo exited. Now the plugin and its commands have no controlling
// terminal (a session of their own), /dev/tty is not granted, and seccomp refuses TIOCSTI
// and TIOCLINUX; nothing a command does reaches the terminal.
func TestBashCannotTypeIntoTheTerminal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run("sandbox="+mode, func(t *testing.T) {
			term, err := ptytest.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer term.Close()
			var out bytes.Buffer
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=tty", helperModeEnv+"="+mode, helperWorkEnv+"="+t.TempDir())
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := term.Start(cmd); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("host: %v\n%s", err, out.String())
			}
			seen := term.Seen(5 * time.Second)
			t.Logf("host:\n%s\nterminal: %q", out.String(), seen)
			if !strings.Contains(seen, "CONTROL-TYPED") {
				t.Fatalf("control: a plain child of the host could not type into its terminal, so the test proves nothing (terminal: %q)\n%s", seen, out.String())
			}
			for _, mark := range []string{"INJECTED-BY-BASH", "WRITTEN-BY-BASH"} {
				if strings.Contains(seen, mark) {
					t.Errorf("a Bash command reached the user's terminal: %s appeared there", mark)
				}
			}
			if !strings.Contains(out.String(), `stdout="?\n"`) && !strings.Contains(out.String(), "not a tty") {
				t.Errorf("a Bash command has a controlling terminal:\n%s", out.String())
			}
		})
	}
	usertest.Rerun(t)
}

// attackDriveCommand makes the test binary the hostile program of TestBashCannotDriveAnotherPlugin.
const attackDriveCommand = "__attack-drive"

// attackDrive is what a hostile Bash command runs to take over a sibling plugin. It lists the
// plugin sockets /proc/net/unix shows (how the review found them); then, for the socket in
// args (the victim's: the attacker's own plugin is among those listed, and driving that
// proves nothing), it connects, asks what the plugin serves, configures a Bash declaration of
// its own that sees the victim's variables, runs a command there that prints HALO_VISIBLE,
// and last asks the plugin to shut down. It prints what each step got; "TAKEN:" marks a
// success.
func attackDrive(args []string) int {
	if b, err := os.ReadFile("/proc/net/unix"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 8 && strings.Contains(f[7], "plugin-dir") {
				fmt.Println("found:", f[7])
			}
		}
	} else {
		fmt.Println("read /proc/net/unix:", err)
	}
	for _, path := range args {
		conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fmt.Println(path, "dial:", err)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c := pluginv1.NewPluginServiceClient(conn)
		if d, err := c.Describe(ctx, &pluginv1.DescribeRequest{}); err != nil {
			fmt.Println(path, "describe:", err)
		} else {
			fmt.Println(path, "TAKEN: describe:", len(d.GetProviders()), "providers")
		}
		cfg, err := c.Configure(ctx, &pluginv1.ConfigureRequest{Provider: "Bash", ToolName: "Hijacked", Args: []byte("[]"), NamedArgs: []byte(`{"env":["HALO_VISIBLE"]}`), ProjectDir: "/"})
		if err != nil {
			fmt.Println(path, "configure:", err)
		} else {
			fmt.Println(path, "TAKEN: configure:", cfg.GetInstanceId(), cfg.GetError())
			stream, err := c.Call(ctx, &pluginv1.CallRequest{InstanceId: cfg.GetInstanceId(), Method: "run", Args: []byte(`{"command":"echo stolen=$HALO_VISIBLE"}`)})
			for err == nil {
				var resp *pluginv1.CallResponse
				resp, err = stream.Recv()
				if resp != nil {
					fmt.Println(path, "TAKEN: call:", string(resp.GetResult().GetJson()))
				}
			}
			if err != io.EOF {
				fmt.Println(path, "call:", err)
			}
		}
		if err := conn.Invoke(ctx, "/plugin.GRPCController/Shutdown", &emptypb.Empty{}, &emptypb.Empty{}); err != nil {
			fmt.Println(path, "shutdown:", err)
		} else {
			fmt.Println(path, "TAKEN: shutdown")
		}
		cancel()
		conn.Close()
	}
	return 0
}

// listeningSocket finds the path of the Unix socket process pid listens on: the inodes of its
// socket descriptors, looked up in /proc/net/unix (read by the test, outside any sandbox).
func listeningSocket(t *testing.T, pid int) string {
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

// TestBashCannotDriveAnotherPlugin is item 3 of the red-team review: a network: false Bash
// command read a sibling plugin's socket path in /proc/net/unix, connected (Landlock before
// ABI 9 does not mediate connect on pathname sockets) and, since the socket took any caller,
// configured and called that plugin: it got its env: variables, its folder and its network.
// Now every call must carry the secret the host handed that plugin process; the attacker
// gets UNAUTHENTICATED for every service, go-plugin's shutdown included.
func TestBashCannotDriveAnotherPlugin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx := newFixture(t, mode)
			victim := fx.open(t, "Online", "Bash", nil, map[string]any{"env": []any{"HALO_VISIBLE"}})
			if r := run(t, victim, "echo $HALO_VISIBLE"); r.Stdout != "visible-value\n" {
				t.Fatalf("control: the victim's own command: %+v", r)
			}
			pid := pidOf(victim)
			sock := listeningSocket(t, pid)
			attacker := fx.open(t, "Offline", "Bash", nil, map[string]any{"network": false, "read": []any{filepath.Dir(exe)}})
			r := run(t, attacker, fmt.Sprintf("%q %s %q", exe, attackDriveCommand, sock))
			t.Logf("attacker: %+v", r)
			if strings.Contains(r.Stdout, "TAKEN") || strings.Contains(r.Stdout, "visible-value") {
				t.Fatalf("a Bash command drove another plugin:\n%s", r.Stdout)
			}
			if !strings.Contains(r.Stdout, sock+" configure: rpc error: code = Unauthenticated") {
				t.Fatalf("the attacker did not reach the victim's socket and get UNAUTHENTICATED, so the test proves nothing:\n%s%s", r.Stdout, r.Stderr)
			}
			if pidOf(victim) != pid {
				t.Fatalf("the victim plugin was stopped")
			}
			if r := run(t, victim, "echo $HALO_VISIBLE"); r.Stdout != "visible-value\n" {
				t.Fatalf("the victim no longer serves its host: %+v", r)
			}
		})
	}
	usertest.Rerun(t)
}

// TestSymlinkedFolderDoesNotWidenTheSandbox is item 11 of the red-team review: a repository
// that commits docs -> ../../../root makes Workspace("./docs") or Bash(cwd: "./docs") grant
// /root, read-write. Now a root, cwd, read: or write: folder named relative to the project
// that resolves, after its symbolic links, outside the project is refused (TOOL_CONFIG),
// with nothing created; the same folder named by its absolute path is granted, as the user
// asked for it; a link that stays inside the project is fine.
func TestSymlinkedFolderDoesNotWidenTheSandbox(t *testing.T) {
	fx := newFixture(t, "sandbox")
	outside := filepath.Join(fx.home, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("OUTSIDE-SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	// What a cloned repository can hold: links out of the project, and one inside it.
	for link, target := range map[string]string{"linked": "../outside", "deep": "../outside/new/folder", "notes": "real"} {
		if err := os.Symlink(target, filepath.Join(fx.work, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(fx.work, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		provider string
		args     []any
		named    map[string]any
	}{
		{"Workspace", []any{"./linked"}, nil},
		{"Workspace", []any{"linked"}, map[string]any{"write": true}},
		{"Workspace", []any{"./deep"}, map[string]any{"write": true}},
		{"Workspace", []any{"../outside"}, nil},
		{"Bash", nil, map[string]any{"cwd": "./linked"}},
		{"Bash", nil, map[string]any{"read": []any{"linked"}}},
		{"Bash", nil, map[string]any{"write": []any{"./linked"}}},
	}
	for _, c := range refused {
		_, err := fx.reg.Open(context.Background(), tool.Declaration{Name: "T", Provider: c.provider, Args: c.args, Named: c.named, Dir: fx.work})
		if tool.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "outside the project folder") {
			t.Errorf("%s(%v, %v): %v, want TOOL_CONFIG: outside the project folder", c.provider, c.args, c.named, err)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !os.IsNotExist(err) {
		t.Errorf("a refused Workspace created a folder through the link: %v", err)
	}
	// Named by its absolute path, the same folder is the user's choice.
	ws := fx.open(t, "Files", "Workspace", []any{outside}, nil)
	var r struct{ Content string }
	mustCall(t, ws, "read", map[string]any{"path": "secret.txt"}, &r)
	if r.Content != "OUTSIDE-SECRET" {
		t.Errorf("an absolute root: %+v", r)
	}
	// A link inside the project is followed, and the sandbox grants the real folder.
	sh := fx.open(t, "Shell", "Bash", nil, map[string]any{"cwd": "./notes"})
	if res := run(t, sh, "pwd -P && echo x > made.txt && cat ../../outside/secret.txt"); res.Stdout != filepath.Join(fx.work, "real")+"\n" || !strings.Contains(res.Stderr, "ermission denied") {
		t.Errorf("a cwd linked inside the project: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(fx.work, "real", "made.txt")); err != nil {
		t.Errorf("the command did not write in the linked folder: %v", err)
	}
}

// TestPluginsCannotWriteHaloState is item 8 of the red-team review, its second half: a
// plugin or Bash command whose folder is the project could write halo.lock, .halo/ (the
// installed packages) and the run records there, and so change what the next halo command
// loads. Now the sandbox grants the project entry by entry: never .halo (its files can be
// neither read nor written; its folders can be listed, as the project's), halo.lock
// read-only, the project folder itself only listable (so no entry can be created, removed
// or renamed at its top level, which would let a command rename a file it wrote onto
// halo.lock). A declaration that names .halo, or a folder in it, is refused.
func TestPluginsCannotWriteHaloState(t *testing.T) {
	for _, mode := range modes[1:] {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx := newFixture(t, mode)
			if !fx.status.Enforced() {
				t.Skipf("skipped: this kernel cannot enforce the sandbox (%s)", fx.status.Reason)
			}
			for name, body := range map[string]string{
				"halo.lock":                      `{"packages":{}}`,
				".halo/runs/r1.json":             `{"inputs":{"token":"RUN-RECORD-SECRET"}}`,
				".halo/tools/pkg/halo-tool.json": `{"name":"pkg"}`,
				"src/main.go":                    "package main",
			} {
				p := filepath.Join(fx.work, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sh := fx.open(t, "Shell", "Bash", nil, nil)
			for _, cmd := range []string{
				`echo '{"packages":{"evil":{}}}' > halo.lock`,
				`rm halo.lock`,
				`echo '{"packages":{"evil":{}}}' > notes.md && mv notes.md halo.lock`,
				`echo '{}' > src/evil.lock && mv src/evil.lock halo.lock`,
				`echo planted > .halo/tools/pkg/halo-tool.json`,
				`echo planted > .halo/runs/r2.json`,
				`cat .halo/runs/r1.json`,
				`cat .halo/tools/pkg/halo-tool.json`,
				`rm -rf .halo`,
				`mkdir .halo2`,
			} {
				r := run(t, sh, cmd)
				if r.ExitCode == 0 || strings.Contains(r.Stdout, "RUN-RECORD-SECRET") {
					t.Errorf("%s succeeded: %+v", cmd, r)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(fx.work, "halo.lock")); string(b) != `{"packages":{}}` {
				t.Errorf("halo.lock changed: %s", b)
			}
			if b, _ := os.ReadFile(filepath.Join(fx.work, ".halo/tools/pkg/halo-tool.json")); string(b) != `{"name":"pkg"}` {
				t.Errorf("a package file changed: %s", b)
			}
			if _, err := os.Stat(filepath.Join(fx.work, ".halo/runs/r2.json")); err == nil {
				t.Errorf("a run record was planted")
			}
			// The rest of the project is the command's.
			if r := run(t, sh, `cat halo.lock && echo more >> notes.md && echo x > src/new.go && rm src/new.go && mkdir -p src/sub && ls`); r.ExitCode != 0 || !strings.Contains(r.Stdout, `{"packages":{}}`) {
				t.Errorf("work in the project failed: %+v", r)
			}
			// A folder above the project is granted the same way down to the project: the
			// folders beside the project are the command's, halo.lock is not.
			if err := os.Mkdir(filepath.Join(fx.home, "other"), 0o755); err != nil {
				t.Fatal(err)
			}
			wide := fx.open(t, "Wide", "Bash", nil, map[string]any{"cwd": fx.home})
			if r := run(t, wide, `echo x > other/planted && echo evil > project/halo.lock`); r.ExitCode == 0 || !strings.Contains(r.Stderr, "ermission denied") {
				t.Errorf("a cwd above the project: %+v", r)
			}
			if _, err := os.Stat(filepath.Join(fx.home, "other", "planted")); err != nil {
				t.Errorf("a cwd above the project could not write beside it: %v", err)
			}
			// A Workspace on the project, with write: true: the same.
			ws := fx.open(t, "Files", "Workspace", []any{"."}, map[string]any{"write": true})
			for _, path := range []string{"halo.lock", ".halo/runs/r3.json", ".halo/tools/pkg/halo-tool.json"} {
				if _, err := call(t, ws, "write", map[string]any{"path": path, "content": "planted"}); err == nil {
					t.Errorf("Workspace wrote %s", path)
				}
			}
			if _, err := call(t, ws, "read", map[string]any{"path": ".halo/runs/r1.json"}); err == nil {
				t.Errorf("Workspace read a run record")
			}
			// A declaration that names .halo is refused, whoever wrote the path.
			for _, c := range []struct {
				provider string
				args     []any
				named    map[string]any
			}{
				{"Workspace", []any{".halo"}, nil},
				{"Workspace", []any{filepath.Join(fx.work, ".halo", "runs")}, nil},
				{"Bash", nil, map[string]any{"cwd": ".halo/tools"}},
				{"Bash", nil, map[string]any{"read": []any{".halo"}}},
			} {
				_, err := fx.reg.Open(context.Background(), tool.Declaration{Name: "T", Provider: c.provider, Args: c.args, Named: c.named, Dir: fx.work})
				if tool.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), ".halo") {
					t.Errorf("%s(%v, %v): %v, want TOOL_CONFIG naming .halo", c.provider, c.args, c.named, err)
				}
			}
		})
	}
}

// TestProjectLinkSwappedBetweenRuns: the declarations one run offers resolve the project
// folder once between them (tool.Batch), and a warm server keeps their plugins (pool.Pool).
// Neither may carry a resolution from one run to the next. The project here is reached
// through a link (current -> a, as a deployment swaps releases); between two runs the link
// is swapped to b, whose src is another folder and whose out and state lead outside the
// project and into its .halo. The second run's Workspace("src") works on b's src, not on
// the process the first run left for a's, and out and state are refused, as they would be
// in a server that just started.
func TestProjectLinkSwappedBetweenRuns(t *testing.T) {
	fx, _ := pooledFixture(t, "sandbox")
	for _, f := range []struct{ path, body string }{
		{filepath.Join(fx.home, "a", "src", "which.txt"), "A"},
		{filepath.Join(fx.home, "b", "src", "which.txt"), "B"},
		{filepath.Join(fx.home, "b", ".halo", "runs", "r.json"), "{}"},
		{filepath.Join(fx.home, "outside", "secret.txt"), "OUTSIDE-SECRET"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"b/out": "../outside", "b/state": ".halo/runs", "a/out": "src", "a/state": "src"} {
		if err := os.Symlink(target, filepath.Join(fx.home, link)); err != nil {
			t.Fatal(err)
		}
	}
	current := filepath.Join(fx.home, "current")
	if err := os.Symlink("a", current); err != nil {
		t.Fatal(err)
	}
	decls := []tool.Declaration{
		{Name: "Src", Provider: "Workspace", Args: []any{"src"}, Named: map[string]any{"write": true}, Dir: current},
		{Name: "Out", Provider: "Workspace", Args: []any{"out"}, Dir: current},
		{Name: "State", Provider: "Bash", Named: map[string]any{"cwd": "state"}, Dir: current},
	}
	// runOnce opens decls as a run does (one batch) and reads which.txt through Src.
	runOnce := func() (string, []error) {
		t.Helper()
		batch := &tool.Batch{}
		errs := make([]error, len(decls))
		which := ""
		for i, d := range decls {
			d.Batch = batch
			p, err := fx.reg.Open(context.Background(), d)
			if errs[i] = err; err != nil {
				continue
			}
			if d.Name == "Src" {
				var r struct{ Content string }
				mustCall(t, p, "read", map[string]any{"path": "which.txt"}, &r)
				which = r.Content
			}
			p.Close()
		}
		return which, errs
	}
	which, errs := runOnce()
	if which != "A" || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("first run, current -> a: read %q, errors %v", which, errs)
	}
	if err := os.Remove(current); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b", current); err != nil {
		t.Fatal(err)
	}
	which, errs = runOnce()
	if which != "B" || errs[0] != nil {
		t.Errorf("second run, current -> b: Workspace(src) read %q (error %v), want b's file", which, errs[0])
	}
	if tool.Code(errs[1]) != tool.CodeToolConfig || !strings.Contains(fmt.Sprint(errs[1]), "outside the project folder") {
		t.Errorf("second run: Workspace(out), out -> ../outside: %v, want TOOL_CONFIG: outside the project folder", errs[1])
	}
	if tool.Code(errs[2]) != tool.CodeToolConfig || !strings.Contains(fmt.Sprint(errs[2]), ".halo folder") {
		t.Errorf("second run: Bash(cwd: state), state -> .halo/runs: %v, want TOOL_CONFIG: in the project's .halo folder", errs[2])
	}
	usertest.Rerun(t)
}
