//go:build !linux && !windows

package sandbox

import "syscall"

// NonDumpable does nothing outside Linux. On macOS a process of the same user can read the
// environment the host started with (sysctl KERN_PROCARGS2, what `ps eww` shows), and nothing
// short of another user account closes that: docs/plugins.md says so.
func NonDumpable() error { return nil }

// HardenProcess marks inherited descriptors close-on-exec (CloseInherited); there is no
// non-dumpable flag outside Linux (see NonDumpable).
func HardenProcess() error { return CloseInherited() }

// CloseInherited marks descriptors 3 to 1023 close-on-exec, so a descriptor the process
// inherited reaches none of its children. Descriptors that are not open are skipped.
func CloseInherited() error {
	for fd := 3; fd < 1024; fd++ {
		syscall.CloseOnExec(fd)
	}
	return nil
}
