package mcp_test

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pairedBatch is how many calls BenchmarkToolsCallPaired makes of one server before it
// turns to the other.
const pairedBatch = 2000

// BenchmarkToolsCallPaired measures a Halo server and its peer in alternating batches of
// pairedBatch calls, the peer first in every other round, so that both see the same
// machine: on a shared 2-core machine the processor time of one server's call drifted by
// half within a minute, more than BenchmarkToolsCall's rounds, which measure each server in
// turn for seconds, could tell the servers apart by. It reports the ratio of the two
// servers' processor time over the whole span of the rounds, with the work a server does
// once its calls have stopped (cpu-ratio; settledCPU), the same over the batches alone
// (batch-cpu-ratio, as figures before 3 December were), the least, median and greatest of
// the rounds' ratios, and each server's time a call over the span. The pairs are the goals' (issues 29
// and 30): halo mcp over stdio, records on, beside mcp-go's stdio server with a constant
// handler; halo serve's /mcp beside mcp-go's HTTP server in a process of its own; and each
// of them with runs saved nowhere (-norecords), which tells the record's share. b.N is the
// calls each server gets (ns/op is the time of a call of each). A batch's processor time is
// read in Linux's ticks of 10 ms: a batch takes 100 to 300 ms of it.
//
//	./scripts/bench-mcp.sh 40000 1 ToolsCallPaired
//
// Figures: docs/mcp.md, "What a call costs".
func BenchmarkToolsCallPaired(b *testing.B) {
	for _, pair := range []struct{ name, tr, halo, peer string }{
		{"stdio", "stdio", "halo", "mcpgo"},
		{"http", "http", "serve", "mcpgo-process"},
		// The same with runs saved nowhere: what the record costs, measured alike.
		{"stdio-norecords", "stdio", "halo-norecords", "mcpgo"},
		{"http-norecords", "http", "serve-norecords", "mcpgo-process"},
	} {
		for _, n := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/clients=%d", pair.name, n), func(b *testing.B) {
				var calls [2][]func() error
				var cpu [2]func() (time.Duration, bool)
				for i, srv := range []string{pair.halo, pair.peer} {
					calls[i], cpu[i] = connectBench(b, pair.tr, srv, n)
					if _, ok := cpu[i](); !ok {
						b.Skipf("the processor time of %s's process cannot be read here (Linux's /proc): the pair cannot be compared", srv)
					}
					callMany(b, calls[i], 200) // warm up
				}
				batch := min(pairedBatch, b.N)
				rounds := b.N / batch
				var start [2]time.Duration
				for i := range cpu {
					start[i] = settledCPU(cpu[i])
				}
				var total [2]time.Duration
				ratios := make([]float64, 0, rounds)
				b.ResetTimer()
				for r := range rounds {
					order := []int{0, 1}
					if r%2 == 1 {
						order = []int{1, 0}
					}
					var used [2]time.Duration
					for _, i := range order {
						t0, _ := cpu[i]()
						callMany(b, calls[i], batch)
						t1, _ := cpu[i]()
						used[i] = t1 - t0
					}
					total[0] += used[0]
					total[1] += used[1]
					if used[1] > 0 {
						ratios = append(ratios, float64(used[0])/float64(used[1]))
					}
				}
				b.StopTimer()
				var span [2]time.Duration
				for i := range cpu {
					span[i] = settledCPU(cpu[i]) - start[i]
				}
				if total[1] == 0 || span[1] == 0 || len(ratios) == 0 {
					return
				}
				sort.Float64s(ratios)
				b.ReportMetric(float64(span[0])/float64(span[1]), "cpu-ratio")
				b.ReportMetric(float64(total[0])/float64(total[1]), "batch-cpu-ratio")
				b.ReportMetric(ratios[0], "ratio-min")
				b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
				b.ReportMetric(ratios[len(ratios)-1], "ratio-max")
				b.ReportMetric(float64(span[0].Microseconds())/float64(rounds*batch), "halo-cpu-µs")
				b.ReportMetric(float64(span[1].Microseconds())/float64(rounds*batch), "peer-cpu-µs")
			})
		}
	}
}

// settledCPU waits until a server has finished the work its calls left behind and returns
// its processor time. Halo defers some of a call's cost to when it is idle (the text index of
// the run records starts after half a second without a save), so reading a server's time
// only around its own batches would count that work in whichever batch it happened to fall
// in, or in none: the same binary measured 0.93 and 1.13 at stdio/clients=1 that way. Read
// at the start and end of all the rounds, after this wait, the time is all of it.
func settledCPU(cpu func() (time.Duration, bool)) time.Duration {
	time.Sleep(700 * time.Millisecond)
	last, _ := cpu()
	for range 100 { // at most 20 s: a server that never settles is measured as it is
		time.Sleep(200 * time.Millisecond)
		now, _ := cpu()
		if now == last {
			break
		}
		last = now
	}
	return last
}

// callMany makes k calls, spread over calls' callers.
func callMany(b *testing.B, calls []func() error, k int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, call := range calls {
		wg.Go(func() {
			for next.Add(1) <= int64(k) {
				if err := call(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
