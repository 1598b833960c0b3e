//go:build unix

package pkgmgr

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in its own process group and, when its context ends, kills the whole
// group, so the compiler processes go build starts are stopped too.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
