package plugin

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerPID returns the process id of the process that listened on conn's socket
// (LOCAL_PEERPID), and true when it could be known.
func peerPID(conn net.Conn) (int, bool, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0, false, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var pid int
	var serr error
	if err := raw.Control(func(fd uintptr) {
		pid, serr = unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	}); err != nil {
		return 0, false, err
	}
	if serr != nil {
		return 0, false, serr
	}
	return pid, true, nil
}
