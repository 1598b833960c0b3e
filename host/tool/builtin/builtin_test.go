package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/plugins/workspace"
	pluginv1 "halolang.dev/halo/proto/halo/plugin/v1"
)

// TestMain lets the test binary stand in for halo: the plugins it starts are this binary
// run with __plugin or __sandbox, as the halo binary would be.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		// This process is a host an attack test started (attack_test.go).
		os.Exit(runHelper())
	}
	if len(os.Args) > 1 && os.Args[1] == attackDriveCommand {
		// This process is a hostile program a Bash command runs (attack_test.go).
		os.Exit(attackDrive(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == PluginCommand {
		if err := Main(os.Args[2:], os.LookupEnv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.Command {
		os.Exit(sandbox.Main(os.Args[2:], os.Environ(), os.Stderr))
	}
	os.Exit(m.Run())
}

const secret = "sk-halo-test-secret-0123456789"

// hostEnv is the environment the CLI would hand in: a secret, a variable a declaration
// lists, and the usual PATH and HOME.
func hostEnv(home string) func(string) (string, bool) {
	env := map[string]string{
		"PATH":           os.Getenv("PATH"),
		"HOME":           home,
		"OPENAI_API_KEY": secret,
		"HALO_VISIBLE":   "visible-value",
	}
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

type fixture struct {
	reg    *tool.Registry
	home   string
	work   string
	logs   *bytes.Buffer
	status sandbox.Status
}

// Sandbox modes the tests run in: none; the plugin started from a confined thread of the
// host (in a PID namespace alone when the host is root); the same in a user namespace as
// well, as a host that is not root starts it.
var modes = []string{"none", "sandbox", "sandbox+userns"}

func newFixture(t *testing.T, mode string) *fixture { return fixtureWith(t, mode, nil) }

// fixtureWith is newFixture with the plugins kept in pl (nil: not kept).
func fixtureWith(t *testing.T, mode string, pl *pool.Pool) *fixture {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	fx := &fixture{home: filepath.Join(base, "home"), work: filepath.Join(base, "home", "project"), logs: &bytes.Buffer{}}
	for _, f := range []struct{ path, body string }{
		{filepath.Join(fx.home, ".ssh", "id_ed25519"), "PRIVATE KEY"},
		{filepath.Join(fx.home, ".env"), "OPENAI_API_KEY=" + secret},
		{filepath.Join(fx.work, "notes.md"), "a\nb\n"},
		{filepath.Join(fx.work, "docs", "index.md"), "docs\n"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logger := hclog.New(&hclog.LoggerOptions{Output: fx.logs, Level: hclog.Warn})
	sandboxed := mode != "none"
	cfg := Config{Executable: exe, Getenv: hostEnv(fx.home), Logger: logger, Sandbox: &sandboxed, userNamespace: mode == "sandbox+userns", Pool: pl}
	fx.reg = tool.NewRegistry()
	b := New(cfg)
	fx.status = b.SandboxStatus()
	for _, ty := range b.Types() {
		if err := fx.reg.Add(ty); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

func (fx *fixture) open(t *testing.T, name, provider string, args []any, named map[string]any) tool.Provider {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := fx.reg.Open(ctx, tool.Declaration{Name: name, Provider: provider, Args: args, Named: named, Dir: fx.work})
	if err != nil {
		t.Fatalf("open %s: %v\nlogs:\n%s", provider, err, fx.logs)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func call(t *testing.T, p tool.Provider, method string, args any) (json.RawMessage, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.Call(ctx, tool.Request{Method: method, Args: b})
}

func mustCall(t *testing.T, p tool.Provider, method string, args any, into any) {
	t.Helper()
	res, err := call(t, p, method, args)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if err := json.Unmarshal(res, into); err != nil {
		t.Fatalf("%s: %v in %s", method, err, res)
	}
}

// wantDomainFailure checks err is the tool error a model reads, with want in its message.
func wantDomainFailure(t *testing.T, err error, want string) {
	t.Helper()
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeToolError || len(te.Detail) == 0 {
		t.Fatalf("got %v (%T), want a domain failure containing %q", err, err, want)
	}
	if !strings.Contains(te.Message, want) {
		t.Fatalf("failure %q does not contain %q", te.Message, want)
	}
}

func TestStaticMethods(t *testing.T) {
	fx := newFixture(t, "none")
	want := map[string]string{
		"Workspace": "read:read list:read search:read write:write edit:write delete:write",
		"Bash":      "run:external",
	}
	for _, ty := range fx.reg.Types() {
		var got []string
		for _, m := range ty.Methods {
			got = append(got, m.Name+":"+string(m.Effect))
			var schema map[string]any
			if err := json.Unmarshal(m.Params, &schema); err != nil || schema["type"] != "object" {
				t.Errorf("%s.%s schema = %s", ty.Name, m.Name, m.Params)
			}
		}
		if strings.Join(got, " ") != want[ty.Name] {
			t.Errorf("%s methods = %v, want %s", ty.Name, got, want[ty.Name])
		}
	}
}

func TestWorkspaceThroughThePlugin(t *testing.T) {
	for _, mode := range modes {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx := newFixture(t, mode)
			rw := fx.open(t, "Files", "Workspace", []any{"."}, map[string]any{"write": true})
			var r struct {
				Content string `json:"content"`
				Lines   int    `json:"lines"`
			}
			mustCall(t, rw, "read", map[string]any{"path": "notes.md"}, &r)
			if r.Content != "a\nb\n" || r.Lines != 2 {
				t.Fatalf("read = %+v", r)
			}
			var w struct{ Created bool }
			mustCall(t, rw, "write", map[string]any{"path": "docs/out/x.txt", "content": "hello"}, &w)
			if b, _ := os.ReadFile(filepath.Join(fx.work, "docs", "out", "x.txt")); string(b) != "hello" || !w.Created {
				t.Fatalf("write: %q %+v", b, w)
			}
			// The project's top level holds halo.lock and .halo: under the sandbox, nothing is
			// created, removed or renamed there (see TestPluginsCannotWriteHaloState).
			if _, err := call(t, rw, "write", map[string]any{"path": "top.txt", "content": "x"}); (err == nil) != (mode == "none") {
				t.Fatalf("write at the project's top level: %v", err)
			}
			for _, c := range []struct{ path, want string }{
				{"../.ssh/id_ed25519", "leaves the workspace root"},
				{filepath.Join(fx.home, ".ssh", "id_ed25519"), "is absolute"},
				{"notes.md\x00", "NUL byte"},
			} {
				_, err := call(t, rw, "read", map[string]any{"path": c.path})
				wantDomainFailure(t, err, c.want)
			}
			if err := os.Symlink(filepath.Join(fx.home, ".ssh"), filepath.Join(fx.work, "keys")); err != nil {
				t.Fatal(err)
			}
			_, err := call(t, rw, "read", map[string]any{"path": "keys/id_ed25519"})
			wantDomainFailure(t, err, "outside the workspace root")

			ro := fx.open(t, "Docs", "Workspace", []any{"."}, nil)
			methods, err := ro.Methods(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range methods {
				names = append(names, m.Name)
			}
			if strings.Join(names, " ") != "read list search" {
				t.Fatalf("read-only workspace offers %v", names)
			}
			// What halo plan and a mocked agent are told without opening anything is what
			// the opened plugin offers, for every way write: may be written.
			for _, c := range []struct {
				named map[string]any
				want  string
			}{
				{nil, "read list search"},
				{map[string]any{"write": false}, "read list search"},
				{map[string]any{"write": true}, "read list search write edit delete"},
				{map[string]any{"write": nil}, "read list search write edit delete"}, // known only when it runs
			} {
				ms, ok := fx.reg.DeclaredMethods(tool.Declaration{Name: "Docs", Provider: "Workspace", Args: []any{"."}, Named: c.named})
				var got []string
				for _, m := range ms {
					got = append(got, m.Name)
				}
				if !ok || strings.Join(got, " ") != c.want {
					t.Errorf("declared methods with %v = %v, want %s", c.named, got, c.want)
				}
			}
			if _, err := call(t, ro, "write", map[string]any{"path": "y.txt", "content": "x"}); err == nil {
				t.Fatal("a read-only workspace wrote")
			}
			if _, err := os.Stat(filepath.Join(fx.work, "y.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatal("y.txt exists")
			}
		})
	}
}

func TestDeclarationErrors(t *testing.T) {
	fx := newFixture(t, "none")
	cases := []struct {
		provider string
		args     []any
		named    map[string]any
		want     string
	}{
		{"Workspace", nil, nil, "needs a root folder"},
		{"Workspace", []any{"missing"}, nil, "does not exist"},
		{"Workspace", []any{"."}, map[string]any{"writ": true}, "unknown field"},
		{"Bash", nil, map[string]any{"cwd": "nope"}, "does not exist"},
		{"Bash", nil, map[string]any{"env": []any{"NOT-A-NAME"}}, "not a variable name"},
		{"Bash", nil, map[string]any{"timeout_ms": "soon"}, "timeout_ms"},
	}
	for _, c := range cases {
		_, err := fx.reg.Open(context.Background(), tool.Declaration{Name: "T", Provider: c.provider, Args: c.args, Named: c.named, Dir: fx.work})
		if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s(%v, %v): %v, want TOOL_CONFIG with %q", c.provider, c.args, c.named, err, c.want)
		}
	}
}

type runResult struct {
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	TimedOut bool   `json:"timedOut"`
}

func run(t *testing.T, p tool.Provider, command string) runResult {
	t.Helper()
	var r runResult
	mustCall(t, p, "run", map[string]any{"command": command}, &r)
	return r
}

// pluginPID finds the one running child of this process serving the built-in plugin which.
func pluginPID(t *testing.T, which string) int {
	t.Helper()
	pids := pluginPIDs(which)
	switch len(pids) {
	case 0:
		t.Fatalf("no %s plugin is running", which)
	case 1:
	default:
		t.Fatalf("%d %s plugins are running", len(pids), which)
	}
	return pids[0]
}

// pluginPIDs lists the running children of this process serving the built-in plugin which.
func pluginPIDs(which string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	want := PluginCommand + "\x00" + which + "\x00"
	var found []int
	for _, d := range dirs {
		cmdline, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.HasSuffix(string(cmdline), want) || strings.Contains(string(cmdline), sandbox.Command) {
			continue
		}
		stat, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) && fields[0] != "Z" {
			pid, _ := strconv.Atoi(filepath.Base(d))
			found = append(found, pid)
		}
	}
	return found
}

// descendants lists the processes below pid, as the host's /proc shows them (a plugin's PID
// namespace numbers them differently).
func descendants(pid int) []int {
	children := map[int][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(fields[1])
		n, _ := strconv.Atoi(filepath.Base(d))
		children[ppid] = append(children[ppid], n)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, children[p]...)
		queue = append(queue, children[p]...)
	}
	return out
}

// waitForDescendant waits until a process below pid runs the program named comm, and returns
// its pid as the host sees it.
func waitForDescendant(t *testing.T, pid int, comm string) int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, d := range descendants(pid) {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", d)); strings.TrimSpace(string(b)) == comm {
				return d
			}
		}
	}
	t.Fatalf("no %s below process %d", comm, pid)
	return 0
}

// procEnviron reads a process's environment from outside it (the test is the host).
func procEnviron(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatalf("read the plugin's environment: %v", err)
	}
	return strings.ReplaceAll(string(b), "\x00", "\n")
}

// TestSecretsStayInTheHost is the proof for the built-in plugins: a secret in the
// host's environment is not in the plugin's environment, not readable through
// /proc/<host pid>/environ, and not on its stdin; a variable the declaration lists is there.
func TestSecretsStayInTheHost(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("skipped: this system has no /proc to read environments from")
	}
	for _, mode := range modes {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx := newFixture(t, mode)
			sh := fx.open(t, "Shell", "Bash", nil, map[string]any{"env": []any{"HALO_VISIBLE"}})
			r := run(t, sh, `env`)
			if strings.Contains(r.Stdout, secret) || strings.Contains(r.Stdout, "OPENAI_API_KEY") {
				t.Fatalf("a command saw the host's secret:\n%s", r.Stdout)
			}
			if strings.Contains(r.Stdout, pluginv1.TokenEnv) {
				t.Fatalf("a command inherited its plugin's connection secret:\n%s", r.Stdout)
			}
			if !strings.Contains(r.Stdout, "HALO_VISIBLE=visible-value") {
				t.Fatalf("the listed variable is missing:\n%s", r.Stdout)
			}
			// The plugin process itself, read from outside.
			pid := pluginPID(t, "bash")
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid)); err != nil || link != "/dev/null" {
				t.Fatalf("the Bash plugin's stdin is %q (%v)", link, err)
			}
			if env := procEnviron(t, pid); strings.Contains(env, secret) || !strings.Contains(env, "HALO_VISIBLE=visible-value") {
				t.Fatalf("the Bash plugin's environment:\n%s", env)
			}
			r = run(t, sh, fmt.Sprintf("cat /proc/%d/environ", os.Getpid()))
			if r.ExitCode == 0 || strings.Contains(r.Stdout, secret) {
				t.Fatalf("a command read the host's environ: %+v", r)
			}

			ws := fx.open(t, "Files", "Workspace", []any{"."}, nil)
			var l struct{}
			mustCall(t, ws, "list", map[string]any{}, &l)
			wpid := pluginPID(t, "workspace")
			if env := procEnviron(t, wpid); strings.Contains(env, secret) || strings.Contains(env, "HALO_VISIBLE") {
				t.Fatalf("the Workspace plugin's environment:\n%s", env)
			}
			if link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", wpid)); err != nil || link != "/dev/null" {
				t.Fatalf("the Workspace plugin's stdin is %q (%v)", link, err)
			}
			// A workspace rooted in the host's /proc folder still cannot read its environ.
			hostProc := fx.open(t, "Proc", "Workspace", []any{fmt.Sprintf("/proc/%d", os.Getpid())}, nil)
			res, err := call(t, hostProc, "read", map[string]any{"path": "environ"})
			if err == nil || strings.Contains(string(res), secret) {
				t.Fatalf("the Workspace plugin read the host's environ: %s", res)
			}
		})
	}
}

