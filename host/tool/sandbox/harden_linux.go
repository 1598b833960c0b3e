package sandbox

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// NonDumpable marks this process non-dumpable (prctl PR_SET_DUMPABLE 0): its
// /proc/<pid>/environ, mem, maps and fd entries then belong to root and refuse readers
// without CAP_SYS_PTRACE, so a same-user plugin or MCP server cannot read the host's secrets
// there; it also stops core dumps of the host, which would hold the same secrets. It is
// idempotent. Children do not inherit it: execve makes them dumpable again.
func NonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("mark the process non-dumpable: %w", err)
	}
	return nil
}

// HardenProcess is what cmd/halo does first, before anything could start a child:
//
//   - it marks the process non-dumpable (NonDumpable), so no child ever runs beside a host
//     whose /proc entries it can read;
//   - it marks every descriptor above 2 close-on-exec (CloseInherited), so a descriptor halo
//     inherited from whoever started it reaches no plugin, Bash command or MCP server.
func HardenProcess() error {
	if err := NonDumpable(); err != nil {
		return err
	}
	return CloseInherited()
}

// CloseInherited marks every descriptor above 2 close-on-exec: close_range(3, ~0,
// CLOSE_RANGE_CLOEXEC) on Linux 5.11 and later, and each descriptor /proc/self/fd lists on
// older kernels. Go opens its own descriptors close-on-exec already; what this catches is what
// the process inherited open (a shell's `7<file`, a CI runner's pipe), which exec.Cmd would
// otherwise pass to every child alongside its standard streams. The process keeps using
// them.
func CloseInherited() error {
	err := unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	return closeOnExecListed()
}

// closeOnExecListed marks each descriptor above 2 that /proc/self/fd lists close-on-exec:
// CloseInherited on kernels before close_range's CLOSE_RANGE_CLOEXEC (5.11).
func closeOnExecListed() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("mark inherited descriptors close-on-exec: %w", err)
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// The descriptor ReadDir used is closed by now: EBADF is fine.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}
