//go:build unix

package corpus

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's CPU time (user and system, every thread, the collector's too).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Loop runs f as a benchmark over a text of n bytes and reports, beside the wall-clock
// figures, the process CPU time per operation and the throughput it implies on one core.
// On a machine shared with other work the wall clock measures the crowd; CPU time
// measures the code.
func Loop(b *testing.B, n int, f func()) {
	b.SetBytes(int64(n))
	b.ReportAllocs()
	start := cpuTime()
	ops := 0
	for b.Loop() {
		f()
		ops++
	}
	if cpu := cpuTime() - start; ops > 0 && cpu > 0 {
		per := float64(cpu.Nanoseconds()) / float64(ops)
		b.ReportMetric(per, "cpu-ns/op")
		b.ReportMetric(float64(n)/per*1e9/1e6, "cpu-MB/s")
	}
}
