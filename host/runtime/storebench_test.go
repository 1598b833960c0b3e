package runtime_test

import (
	"fmt"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// BenchmarkStoreSave measures one save of a completed record, as halo mcp and halo serve
// save a run's record (GroupCommit: in place when Save returns, synced by the next commit),
// and as halo run does (synced before Save returns).
func BenchmarkStoreSave(b *testing.B) {
	for _, group := range []bool{true, false} {
		b.Run(fmt.Sprintf("group=%v", group), func(b *testing.B) {
			s := &runtime.Store{Dir: b.TempDir(), GroupCommit: group}
			b.Cleanup(func() { s.Close() })
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if err := s.Save(record(fmt.Sprintf("run%d", i%64), runtime.Completed, i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
