package runstoretest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// BenchQueries are the lists BenchmarkList pages through, over 100,000 runs (one in ten
// failed, one in a hundred with a violation, four pipelines): the newest 50 of each.
var BenchQueries = []struct {
	Name string
	Q    runstore.Query
}{
	{"newest", runstore.Query{}},
	{"status", runstore.Query{Status: runtime.Failed}},
	{"pipeline", runstore.Query{Pipeline: "P2"}},
	{"violations", runstore.Query{Violations: true}},
	{"since+status", runstore.Query{Status: runtime.Failed, Since: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}},
	{"text", runstore.Query{Text: "ord-99"}},                               // a word 1,111 runs hold, the newest among them
	{"text-rare", runstore.Query{Text: `ord-12345"`}},                      // a word one run holds
	{"text-old", runstore.Query{Text: `ord-1234`}},                         // a word 11 old runs hold
	{"id-prefix", runstore.Query{Text: "r09999"}},                          // the beginning of 10 run ids
	{"text+status", runstore.Query{Text: "ord-9", Status: runtime.Failed}}, // a common word and a filter
	{"page2", runstore.Query{Status: runtime.Failed}},
}

// BenchRecord is run i of the list benchmark's 100,000, started a second after run i-1.
func BenchRecord(i int, t0 time.Time) *runtime.Record {
	st := runtime.Completed
	if i%10 == 3 {
		st = runtime.Failed
	}
	rec := NewRecord(fmt.Sprintf("r%06d", i), st)
	rec.Pipeline = fmt.Sprintf("P%d", i%4)
	rec.Started = t0.Add(time.Duration(i) * time.Second)
	rec.Updated = rec.Started
	rec.Inputs = map[string]any{"order": fmt.Sprintf("ORD-%d", i)}
	if i%100 == 7 {
		rec.Meta.Violations = []runtime.ViolationInfo{{Policy: "P", Rule: "Block"}}
	}
	return rec
}

// RunListBench runs BenchQueries against s, which holds the 100,000 runs BenchRecord makes.
func RunListBench(b *testing.B, s runstore.Store) {
	ctx := context.Background()
	for _, bq := range BenchQueries {
		q := bq.Q
		if bq.Name == "page2" {
			p, err := s.List(ctx, q)
			if err != nil || p.Next == "" {
				b.Fatal(err)
			}
			q.Cursor = p.Next
		}
		b.Run(bq.Name, func(b *testing.B) {
			for b.Loop() {
				p, err := s.List(ctx, q)
				if err != nil || len(p.Runs) == 0 {
					b.Fatalf("%+v %v", p, err)
				}
			}
		})
	}
}
