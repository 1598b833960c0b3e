package cmdutil

import (
	"runtime/debug"
	"testing"
)

func TestServerGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	if _, set := ServerGC(Env{"GOGC": "50"}); set {
		t.Fatal("ServerGC changed the collector although GOGC is set")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set the percent became %d, want it left at 100", got)
	}
	prev, set := ServerGC(Env{})
	if !set || prev != 100 {
		t.Fatalf("ServerGC(no GOGC) = %d, %v; want 100, true", prev, set)
	}
	if got := debug.SetGCPercent(100); got != ServerGCPercent {
		t.Fatalf("without GOGC the percent is %d, want %d", got, ServerGCPercent)
	}
}
