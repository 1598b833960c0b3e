package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Work done on the processor shows in Self; a system without getrusage says 0.
func TestSelfGrowsWithWork(t *testing.T) {
	before := Self()
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		if before != 0 {
			t.Fatalf("Self() = %v where the system has no getrusage", before)
		}
		return
	}
	x := 0
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	if after := Self(); after <= before {
		t.Fatalf("Self() went from %v to %v after 20 ms of work (x=%d)", before, after, x)
	}
}
