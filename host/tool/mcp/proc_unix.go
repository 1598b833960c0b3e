//go:build unix && !linux

package mcp

import "syscall"

// sysProcAttr starts a stdio server in a session of its own: its own process group, so Close
// can stop everything it started, and no controlling terminal. Only Linux has a parent-death
// signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
