//go:build unix && !linux

package bash

import "syscall"

// procAttr starts the shell in a session of its own: its own process group (its pid is the
// group id), so killing the group reaches everything it started that did not leave on
// purpose, and no controlling terminal.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
