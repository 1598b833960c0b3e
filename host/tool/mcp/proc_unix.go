//go:build unix && !linux

package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group, so Close can stop everything it
// started. Only Linux has a parent-death signal.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
