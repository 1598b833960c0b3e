package mcp

import "syscall"

// sysProcAttr starts a stdio server in a session of its own: its own process group, so Close
// can stop everything it started, and no controlling terminal, so it cannot type into the
// user's. The kernel kills it if the host dies without closing it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
