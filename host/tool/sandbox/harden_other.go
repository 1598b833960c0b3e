//go:build !linux

package sandbox

// NonDumpable does nothing outside Linux. On macOS a process of the same user can read the
// environment the host started with (sysctl KERN_PROCARGS2, what `ps eww` shows), and nothing
// short of another user account closes that: docs/plugins.md says so.
func NonDumpable() error { return nil }

// HardenProcess does nothing outside Linux (see NonDumpable).
func HardenProcess() error { return nil }
