// Package testuser runs a test body twice where its result depends on privileges: once in the
// test process (root in CI) and once as the unprivileged user halo-test, in a copy of the test
// binary started with that user's ids. scripts/setup-test-deps.sh creates the user when run as
// root.
//
// The re-run starts the test binary with -test.run naming the test and a subtest "halo-test",
// and with EnvMarker set; Both sees the marker there and runs only the body. Everything the
// body needs from the first process (built executables, say) must be readable by any user:
// Share makes a folder so, and TestMain can pass its path on in an environment variable
// (Env).
package testuser

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Name is the unprivileged test user.
const Name = "halo-test"

// EnvMarker is set in the environment of a test binary re-run as Name.
const EnvMarker = "HALO_TESTUSER"

// Rerun reports whether this process is the test binary re-run as Name.
func Rerun() bool { return os.Getenv(EnvMarker) != "" }

// Lookup returns the uid and gid of Name.
func Lookup() (uid, gid int, err error) {
	u, err := user.Lookup(Name)
	if err != nil {
		return 0, 0, fmt.Errorf("no user %s (%v): run scripts/setup-test-deps.sh as root to create it", Name, err)
	}
	uid, err = strconv.Atoi(u.Uid)
	if err != nil {
		return 0, 0, err
	}
	gid, err = strconv.Atoi(u.Gid)
	return uid, gid, err
}

// Both runs body in a subtest named after the current user's kind: "root" here, then
// "halo-test" in a re-run of the test binary as that user. env adds variables to the re-run
// (K=V). A test process that is not root runs body once, as "user", and says that the root
// case needs root. A root process without the user fails, saying how to create it.
func Both(t *testing.T, env []string, body func(t *testing.T)) {
	t.Helper()
	if Rerun() {
		t.Run(Name, body)
		return
	}
	if os.Geteuid() != 0 {
		t.Run("user", body)
		t.Logf("the case as root was not run: this test process is not root (CI runs it as root)")
		return
	}
	t.Run("root", body)
	t.Run(Name, func(t *testing.T) { run(t, env) })
}

// run re-runs the current test (t's parent) as Name, in a copy of the test binary that user
// can execute, and fails t with the re-run's output when it fails.
func run(t *testing.T, env []string) {
	t.Helper()
	uid, gid, err := Lookup()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := Share(t)
	copyExe := filepath.Join(dir, filepath.Base(exe))
	if err := copyFile(exe, copyExe); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	tmp := filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	var parts []string
	for _, p := range strings.Split(t.Name(), "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	args := []string{"-test.run=" + strings.Join(parts, "/"), "-test.v", "-test.count=1"}
	cmd := exec.Command(copyExe, args...)
	cmd.Dir = tmp
	cmd.Env = append(cleanEnv(), EnvMarker+"=1", "HOME="+home, "TMPDIR="+tmp)
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || !strings.Contains(out.String(), "--- PASS: ") {
		t.Fatalf("as %s: %v\n%s", Name, err, out.String())
	}
	t.Logf("as %s (uid %d):\n%s", Name, uid, out.String())
}

// cleanEnv is this process's environment without what points into root's home (HOME) or
// temporary folder.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "TMPDIR", EnvMarker:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Share returns a new folder any user can read and enter, removed when t ends.
func Share(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "halo-testuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ShareDir makes dir readable and enterable by any user, for TestMain's built executables.
func ShareDir(dir string) error {
	return os.Chmod(dir, 0o755)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
