package plugin

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// execPinned makes cmd execute the pinned descriptor itself: its Path becomes
// /proc/self/fd/N, which execve resolves, in the new process, to the very file the host
// opened and hashed; argv[0] stays the executable's path. The descriptor is duplicated above
// every descriptor the new process is handed (its standard streams and ExtraFiles), so
// handing those out cannot overwrite it; it is close-on-exec, so the plugin does not keep it.
func (p *pinned) execPinned(cmd *exec.Cmd) error {
	low := 3 + len(cmd.ExtraFiles)
	fd, err := unix.FcntlInt(p.f.Fd(), unix.F_DUPFD_CLOEXEC, low)
	if err != nil {
		return fmt.Errorf("pin the executable: %w", err)
	}
	p.execFD = fd
	cmd.Path = fmt.Sprintf("/proc/self/fd/%d", fd)
	return nil
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// A changeWatch is an inotify watch for writes to one file: any write, truncation or
// close of a descriptor open for writing (which also reveals writes through a shared
// mapping, made visible when it is unmapped).
type changeWatch struct {
	fd int // the inotify instance, -1 when there is none
}

func watchWrites(f *os.File) changeWatch {
	in, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return changeWatch{fd: -1}
	}
	if _, err := unix.InotifyAddWatch(in, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.IN_MODIFY|unix.IN_CLOSE_WRITE); err != nil {
		unix.Close(in)
		return changeWatch{fd: -1}
	}
	return changeWatch{fd: in}
}

// changed reports whether the file saw a write since the watch started, and whether it was
// watched at all.
func (w changeWatch) changed() (bool, bool) {
	if w.fd < 0 {
		return false, false
	}
	var buf [4096]byte
	n, err := unix.Read(w.fd, buf[:])
	return err == nil && n > 0, true
}

func (w changeWatch) close() {
	if w.fd >= 0 {
		unix.Close(w.fd)
	}
}
