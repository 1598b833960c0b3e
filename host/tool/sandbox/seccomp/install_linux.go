package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// DenyNetwork installs Program's filter on every thread of the calling process. Threads and
// processes started afterwards inherit it, and it survives execve: the sandbox wrapper calls it
// just before executing a plugin that may not use the network. It sets no_new_privs on every
// thread first, which the kernel requires of a caller without CAP_SYS_ADMIN, and which means
// no set-user-ID program run later can shed the filter. It cannot be undone.
func DenyNetwork() error {
	prog, err := Program(runtime.GOARCH)
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filters[i] = unix.SockFilter{Code: in.Op, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if _, _, errno := psx.Syscall6(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", errno)
	}
	// TSYNC puts the same filter on every thread of the process at once.
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filters)
	if errno != 0 {
		return fmt.Errorf("seccomp: install the network filter: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: install the network filter: thread %d could not take it", r)
	}
	return nil
}
