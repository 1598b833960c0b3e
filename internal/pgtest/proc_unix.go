//go:build unix

package pgtest

import (
	"os/exec"
	"syscall"
)

// supported: the cluster runs as a process group of its own, as another user under root.
const supported = true

func setProcAttr(cmd *exec.Cmd, c *credential) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if c != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(c.uid), Gid: uint32(c.gid)}
	}
}

// stopGroup signals the server's whole process group: SIGINT is PostgreSQL's fast shutdown.
func stopGroup(pid int, kill bool) {
	sig := syscall.SIGINT
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-pid, sig)
}
