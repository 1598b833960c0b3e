//go:build !linux

package sandbox

import (
	"fmt"
	"io"
	"os/exec"
	"runtime"
	"syscall"
)

// Detect reports that this system has no sandbox the wrapper can apply.
func Detect() Status {
	return Status{OS: runtime.GOOS, Reason: "Landlock is Linux only; on " + runtime.GOOS + " plugins are not confined to their folders"}
}

// Exec warns on stderr and runs argv without a file sandbox.
func Exec(p Policy, argv, env []string, getenv func(string) string, stderr io.Writer) error {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	fmt.Fprintf(stderr, "halo sandbox: warning: %s\n", Detect().String())
	return syscall.Exec(prog, argv, env)
}

// ConfineThread leaves the thread unconfined: there is no sandbox to apply here, and the
// host says so (Detect).
func ConfineThread(p Policy, program string, env []string) error { return nil }

// DropPrivileges does nothing: capabilities and no_new_privs are Linux's.
func DropPrivileges() error { return nil }

// RestrictThread does nothing: capabilities, no_new_privs and seccomp are Linux's.
func RestrictThread() error { return nil }
