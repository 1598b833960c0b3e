package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"halolang.dev/halo/internal/usertest"
)

// TestMain lets the test binary act as the wrapper: Wrap(os.Args[0], ...) runs it with
// __sandbox first, as the halo binary would be run.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Command {
		os.Exit(Main(os.Args[2:], os.Environ(), os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == reportSelf {
		os.Exit(reportCredentials())
	}

	os.Exit(m.Run())
}

func TestWrapParseRoundTrip(t *testing.T) {
	cases := []Policy{
		{},
		{ReadOnly: []string{"/a", "/b c"}, ReadWrite: []string{"/w"}, Network: true},
		{ReadWrite: []string{"/--"}},
		{ReadOnly: []string{"/r"}, ListOnly: []string{"/project", "/x y"}},
	}
	for _, p := range cases {
		argv := Wrap("/bin/halo", p, []string{"/bin/prog", "--ro", "x"})
		if argv[0] != "/bin/halo" || argv[1] != Command {
			t.Fatalf("Wrap = %q", argv)
		}
		got, prog, err := ParseArgs(argv[2:])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(prog, []string{"/bin/prog", "--ro", "x"}) {
			t.Errorf("program = %q", prog)
		}
		if fmt.Sprint(got) != fmt.Sprint(p) {
			t.Errorf("policy = %+v, want %+v", got, p)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "missing --"},
		{[]string{"--ro"}, "needs a path"},
		{[]string{"--ro", "rel/path", "--", "x"}, "must be absolute"},
		{[]string{"--bogus", "--", "x"}, "unknown argument"},
		{[]string{"--"}, "no program"},
	}
	for _, c := range cases {
		_, _, err := ParseArgs(c.args)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseArgs(%q) = %v, want an error with %q", c.args, err, c.want)
		}
	}
}

