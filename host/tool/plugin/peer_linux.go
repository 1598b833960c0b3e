package plugin

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerPID returns the process id of the process that listened on conn's socket (SO_PEERCRED,
// in the host's PID namespace however deep the plugin's is), and true when it could be known.
func peerPID(conn net.Conn) (int, bool, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, false, err
	}
	if serr != nil {
		return 0, false, serr
	}
	return int(cred.Pid), true, nil
}