// TestPluginsStartConfined: a sandboxed built-in is started straight from a confined thread
// of the host: every thread of the plugin has no_new_privs and no capability, in a PID
// namespace of its own, and in the host's user namespace when the host is root.
func TestPluginsStartConfined(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil || !New(Config{}).Sandboxed() {
		t.Skip("skipped: the sandbox and its proof through /proc are Linux's")
	}
	for _, mode := range modes[1:] {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx := newFixture(t, mode)
			sh := fx.open(t, "Shell", "Bash", nil, nil)
			if pids := pluginPIDs("bash"); len(pids) != 0 {
				t.Fatalf("opening a declaration started its plugin (%v): it starts on the first call", pids)
			}
			run(t, sh, "true")
			pid := pluginPID(t, "bash")
			// What the plugin runs gains nothing either, even as root of a user namespace. (A
			// command cannot read its own /proc entries: the host reads them.)
			done := make(chan error, 1)
			go func() { // the test waits for it below
				_, err := sh.Call(context.Background(), tool.Request{Method: "run", Args: mustJSON(map[string]any{"command": "exec sleep 2"})})
				done <- err
			}()
			sleeper := waitForDescendant(t, pid, "sleep")
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", sleeper)); err != nil || strings.Count(string(b), "\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n") != 1 || !strings.Contains(string(b), "CapAmb:\t0000000000000000") || !strings.Contains(string(b), "NoNewPrivs:\t1") {
				t.Errorf("a command's capabilities: %v\n%s", err, b)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
			if err != nil || len(tasks) == 0 {
				t.Fatalf("threads of %d: %v", pid, err)
			}
			userNS := mode == "sandbox+userns" || os.Geteuid() != 0
			sets := []string{"CapInh", "CapPrm", "CapEff", "CapAmb"}
			if !userNS {
				// Only root may empty the bounding set, and a new user namespace starts with a
				// full one (which grants nothing under no_new_privs with the others empty).
				sets = append(sets, "CapBnd")
			}
			for _, f := range tasks {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				status := string(b)
				if !strings.Contains(status, "NoNewPrivs:\t1") {
					t.Errorf("%s: no no_new_privs", f)
				}
				for _, set := range sets {
					if !strings.Contains(status, set+":\t0000000000000000") {
						t.Errorf("%s: %s is not empty", f, set)
					}
				}
			}
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err != nil || !strings.Contains(string(b), "NSpid:\t"+strconv.Itoa(pid)+"\t1\n") {
				t.Errorf("plugin %d is not process 1 of its own PID namespace: %v\n%s", pid, err, b)
			}
			own, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/user", pid))
			host, _ := os.Readlink("/proc/self/ns/user")
			if (own != host) != userNS {
				t.Errorf("user namespace %s, the host's %s: want its own %v", own, host, userNS)
			}
		})
	}
}

