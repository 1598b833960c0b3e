//go:build unix

// Package cputime reads the processor time this process has used, the figure benchmarks
// report beside wall time: on a machine shared with other builds the wall clock swings with
// their load, and processor time much less.
package cputime

import (
	"syscall"
	"time"
)

// Self is the processor time this process has used so far, user and system; 0 when the
// system does not say.
func Self() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
