package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// NonDumpable marks this process non-dumpable (prctl PR_SET_DUMPABLE 0): its
// /proc/<pid>/environ, cmdline-independent entries (mem, maps, fd) then belong to root and
// refuse readers without CAP_SYS_PTRACE, so a same-user plugin or MCP server cannot read the
// host's secrets there; it also stops core dumps of the host, which would hold the same
// secrets. It is idempotent. Children do not inherit it: execve makes them dumpable again.
func NonDumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("mark the process non-dumpable: %w", err)
	}
	return nil
}

// HardenProcess is what cmd/halo does first, before anything could start a child: it marks
// the process non-dumpable (NonDumpable), so no child ever runs beside a host whose
// /proc entries it can read.
func HardenProcess() error {
	return NonDumpable()
}
