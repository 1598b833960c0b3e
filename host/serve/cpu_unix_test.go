//go:build unix

package serve_test

import (
	"syscall"
	"time"
)

// processCPU is the processor time this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
