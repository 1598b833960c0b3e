// Package usertest runs a test a second time as the unprivileged user halo-test, for tests
// whose result depends on privileges: CI runs the tests as root, and an attack that root
// survives (or that fails as root only because root may do anything) must be tried as an
// ordinary user too. scripts/setup-test-deps.sh creates the user when run as root.
//
// A test calls its scenario, then Rerun:
//
//	func TestAttack(t *testing.T) {
//		attack(t)           // as whoever runs the tests
//		usertest.Rerun(t)   // as root: this test again, in a child process, as halo-test
//	}
//
// In the child, Rerun does nothing, so the scenario runs once more, unprivileged.
package usertest

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Name is the unprivileged account.
const Name = "halo-test"

// envChild marks the re-run.
const envChild = "HALO_USERTEST_CHILD"

// IsChild reports whether this process is the re-run as halo-test.
func IsChild() bool { return os.Getenv(envChild) == "1" }

// Rerun runs the current top-level test again as halo-test, in a copy of the test binary
// that user can execute, with HOME set to a fresh folder the user owns and the "K=V"
// variables env (how the parent tells the child about files it prepared), and fails t with
// the child's output if it fails. The child runs in a scratch folder, with TMPDIR one that
// halo-test can use. In the child it does nothing. Not run as root, the test has
// just run unprivileged, and Rerun says so in the test log; as root without the user, t fails
// with what to do.
func Rerun(t *testing.T, env ...string) {
	t.Helper()
	if IsChild() {
		return
	}
	if os.Geteuid() != 0 {
		t.Logf("usertest: ran as uid %d, an unprivileged user; the run as root happens in CI", os.Geteuid())
		return
	}
	u, err := user.Lookup(Name)
	if err != nil {
		t.Fatalf("usertest: this test runs again as the user %s, which does not exist: run scripts/setup-test-deps.sh as root (%v)", Name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		t.Fatalf("usertest: %s has uid %q gid %q", Name, u.Uid, u.Gid)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary lives in a folder only root can enter: copy it where halo-test can.
	bin := TempDir(t)
	exe := filepath.Join(bin, filepath.Base(self))
	if err := copyFile(self, exe); err != nil {
		t.Fatal(err)
	}
	home := TempDir(t)
	if err := os.Chown(home, uid, gid); err != nil {
		t.Fatal(err)
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	ctx := context.Background()
	if dl, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-5*time.Second))
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^"+regexp.QuoteMeta(top)+"$", "-test.count=1", "-test.v")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"TMPDIR=" + tempRoot(),
		envChild + "=1",
	}
	cmd.Env = append(cmd.Env, env...)
	// Not the package's folder, which may be somewhere halo-test cannot enter (/root): a test
	// that reads testdata passes its absolute path through env.
	cmd.Dir = bin
	cmd.SysProcAttr = asUser(uid, gid)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("usertest: %s as %s (uid %d): %v\n%s", top, Name, uid, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+top) {
		t.Fatalf("usertest: %s did not run as %s:\n%s", top, Name, out)
	}
	t.Logf("usertest: %s passed again as %s (uid %d)", top, Name, uid)
}

// TempDir returns a new folder that halo-test can enter and read (mode 0755), in a temporary
// folder it can reach, removed when the test ends: where a test as root prepares what the
// re-run as halo-test must see.
func TempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(tempRoot(), "usertest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tempRoot is the system's temporary folder when every user can reach it, else /tmp (a
// TMPDIR of root's own is common in CI).
func tempRoot() string {
	if fi, err := os.Stat(os.TempDir()); err == nil && fi.Mode().Perm()&0o001 != 0 {
		return os.TempDir()
	}
	return "/tmp"
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
