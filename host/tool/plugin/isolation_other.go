//go:build !linux

package plugin

import "syscall"

func isolations(bool, bool) []isolation { return []isolation{isolateNone} }

func afterStart(isolation, int) error { return nil }

// restrictThread returns nil: there are no thread restrictions to apply outside Linux, and
// the plugin starts from any thread.
func restrictThread() func([]string) error { return nil }

// sysProcAttr starts a plugin in a session of its own, without a controlling terminal and in
// its own process group, so it is killed with everything it started. There is no
// parent-death signal outside Linux: a host killed with SIGKILL leaves its plugins to notice
// their closed connection and exit.
func sysProcAttr(isolation) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

func wantNamespaces() bool { return false }

// hardenHost does nothing outside Linux (see sandbox.NonDumpable).
func hardenHost() error { return nil }

func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
