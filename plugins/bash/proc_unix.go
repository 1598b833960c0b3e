//go:build unix && !linux

package bash

import "syscall"

// procAttr puts the shell in a new process group (its pid is the group id), so killing the
// group reaches everything it started that did not leave on purpose.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
