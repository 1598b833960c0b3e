package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/postgres"
	hruntime "halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
	"halolang.dev/halo/internal/cputime"
	"halolang.dev/halo/internal/pgtest"
)

var (
	load        = flag.Bool("load", false, "run TestLoad: 500 runs from 32 clients against each store (scripts/test.sh runs it once)")
	loadProfile = flag.String("load-cpuprofile", "", "TestLoad writes a CPU profile of its timed part, the runs of each store, to this file with the store's name appended")
)

const (
	loadRuns    = 500
	loadClients = 32
)

// TestLoad sends 500 runs of a mocked three-stage pipeline from 32 concurrent clients, as
// POST /api/runs?wait, to a server on each store, and reports runs/s and the p50 and p99 of
// the requests. Every run must be accounted for (answered completed, listed, recorded with
// its events), and once the server and store are closed no goroutine or file descriptor may
// be left over.
//
// The collector's target is halo serve's (loadGCPercent), unless GOGC is set: at Go's
// default the first of the 32 clients' requests, which are the slowest and so make the p99,
// waited on collections of a heap still small. Six runs alternated, 7 December: at 100,
// 4,629/6,791/7,021 runs/s (min/median/max), p99 15.6/17.5/25.3 ms; at 400,
// 8,115/9,234/9,256 runs/s, p99 10.3/11.8/13.7 ms.
func TestLoad(t *testing.T) {
	if !*load {
		t.Skip("the load test runs with -load (go test -run TestLoad ./host/serve -args -load); scripts/test.sh runs it once")
	}
	gc := "GOGC from the environment"
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(loadGCPercent))
		gc = fmt.Sprintf("GOGC %d, as halo serve", loadGCPercent)
	}
	t.Logf("collector: %s", gc)
	t.Run("embedded", func(t *testing.T) {
		loadStore(t, func() runstore.Store {
			f, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
			if err != nil {
				t.Fatal(err)
			}
			return f
		})
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.DB(t)
		loadStore(t, func() runstore.Store {
			s, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// loadGCPercent is the collector's target halo serve runs with
// (cmd/halo/internal/cmdutil.ServerGCPercent, whose test checks that the two agree).
const loadGCPercent = 400

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("counting file descriptors needs /proc: %v", err)
	}
	return len(entries)
}

// settle waits for goroutines that are ending to end.
func settle(limit int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 100 && n > limit; i++ {
		time.Sleep(20 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

func loadStore(t *testing.T, open func() runstore.Store) {
	runtime.GC()
	goBefore, fdBefore := settle(0), openFDs(t)

	store := open()
	mocks := hruntime.NewMocks()
	for _, target := range []string{"A.one", "A.two", "A.three", "A.draft"} {
		mocks.Set(target, "answer of "+target)
	}
	hs := httptest.NewUnstartedServer(nil)
	srv, err := serve.New(context.Background(), serve.Config{
		Program: program(t, src), Store: store, Addr: hs.Listener.Addr().String(),
		Runtime: hruntime.Config{Mocks: mocks}, MaxRuns: 1024,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	hs.Config.Handler = srv.Handler()
	hs.Start()
	tr := &http.Transport{MaxIdleConnsPerHost: loadClients}
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}

	body, _ := json.Marshal(map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "load"}})
	jobs := make(chan int)
	lat := make([]time.Duration, loadRuns)
	ids := make([]string, loadRuns)
	var wg sync.WaitGroup
	if *loadProfile != "" {
		f, err := os.Create(*loadProfile + "." + filepath.Base(t.Name()))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	cpu0, start := cputime.Self(), time.Now()
	for range loadClients {
		wg.Go(func() {
			for i := range jobs {
				t0 := time.Now()
				resp, err := client.Post(hs.URL+"/api/runs?wait=60s", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Errorf("run %d: %v", i, err)
					continue
				}
				var m map[string]any
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if resp.StatusCode != 200 || json.Unmarshal(b, &m) != nil || m["status"] != "completed" || m["output"] != "answer of A.three" {
					t.Errorf("run %d: %d %s", i, resp.StatusCode, b)
					continue
				}
				ids[i] = m["runId"].(string)
			}
		})
	}
	for i := range loadRuns {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	elapsed, cpu := time.Since(start), cputime.Self()-cpu0
	if *loadProfile != "" {
		pprof.StopCPUProfile()
	}
	if t.Failed() {
		t.FailNow()
	}

	// Every run accounted for: each id once, listed, recorded completed with its events.
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("run id %s answered twice", id)
		}
		seen[id] = true
	}
	listed := map[string]bool{}
	cursor := ""
	for {
		resp, err := client.Get(hs.URL + "/api/runs?limit=500&cursor=" + cursor)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Runs []struct{ RunID, Status string }
			Next string
		}
		json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		for _, r := range page.Runs {
			if r.Status != "completed" {
				t.Errorf("run %s is %s", r.RunID, r.Status)
			}
			listed[r.RunID] = true
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(listed) != loadRuns {
		t.Errorf("%d runs listed, want %d", len(listed), loadRuns)
	}
	for id := range seen {
		if !listed[id] {
			t.Errorf("run %s answered but not listed", id)
		}
		rec, err := store.Load(id)
		if err != nil || rec.Status != hruntime.Completed || len(rec.Events) < 4 {
			t.Errorf("record of %s: %v %v", id, rec, err)
		}
	}

	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	fmt.Printf("load %s: %d runs from %d clients in %s: %.0f runs/s; POST /api/runs?wait p50 %s p99 %s; %.0f µs of processor time a run (clients, server and store)\n",
		t.Name(), loadRuns, loadClients, elapsed.Round(time.Millisecond), float64(loadRuns)/elapsed.Seconds(),
		p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), float64(cpu.Microseconds())/loadRuns)

	// Nothing left over once everything is closed.
	tr.CloseIdleConnections()
	hs.Close()
	srv.Close(10 * time.Second)
	store.Close()
	runtime.GC()
	goAfter, fdAfter := settle(goBefore+2), openFDs(t)
	t.Logf("goroutines %d before, %d after; file descriptors %d before, %d after", goBefore, goAfter, fdBefore, fdAfter)
	if goAfter > goBefore+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines before, %d after:\n%s", goBefore, goAfter, buf[:runtime.Stack(buf, true)])
	}
	if fdAfter > fdBefore+2 {
		t.Errorf("%d file descriptors before, %d after", fdBefore, fdAfter)
	}
}
