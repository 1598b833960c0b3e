//go:build !unix

package serve_test

import "time"

// processCPU is 0 where getrusage is not there: BenchmarkMCP's cpu-µs/op then says 0.
func processCPU() time.Duration { return 0 }
