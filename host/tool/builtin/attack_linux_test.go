package builtin

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"halolang.dev/halo/internal/usertest"
)

// The attacks of attack_test.go that go through Linux alone: its keyring.

// keyDescription names the key TestBashCannotReadTheHostsProcOrKeys puts in the user's
// keyring.
const keyDescription = "halo-attack-test-key"

// TestBashCannotReadTheHostsProcOrKeys is item 15 of the red-team review: a Bash command read
// the host's command line (/proc/<host pid>/cmdline, with its --input values), which is
// readable to anyone who can reach /proc, and, as root, a plugin read a key from root's
// kernel keyring. Now a sandboxed command reaches /proc's system-wide entries but no
// process's (Landlock grants /proc's entries one by one, not /proc), and the seccomp filter
// every plugin gets refuses keyctl, add_key and request_key.
func TestBashCannotReadTheHostsProcOrKeys(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skipf("skipped: the attack calls request_key and keyctl by their amd64 numbers (this is %s)", runtime.GOARCH)
	}
	// A key in this user's keyring, as a user's login or a tool would leave there.
	id, err := unix.AddKey("user", keyDescription, []byte("KEYRING-SECRET-31d"), unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		t.Fatalf("control: the test cannot add a key to its own keyring: %v", err)
	}
	t.Cleanup(func() { _, _ = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0) })
	host := os.Getpid()
	// request_key (249 on amd64), then keyctl(KEYCTL_READ) (250).
	readKey := fmt.Sprintf(`perl -e '$type = "user"; $desc = %q; $id = syscall(249, $type, $desc, 0, 0); die "request_key: $!\n" if $id < 0; $buf = "\0" x 100; $n = syscall(250, 11, $id, $buf, 100); die "keyctl read: $!\n" if $n < 0; print substr($buf, 0, $n), "\n"'`, keyDescription)
	for _, mode := range modes {
		t.Run("sandbox="+mode, func(t *testing.T) {
			fx := newFixture(t, mode)
			sh := fx.open(t, "Shell", "Bash", nil, nil)
			r := run(t, sh, readKey)
			t.Logf("read the key: %+v", r)
			if strings.Contains(r.Stdout, "KEYRING-SECRET") {
				t.Errorf("a Bash command read a key from the user's keyring")
			}
			if !strings.Contains(r.Stderr, "request_key: Function not implemented") {
				t.Errorf("request_key was not refused by the filter: %+v", r)
			}
			if mode == "none" {
				return // without Landlock, /proc is the user's to read
			}
			if !fx.status.Enforced() {
				t.Skipf("skipped the /proc half: this kernel cannot enforce the sandbox (%s)", fx.status.Reason)
			}
			for _, cmd := range []string{
				fmt.Sprintf("cat /proc/%d/cmdline", host),
				fmt.Sprintf("cat /proc/%d/status", host),
				fmt.Sprintf("ls /proc/%d/", host),
				"cat /proc/net/unix",
				"ls /proc",
			} {
				r := run(t, sh, cmd)
				if r.ExitCode == 0 || !strings.Contains(r.Stderr, "ermission denied") {
					t.Errorf("%s: %+v, want permission denied", cmd, r)
				}
			}
			// What a shell and its tools need of /proc stays readable.
			r = run(t, sh, "head -c 20 /proc/meminfo && cat /proc/loadavg /proc/sys/kernel/ostype && echo <(true)")
			if r.ExitCode != 0 {
				t.Errorf("system-wide /proc entries and process substitution: %+v", r)
			}
		})
	}
	usertest.Rerun(t)
}