// TestSandboxKeepsHomeSecretsOut: under Landlock, a Bash command reads its cwd but not
// ~/.ssh or a .env beside the project, and writes only its cwd and its TMPDIR.
func TestSandboxKeepsHomeSecretsOut(t *testing.T) {
	for _, mode := range modes[1:] {
		t.Run("sandbox="+mode, func(t *testing.T) { testHomeSecrets(t, mode) })
	}
}

func testHomeSecrets(t *testing.T, mode string) {
	fx := newFixture(t, mode)
	if !fx.status.Enforced() {
		t.Skipf("skipped: this kernel cannot enforce the sandbox (%s)", fx.status.Reason)
	}
	sh := fx.open(t, "Shell", "Bash", nil, map[string]any{"cwd": "."})
	for _, cmd := range []string{`cat "$HOME/.ssh/id_ed25519"`, `cat "$HOME/.env"`, `cat ../.env`, `echo x > "$HOME/planted"`, `ls /tmp`} {
		r := run(t, sh, cmd)
		if r.ExitCode == 0 || strings.Contains(r.Stdout, "PRIVATE") || strings.Contains(r.Stdout, secret) {
			t.Errorf("%s succeeded in the sandbox: %+v", cmd, r)
		} else if !strings.Contains(r.Stderr, "ermission denied") {
			t.Errorf("%s: want permission denied, got %+v", cmd, r)
		}
	}
	r := run(t, sh, `cat notes.md && echo made > docs/made.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"`)
	if r.ExitCode != 0 || r.Stdout != "a\nb\ntmp\n" {
		t.Fatalf("work inside the granted folders failed: %+v", r)
	}
	ws := fx.open(t, "Files", "Workspace", []any{"."}, nil)
	if err := os.Symlink(filepath.Join(fx.home, ".env"), filepath.Join(fx.work, "dotenv")); err != nil {
		t.Fatal(err)
	}
	_, err := call(t, ws, "read", map[string]any{"path": "dotenv"})
	wantDomainFailure(t, err, "outside the workspace root")
}

