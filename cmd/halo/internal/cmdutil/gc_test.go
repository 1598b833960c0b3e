package cmdutil

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
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

func TestOneShotGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	limit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	for _, env := range []Env{{"GOGC": "50"}, {"GOMEMLIMIT": "2GiB"}} {
		if _, set := OneShotGC(env); set {
			t.Fatalf("OneShotGC changed the collector although %v is set", env)
		}
		if got := debug.SetGCPercent(100); got != 100 {
			t.Fatalf("with %v the percent became %d, want it left at 100", env, got)
		}
		if got := debug.SetMemoryLimit(-1); got != limit {
			t.Fatalf("with %v the memory limit became %d, want %d", env, got, limit)
		}
	}
	prev, set := OneShotGC(Env{})
	if !set || prev != 100 {
		t.Fatalf("OneShotGC(no GOGC) = %d, %v; want 100, true", prev, set)
	}
	if got := debug.SetGCPercent(100); got != -1 {
		t.Fatalf("without GOGC the percent is %d, want -1 (off)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != OneShotMemoryLimit {
		t.Fatalf("the memory limit is %d, want %d", got, OneShotMemoryLimit)
	}
}

// host/serve's TestLoad runs its server at halo serve's collector target, which it cannot
// import from here: the two constants must agree, or the load test measures a server nobody
// runs.
func TestLoadTestRunsAtServerGC(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "host", "serve", "load_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^const loadGCPercent = (\d+)$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("host/serve/load_test.go declares no loadGCPercent")
	}
	if got, _ := strconv.Atoi(string(m[1])); got != ServerGCPercent {
		t.Errorf("host/serve's TestLoad runs at GOGC %d, halo serve at %d", got, ServerGCPercent)
	}
}