func TestStatusLine(t *testing.T) {
	cases := []struct {
		s    Status
		want string
	}{
		{Status{Reason: "Landlock is Linux only"}, "sandbox: NOT ENFORCED: Landlock is Linux only; plugins run with a clean environment but can read and write whatever your user can"},
		{Status{ABI: 1, Files: true}, "sandbox: Landlock ABI 1 confines files, other processes' /proc entries (this kernel cannot limit network, signals)"},
		{Status{ABI: 6, Files: true, TCP: true, Scoped: true}, "sandbox: Landlock ABI 6 confines files, TCP for plugins without network, signals, abstract sockets, other processes' /proc entries (this kernel cannot limit UDP)"},
		{Status{ABI: 10, Files: true, TCP: true, UDP: true, Scoped: true}, "sandbox: Landlock ABI 10 confines files, TCP and UDP for plugins without network, signals, abstract sockets, other processes' /proc entries"},
		{Status{ABI: 7, Files: true, TCP: true, Scoped: true, Sockets: true}, "sandbox: Landlock ABI 7 confines files, signals, abstract sockets, other processes' /proc entries; seccomp denies plugins terminal injection, the kernel keyrings and, without network, every socket but Unix sockets"},
		{Status{ABI: 1, Files: true, Sockets: true}, "sandbox: Landlock ABI 1 confines files, other processes' /proc entries; seccomp denies plugins terminal injection, the kernel keyrings and, without network, every socket but Unix sockets (this kernel cannot limit signals)"},
	}
	for _, c := range cases {
		if got := c.s.String(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// needLandlock skips a test that proves enforcement on a kernel that cannot enforce.
func needLandlock(t *testing.T) Status {
	t.Helper()
	s := Detect()
	if !s.Enforced() {
		t.Skipf("skipped: this kernel cannot enforce the sandbox (%s)", s.Reason)
	}
	return s
}

// Two ways into the sandbox: the wrapper (`halo __sandbox ... -- program`), and a process
// started from a confined thread (ConfineThread), which is how the host starts plugins.
var ways = []string{"wrapper", "thread"}

// run runs bash -c script inside policy p, started the given way, and returns its output.
func run(t *testing.T, way string, p Policy, env []string, script string) (string, error) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("skipped: bash is not installed")
	}
	var out bytes.Buffer
	if way == "wrapper" {
		argv := Wrap(os.Args[0], p, []string{bash, "-c", script})
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := startConfined(cmd, p); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	return out.String(), err
}

// startConfined starts cmd from a new thread confined to p, which ends at once: what the
// host does, without the parent-death signal that would need the thread kept.
func startConfined(cmd *exec.Cmd, p Policy) error {
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := ConfineThread(p, cmd.Path, cmd.Env); err != nil {
			errc <- err
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// reportSelf makes the test binary print its own capability sets and no_new_privs, in the
// format of /proc/<pid>/status: a sandboxed program can no longer read its own /proc entries.
const reportSelf = "__report-self"

// TestHomeSecretsAreOutOfReach plays a plugin that tries to read ~/.ssh, ~/.aws and a .env
// file beside its folder, and the host's environment through /proc.
func TestHomeSecretsAreOutOfReach(t *testing.T) {
	needLandlock(t)
	base := t.TempDir()
	home := filepath.Join(base, "home")
	work := filepath.Join(home, "project")
	ro := filepath.Join(base, "ro")
	for _, f := range []struct{ path, body string }{
		{filepath.Join(home, ".ssh", "id_ed25519"), "PRIVATE KEY"},
		{filepath.Join(home, ".aws", "credentials"), "aws_secret_access_key=XYZ"},
		{filepath.Join(home, ".env"), "OPENAI_API_KEY=sk-secret"},
		{filepath.Join(work, "main.go"), "package main"},
		{filepath.Join(ro, "data.txt"), "readable"},
	} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The shell's policy (as Bash's), the test binary for reportSelf, ro.
	p := Policy{ReadOnly: append(append(append(append([]string{}, ShellReadOnly...), EtcReadOnly("/etc")...), ProcReadOnly("/proc")...), filepath.Dir(os.Args[0]), ro), ReadWrite: []string{work}}
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "SELF=" + os.Args[0]}

	denied := []struct{ name, script string }{
		{"ssh key", `cat "$HOME/.ssh/id_ed25519"`},
		{"aws credentials", `cat "$HOME/.aws/credentials"`},
		{"dotenv beside the folder", `cat "$HOME/.env"`},
		{"listing home", `ls "$HOME"`},
		{"host environ through /proc", fmt.Sprintf("cat /proc/%d/environ", os.Getpid())},
		{"host memory maps through /proc", fmt.Sprintf("cat /proc/%d/maps", os.Getpid())},
		{"host command line through /proc", fmt.Sprintf("cat /proc/%d/cmdline", os.Getpid())},
		{"other processes' sockets through /proc", "cat /proc/net/unix"},
		{"own /proc entries", "cat /proc/self/status"},
		{"the kernel keyrings' listing", "cat /proc/keys"},
		{"write to a read-only folder", fmt.Sprintf("echo x > %q", filepath.Join(ro, "new.txt"))},
		{"write beside the folder", fmt.Sprintf("echo x > %q", filepath.Join(home, "planted"))},
		// Even when the host runs as root, and file ownership would allow it.
		{"password hashes", "test -e /etc/shadow || { echo 'Permission denied (no /etc/shadow here)' >&2; exit 1; }; cat /etc/shadow"},
		{"a raw device", "d=$(ls /dev/[sv]d[a-z] /dev/nvme0n1 /dev/loop0 2>/dev/null | head -1); test -n \"$d\" || { echo 'Permission denied (no disk device here)' >&2; exit 1; }; head -c 16 \"$d\" >/dev/null"},
	}
	for _, c := range denied {
		for _, way := range ways {
			t.Run(way+"/denied "+c.name, func(t *testing.T) {
				out, err := run(t, way, p, env, c.script)
				if err == nil {
					t.Fatalf("%s succeeded inside the sandbox:\n%s", c.script, out)
				}
				for _, secret := range []string{"PRIVATE KEY", "aws_secret", "sk-secret"} {
					if strings.Contains(out, secret) {
						t.Fatalf("secret leaked: %s", out)
					}
				}
				if !strings.Contains(out, "ermission denied") {
					t.Fatalf("want a permission error, got:\n%s", out)
				}
			})
		}
	}
	allowed := []struct{ name, script, want string }{
		{"read its folder", fmt.Sprintf("cat %q", filepath.Join(work, "main.go")), "package main"},
		{"write its folder", fmt.Sprintf("cd %q && echo hi > out.txt && cat out.txt && rm out.txt", work), "hi"},
		{"read a read-only folder", fmt.Sprintf("cat %q", filepath.Join(ro, "data.txt")), "readable"},
		{"system-wide /proc entries", "head -1 /proc/meminfo", "MemTotal:"},
		{"system programs", "ls /usr/bin >/dev/null && echo ok", "ok"},
		{"/etc without its secrets", "cat /etc/passwd | head -1", "root:"},
		// Even a host running as root hands its plugins no capability (CAP_SYS_PTRACE would
		// open other processes' /proc entries again).
		// The bounding set too, which only root may empty.
		{"no capabilities", "out=$(\"$SELF\" " + reportSelf + ") && test $(echo \"$out\" | grep -c -E '^Cap(" + capSets() + "):') -ge 4 && echo caps=$(echo \"$out\" | grep -E '^Cap(" + capSets() + ")' | grep -v -c ':\\s*0*$')", "caps=0\n"},
		{"no_new_privs", "\"$SELF\" " + reportSelf + " | grep NoNewPrivs", "NoNewPrivs:\t1"},
	}
	for _, c := range allowed {
		for _, way := range ways {
			t.Run(way+"/allowed "+c.name, func(t *testing.T) {
				out, err := run(t, way, p, env, c.script)
				if err != nil || !strings.Contains(out, c.want) {
					t.Fatalf("%s: %v\n%s", c.script, err, out)
				}
			})
		}
	}
}

// capSets are the capability sets of /proc/<pid>/status a sandboxed program must have
// empty: all of them when the test runs as root, which may empty the bounding set.
func capSets() string {
	if os.Geteuid() == 0 {
		return "Inh|Prm|Eff|Bnd|Amb"
	}
	return "Inh|Prm|Eff|Amb"
}

func TestNetworkIsCutUnlessAllowed(t *testing.T) {
	s := needLandlock(t)
	if !s.TCP {
		t.Skipf("skipped: Landlock ABI %d cannot limit TCP (ABI 4 can)", s.ABI)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // owned by the listener: Accept fails once ln is closed
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo connected", port)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	for _, way := range ways {
		out, err := run(t, way, Policy{ReadOnly: ShellReadOnly}, env, script)
		if err == nil || strings.Contains(out, "connected") {
			t.Fatalf("%s: a plugin without network connected: %v\n%s", way, err, out)
		}
		out, err = run(t, way, Policy{ReadOnly: ShellReadOnly, Network: true}, env, script)
		if err != nil || !strings.Contains(out, "connected") {
			t.Fatalf("%s: a plugin with network could not connect: %v\n%s", way, err, out)
		}
	}
}

// TestUDPIsCutUnlessAllowed: Landlock limits UDP only from ABI 10; the seccomp filter cuts
// it, with every other socket but Unix sockets, on any kernel.
func TestUDPIsCutUnlessAllowed(t *testing.T) {
	if !Detect().Sockets {
		t.Skip("skipped: this kernel cannot install seccomp filters (Linux 4.14 with CONFIG_SECCOMP_FILTER is needed)")
	}
	// Sending a UDP datagram needs no listener: bash opens the socket and connects it.
	script := "exec 3<>/dev/udp/127.0.0.1/9 && echo opened"
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
	for _, way := range ways {
		out, err := run(t, way, Policy{ReadOnly: ShellReadOnly}, env, script)
		if err == nil || strings.Contains(out, "opened") || !strings.Contains(out, "ermission denied") {
			t.Fatalf("%s: a plugin without network opened a UDP socket (or failed for another reason): %v\n%s", way, err, out)
		}
		out, err = run(t, way, Policy{ReadOnly: ShellReadOnly, Network: true}, env, script)
		if err != nil || !strings.Contains(out, "opened") {
			t.Fatalf("%s: a plugin with network could not open a UDP socket: %v\n%s", way, err, out)
		}
	}
}

func TestWrapperRefusesBadUsage(t *testing.T) {
	cmd := exec.Command(os.Args[0], Command, "--ro", "relative", "--", "true")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "must be absolute") {
		t.Fatalf("%v\n%s", err, out)
	}
}

func TestEtcReadOnlyLeavesSecretsOut(t *testing.T) {
	etc := t.TempDir()
	for _, f := range []string{"passwd", "shadow", "ssh/ssh_config", "ssh/ssh_host_ed25519_key", "ssl/certs/ca.pem", "ssl/private/key.pem", "sudoers.d/x"} {
		p := filepath.Join(etc, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, p := range EtcReadOnly(etc) {
		got = append(got, strings.TrimPrefix(p, etc+"/"))
	}
	want := "passwd ssh/ssh_config ssl/certs"
	if strings.Join(got, " ") != want {
		t.Fatalf("EtcReadOnly = %v, want %s", got, want)
	}
}

// TestGrantReplacedByALinkIsRefused plays a plugin that may write the project and, between
// the host resolving a folder it grants and the sandbox granting it, replaces the folder
// with a link to a secret one: the sandbox refuses to start rather than grant where the link
// leads. A folder granted as it is still works.
func TestGrantReplacedByALinkIsRefused(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	project, secret := filepath.Join(dir, "project"), filepath.Join(dir, "secret")
	for _, d := range []string{filepath.Join(project, "docs"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "key"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(project, "data") // resolved by the host as a folder, then swapped
	if err := os.Symlink(secret, data); err != nil {
		t.Fatal(err)
	}
	p := Policy{ReadWrite: []string{filepath.Join(project, "docs"), data}}
	script := "read k < " + filepath.Join(data, "key") + "; echo $k; echo planted > " + filepath.Join(data, "planted")

	out, err := run(t, "wrapper", p, nil, script)
	if err == nil || strings.Contains(out, "s3cret") || !strings.Contains(out, "has a symbolic link on its path") {
		t.Errorf("wrapper: %v: %s", err, out)
	}
	errc := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		errc <- ConfineThread(p, "/bin/true", nil)
	}()
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ConfineThread: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(secret, "planted")); err == nil {
		t.Error("the plugin wrote through the link")
	}

	for _, way := range ways {
		out, err := run(t, way, Policy{ReadWrite: []string{filepath.Join(project, "docs")}}, nil, "echo ok > "+filepath.Join(project, "docs", "f")+" && read x < "+filepath.Join(project, "docs", "f")+" && echo $x")
		if err != nil || strings.TrimSpace(out) != "ok" {
			t.Errorf("%s: a folder granted as it is: %v: %s", way, err, out)
		}
	}
	usertest.Rerun(t)
}
