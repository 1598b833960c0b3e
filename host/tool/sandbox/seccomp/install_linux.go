package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Install installs Program's filter with rules r on the calling OS thread. Processes the
// thread starts afterwards inherit it, and it survives execve; the rest of the process is
// not affected. The host installs it on the thread a plugin or an MCP server is started from
// (and the wrapper on the thread it executes from). The caller must have locked its
// goroutine to the thread and set no_new_privs on it, which the kernel requires of a caller
// without CAP_SYS_ADMIN. It cannot be undone; filters installed one after the other all
// apply.
func Install(r Rules) error {
	prog, err := Program(runtime.GOARCH, r)
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filters[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filters)
	if errno != 0 {
		return fmt.Errorf("seccomp: install the filter: %w", errno)
	}
	return nil
}

// Available reports whether the kernel can install the filter: seccomp filters (Linux 3.5)
// whose actions include returning an errno, asked with SECCOMP_GET_ACTION_AVAIL (Linux 4.14).
func Available() bool {
	if _, err := Program(runtime.GOARCH, Rules{}); err != nil {
		return false
	}
	action := uint32(retErrno)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return errno == 0
}
