package bash

import "syscall"

// procAttr starts the shell in a session of its own: its own process group (its pid is the
// group id), so killing the group reaches everything it started that did not leave on
// purpose, and no controlling terminal, so a command cannot open /dev/tty to type into the
// user's terminal. The shell is killed if the plugin dies first.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