// TestFoldersThroughLinksStillWork: the sandbox grants no path with a symbolic link on it
// (sandbox.Resolve), so a project reached through a link, and a TMPDIR that is one, are
// granted resolved: Bash and Workspace work there as anywhere.
func TestFoldersThroughLinksStillWork(t *testing.T) {
	fx := newFixture(t, "sandbox")
	if !fx.status.Enforced() {
		t.Skipf("skipped: this kernel cannot enforce the sandbox (%s)", fx.status.Reason)
	}
	base := filepath.Dir(fx.home)
	linkedWork, linkedTmp := filepath.Join(base, "linked-project"), filepath.Join(base, "linked-tmp")
	if err := os.Symlink(fx.work, linkedWork); err != nil {
		t.Fatal(err)
	}
	realTmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(realTmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realTmp, linkedTmp); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", linkedTmp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open := func(provider string, args []any, named map[string]any) tool.Provider {
		p, err := fx.reg.Open(ctx, tool.Declaration{Name: "T", Provider: provider, Args: args, Named: named, Dir: linkedWork})
		if err != nil {
			t.Fatalf("open %s through links: %v\nlogs:\n%s", provider, err, fx.logs)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	sh := open("Bash", nil, map[string]any{"cwd": "."})
	if r := run(t, sh, `cat notes.md && echo made > docs/made.txt && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t"`); r.ExitCode != 0 || r.Stdout != "a\nb\ntmp\n" {
		t.Errorf("Bash in a project reached through a link, TMPDIR a link: %+v", r)
	}
	ws := open("Workspace", []any{"./docs"}, map[string]any{"write": true})
	var r struct{ Content string }
	mustCall(t, ws, "read", map[string]any{"path": "made.txt"}, &r)
	if r.Content != "made\n" {
		t.Errorf("Workspace in a project reached through a link: %+v", r)
	}
}

// TestBashNetworkFalse: network: false cuts TCP and UDP where the kernel can; the default keeps
// them.
func TestBashNetworkFalse(t *testing.T) {
	fx := newFixture(t, "sandbox")
	if !fx.status.TCP {
		t.Skipf("skipped: this kernel cannot limit TCP (Landlock ABI %d; 4 is needed): %s", fx.status.ABI, fx.status.Reason)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // ends when ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", ln.Addr().(*net.TCPAddr).Port)
	cut := fx.open(t, "Offline", "Bash", nil, map[string]any{"network": false})
	if r := run(t, cut, connect); r.ExitCode == 0 || strings.Contains(r.Stdout, "connected") {
		t.Fatalf("network: false connected: %+v", r)
	}
	online := fx.open(t, "Online", "Bash", nil, nil)
	if r := run(t, online, connect); r.ExitCode != 0 || r.Stdout != "connected\n" {
		t.Fatalf("the default Bash could not connect: %+v", r)
	}
	// UDP, which Landlock limits only from ABI 10: the seccomp filter refuses the socket.
	if !fx.status.Sockets {
		t.Skip("skipped the UDP half: this kernel cannot install seccomp filters")
	}
	udp := "exec 3<>/dev/udp/127.0.0.1/9 && echo opened"
	if r := run(t, cut, udp); r.ExitCode == 0 || strings.Contains(r.Stdout, "opened") || !strings.Contains(r.Stderr, "ermission denied") {
		t.Fatalf("network: false opened a UDP socket: %+v", r)
	}
	if r := run(t, online, udp); r.ExitCode != 0 || r.Stdout != "opened\n" {
		t.Fatalf("the default Bash could not open a UDP socket: %+v", r)
	}
}

func TestBashTimeoutKillsGrandchildren(t *testing.T) {
	for _, mode := range modes[1:] {
		t.Run("sandbox="+mode, func(t *testing.T) { testTimeoutKillsGrandchildren(t, mode) })
	}
}

func testTimeoutKillsGrandchildren(t *testing.T, mode string) {
	fx := newFixture(t, mode)
	sh := fx.open(t, "Shell", "Bash", nil, map[string]any{"timeout_ms": 500})
	run(t, sh, "true")
	plugin := pluginPID(t, "bash")
	// A subshell in the background starts a grandchild that becomes sleep. The host finds
	// both below the plugin (a command cannot read its own /proc entries, and the plugin's
	// PID namespace numbers them differently).
	script := `( ( exec sleep 60 ) & wait ) & wait`
	type outcome struct {
		res json.RawMessage
		err error
	}
	done := make(chan outcome, 1)
	go func() { // the test waits for it below
		res, err := sh.Call(context.Background(), tool.Request{Method: "run", Args: mustJSON(map[string]any{"command": script})})
		done <- outcome{res, err}
	}()
	// While the command runs, the grandchild exists on the host as sleep, below the shells.
	waitForDescendant(t, plugin, "sleep")
	procs := descendants(plugin)
	if len(procs) < 3 {
		t.Fatalf("want the shell, the subshell and sleep below the plugin, found %v", procs)
	}
	o := <-done
	var r runResult
	if o.err != nil || json.Unmarshal(o.res, &r) != nil {
		t.Fatalf("run: %v %s", o.err, o.res)
	}
	if !r.TimedOut || r.ExitCode != -1 {
		t.Fatalf("result = %+v", r)
	}
	for _, pid := range procs {
		deadline := time.Now().Add(3 * time.Second)
		for syscall.Kill(pid, 0) == nil && !zombie(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d outlived the time limit", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// childCPU is the user and system time of this process's finished children.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] == "Z"
}

// BenchmarkColdStart measures opening a Workspace declaration and making its first call
// (start, handshake, configure, list), then closing it apart: without a sandbox; started
// from a confined thread (in a PID namespace alone when the host is root); the same with a
// user namespace as well, as a host that is not root starts it; and, as the cost this
// replaced, through the `halo __sandbox` wrapper in user and PID namespaces, which started
// the binary twice.
//
// It starts this test binary; HALO_BENCH_EXE names a built halo binary to start instead (go
// build -o /tmp/halo ./cmd/halo), whose package initialisation is what a user pays.
func BenchmarkColdStart(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	if halo := os.Getenv("HALO_BENCH_EXE"); halo != "" {
		exe = halo
	}
	dir := b.TempDir()
	ctx := context.Background()
	decl := tool.Declaration{Name: "Files", Provider: "Workspace", Args: []any{dir}, Dir: dir}
	for _, mode := range append(modes, "wrapper") {
		b.Run("sandbox="+mode, func(b *testing.B) {
			open := func() (tool.Provider, error) {
				if mode == "wrapper" {
					c := plugin.New(plugin.Command{
						Name: "Workspace", Path: exe, Args: []string{PluginCommand, "workspace"}, Getenv: hostEnv(dir),
						Wrap: sandbox.WrapCommand(exe, WorkspacePolicy(workspace.Options{Root: dir})),
					}, plugin.Options{})
					p, err := c.Open(ctx, decl)
					if err != nil {
						c.Close()
						return nil, err
					}
					return stopsClient{Provider: p, client: c}, nil
				}
				sandboxed := mode != "none"
				return New(Config{Executable: exe, Getenv: hostEnv(dir), Sandbox: &sandboxed, userNamespace: mode == "sandbox+userns"}).openWorkspace(ctx, decl)
			}
			var closing time.Duration
			// CPU time of the plugin processes (and the wrapper), which a busy machine does not
			// inflate the way it inflates wall time.
			cpuBefore := childCPU()
			for b.Loop() {
				p, err := open()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Call(ctx, tool.Request{Method: "list", Args: json.RawMessage(`{}`)}); err != nil {
					b.Fatal(err)
				}
				// Closing is not start-up: time it apart.
				start := time.Now()
				b.StopTimer()
				p.Close()
				b.StartTimer()
				closing += time.Since(start)
			}
			b.ReportMetric(float64(closing.Microseconds())/float64(b.N)/1000, "close-ms/op")
			b.ReportMetric(float64((childCPU()-cpuBefore).Microseconds())/float64(b.N)/1000, "plugin-cpu-ms/op")
		})
	}
}

// stopsClient is a provider that stops its own plugin client when it is closed.
type stopsClient struct {
	tool.Provider
	client *plugin.Client
}

func (c stopsClient) Close() error { return errors.Join(c.Provider.Close(), c.client.Close()) }

// pidOf returns the process id of the plugin serving p, a provider a registry opened.
func pidOf(p tool.Provider) int {
	for {
		switch x := p.(type) {
		case *owned:
			return x.PID()
		case interface{ Unwrap() tool.Provider }:
			p = x.Unwrap()
		default:
			return 0
		}
	}
}

// TestWarnsWhenTheKernelCannotEnforce: the host says so, once, rather than silently running
// plugins unconfined.
func TestWarnsWhenTheKernelCannotEnforce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	on := true
	dir := t.TempDir()
	b := New(Config{
		Executable: exe, Getenv: hostEnv(dir), Sandbox: &on,
		Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn}),
		Status: &sandbox.Status{OS: "linux", Reason: "Landlock is built into this kernel but turned off"},
	})
	reg := tool.NewRegistry()
	for _, ty := range b.Types() {
		reg.Add(ty)
	}
	for i := 0; i < 2; i++ {
		p, err := reg.Open(context.Background(), tool.Declaration{Name: "Files", Provider: "Workspace", Args: []any{dir}, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	if n := strings.Count(logs.String(), "sandbox: NOT ENFORCED: Landlock is built into this kernel but turned off"); n != 1 {
		t.Fatalf("want the warning once, got %d times:\n%s", n, logs.String())
	}
}

// Bash's run describes command as its shell command line, the argument a single positional
// value fills, so templates a pipeline writes there are quoted (issue 27 item 11).
func TestBashRunIsAShellCommand(t *testing.T) {
	var bashType tool.Type
	for _, ty := range New(Config{Status: &sandbox.Status{}}).Types() {
		if ty.Name == "Bash" {
			bashType = ty
		}
	}
	m, ok := tool.CalledMethod(bashType.Methods, "")
	if !ok || m.Name != "run" || m.Shell != "command" || !m.ShellFillsFirst() {
		t.Fatalf("Bash's method %+v", m)
	}
}
