//go:build unix

package runstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/cputime"
)

var saveProfile = flag.String("save-cpuprofile", "", "BenchmarkSave writes a CPU profile of its measured part (not of the 20,000 saves before) to this file")

// BenchmarkSave is what halo mcp (mcp: Save) and halo serve (serve: Start, then Save) ask
// of the embedded store per run: from 16 callers, 4,000 runs a second, the completed record of
// scripts/bench-mcp.sh's pipeline, a new run id from the store each (as each server makes
// them), group commit on, into a store
// that holds 20,000 runs already. It reports the process's processor time per run
// (cpu-µs/op, the commit goroutine's share included, which ns/op does not show), with
// the time Sync takes to commit the last of them.
//
// floor is the same callers at the same pace making the same records and saving them
// nowhere: what the benchmark itself costs, to subtract.
//
//	go test -run '^$' -bench Save -benchtime 8000x ./host/runstore [-args -save-cpuprofile FILE]
//
// Figures, and where the time goes: docs/mcp.md, "Where a record's time goes".
func BenchmarkSave(b *testing.B) {
	b.Run("floor", func(b *testing.B) { benchSave(b, false, true) })
	b.Run("mcp", func(b *testing.B) { benchSave(b, false, false) })
	b.Run("serve", func(b *testing.B) { benchSave(b, true, false) })
}

func benchSave(b *testing.B, start, floor bool) {
	tmpl, s := openBenchStore(b)
	defer s.Close()
	ctx := context.Background()
	save := func(t time.Time) error {
		rec := tmpl
		switch {
		case floor:
			rec.RunID = randomID()
		case start:
			rec.RunID = s.NewLongRunID() // as halo serve makes them
		default:
			rec.RunID = s.NewRunID() // as halo mcp does
		}
		rec.Meta.RunID = rec.RunID
		rec.Started, rec.Updated = t, t
		if floor {
			sink.Store(&rec)
			return nil
		}
		if start {
			rec.Status = runtime.Running
			if err := s.Start(ctx, &rec); err != nil {
				return err
			}
			rec.Status = runtime.Completed
		}
		return s.Save(&rec)
	}
	t0 := time.Now()
	for i := range 20_000 {
		if err := save(t0.Add(time.Duration(i) * time.Millisecond)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	// Runs arrive at 4,000 a second, as calls do under scripts/bench-mcp.sh's 16 clients, so
	// that a commit takes the records of about 20 ms, as there.
	if *saveProfile != "" {
		f, err := os.Create(*saveProfile)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := cputime.Self()
	b.ResetTimer()
	begin := time.Now()
	var mu sync.Mutex
	n := 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				mu.Lock()
				n++
				mine := n
				mu.Unlock()
				if mine > b.N {
					return
				}
				time.Sleep(time.Until(begin.Add(time.Duration(mine) * time.Second / 4000)))
				if err := save(time.Now()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

var textIndexRuns = flag.Int("textindex-runs", 20_000, "the runs BenchmarkTextIndex's store holds, indexed, before it measures")

// BenchmarkTextIndex is what the text index costs a run since the saves leave it behind them
// (schema step 8): b.N runs of scripts/bench-mcp.sh's record are saved, unmeasured, into a
// store of 20,000 runs (-textindex-runs N) whose index is written, and the first text
// query after, which writes the index of all of them (idleChunk runs a transaction), is
// measured: processor time per run indexed (cpu-µs/op), and the query's time (ms).
//
//	go test -run '^$' -bench TextIndex -benchtime 20000x ./host/runstore [-args -textindex-runs N]
func BenchmarkTextIndex(b *testing.B) {
	tmpl, s := openBenchStore(b)
	defer s.Close()
	ctx := context.Background()
	t0 := time.Now()
	save := func(i int) {
		rec := tmpl
		rec.RunID = s.NewRunID()
		rec.Meta.RunID = rec.RunID
		rec.Started = t0.Add(time.Duration(i) * time.Millisecond)
		rec.Updated = rec.Started
		if err := s.Save(&rec); err != nil {
			b.Fatal(err)
		}
	}
	for i := range *textIndexRuns {
		save(i)
	}
	if _, err := s.List(ctx, runstore.Query{Text: "greeter"}); err != nil {
		b.Fatal(err)
	}
	for i := range b.N {
		save(*textIndexRuns + i)
	}
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
	cpu0 := cputime.Self()
	b.ResetTimer()
	start := time.Now()
	p, err := s.List(ctx, runstore.Query{Text: "greeter"})
	took := time.Since(start)
	b.StopTimer()
	if err != nil || len(p.Runs) == 0 {
		b.Fatalf("%+v %v", p, err)
	}
	b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(took.Microseconds())/1000, "ms")
}

// sink keeps the floor's records from being optimised away.
var sink atomic.Pointer[runtime.Record]

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// openBenchStore opens a fresh embedded store as halo mcp keeps one, and decodes the
// benchmark's record (scripts/bench-mcp.sh's) that its saves copy.
func openBenchStore(b *testing.B) (runtime.Record, *runstore.SQLite) {
	b.Helper()
	var tmpl runtime.Record
	if err := json.Unmarshal([]byte(runstore.BenchRecord), &tmpl); err != nil {
		b.Fatal(err)
	}
	s, err := runstore.OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		b.Fatal(err)
	}
	return tmpl, s
}
