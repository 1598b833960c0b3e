package mcp

import "syscall"

// sysProcAttr puts a stdio server in its own process group, so Close can stop everything it
// started, and asks the kernel to kill it if the host dies without closing it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
