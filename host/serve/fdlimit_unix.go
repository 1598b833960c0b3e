//go:build unix

package serve

import "syscall"

// fdLimit is the process's limit on open file descriptors (its soft RLIMIT_NOFILE, which Go
// raises to the hard limit at start), or 0 when it cannot be read.
func fdLimit() int {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
