package runstore_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// crashChild, when set in the environment, makes this test binary a process that saves
// records in the store it names until it is killed: "serve DIR" as halo serve does
// (exclusive, group-committed, runs started, paused, claimed), "mcp DIR" as halo mcp does
// (group-committed saves of runs as they stop).
const crashChild = "HALO_RUNSTORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChild); spec != "" {
		mode, dir, _ := strings.Cut(spec, " ")
		saveUntilKilled(mode, dir)
		os.Exit(2) // never reached: the test kills the process
	}
	os.Exit(m.Run())
}

// bigRecord is a record of a few pages, so that writing one takes several writes and a kill
// can land in the middle of a commit.
func bigRecord(id string, st runtime.Status, n int) *runtime.Record {
	now := time.Now().UTC()
	rec := &runtime.Record{RunID: id, Pipeline: "P", Status: st, Inputs: map[string]any{"n": n},
		Meta: runtime.Meta{RunID: id, Calls: []runtime.CallInfo{}, Violations: []runtime.ViolationInfo{}}, Started: now, Updated: now}
	if st == runtime.Paused {
		rec.Meta.Paused = &runtime.PauseInfo{WaitingFor: "yield", Question: "ok?"}
		rec.Resume = &runtime.ResumePoint{Stage: 1}
	}
	for i := range 60 {
		rec.Events = append(rec.Events, runtime.Event{Type: "stage", RunID: id, Output: strings.Repeat(fmt.Sprintf("%d.", i), 50)})
	}
	return rec
}

// saveUntilKilled saves records of runs whose ids the store makes from 8 goroutines at once, forever, and prints "paused ID"
// once the Save of each paused record has returned (the pause is reported), and "ready"
// once 100 records were saved.
func saveUntilKilled(mode, dir string) {
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: mode == "serve", GroupCommit: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	var out sync.Mutex
	say := func(line string) {
		out.Lock()
		fmt.Println(line)
		out.Unlock()
	}
	var saved atomic.Int64
	var ready sync.Once
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := s.NewRunID() // as halo mcp and halo serve make them, from blocks of keys
				if mode == "serve" {
					id = s.NewLongRunID()
				}
				var err error
				if mode == "serve" {
					err = s.Start(ctx, bigRecord(id, runtime.Running, i))
				}
				switch {
				case err != nil:
				case i%3 == 2: // a run that pauses, is claimed and fails
					p := bigRecord(id, runtime.Paused, i)
					if err = s.Save(p); err == nil {
						say("paused " + id)
						if mode == "serve" {
							var rec *runtime.Record
							if rec, err = s.Load(id); err == nil {
								if err = s.Claim(ctx, rec, runstore.Signal{Channel: "yield"}); err == nil {
									err = s.Save(bigRecord(id, runtime.Failed, i))
								}
							}
						}
					}
				default:
					err = s.Save(bigRecord(id, runtime.Completed, i))
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				if saved.Add(1) == 100 {
					ready.Do(func() { say("ready") })
				}
			}
		})
	}
	wg.Wait()
}

// A process killed (SIGKILL) at a random moment while it saves many records at once, as halo
// serve and halo mcp save them, many times over, leaves a database that opens and passes
// SQLite's integrity check, in which every run whose pause was reported is there and paused
// or later (continued, failed), every record loads whole, and the exclusive store opens on
// what it left, failing the runs it left running with HOST_LOST.
func TestKilledWhileSavingLosesNoPause(t *testing.T) {
	for _, mode := range []string{"serve", "mcp"} {
		t.Run(mode, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), ".halo", "runs")
			paused := map[string]bool{}
			for round := range 4 {
				for id := range killWhileSaving(t, mode, dir, time.Duration(5+rand.IntN(60))*time.Millisecond) {
					paused[id] = true
				}
				checkWhole(t, dir, paused, round)
			}
		})
	}
}

// killWhileSaving runs a saving process in dir, kills it after it has been saving for
// about after, and returns the runs whose pause it reported.
func killWhileSaving(t *testing.T, mode, dir string, after time.Duration) map[string]bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChild+"="+mode+" "+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	paused := map[string]bool{}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var kill <-chan time.Time
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				cmd.Wait()
				if kill == nil {
					t.Fatalf("the saving process ended before it was ready; stderr:\n%s", stderr.String())
				}
				return paused
			}
			if line == "ready" {
				kill = time.After(after)
			} else if id, ok := strings.CutPrefix(line, "paused "); ok {
				paused[id] = true
			}
		case <-kill:
			cmd.Process.Kill()
			kill = make(chan time.Time) // the rest of stdout is still read: pauses reported before the kill
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("the saving process did not get going; stderr:\n%s", stderr.String())
		}
	}
}

func checkWhole(t *testing.T, dir string, paused map[string]bool, round int) {
	t.Helper()
	db, err := runstore.OpenSQL(filepath.Join(dir, runstore.DBName))
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("round %d: integrity check: %q %v", round, check, err)
	}
	// No key a committed row has can be handed out again: the blocks were committed before
	// their keys were used.
	var top, next int64
	if err := db.QueryRow(`SELECT coalesce(max(key), 0), (SELECT next FROM halo_key_state) FROM halo_runs`).Scan(&top, &next); err != nil || top >= next {
		t.Errorf("round %d: a row has key %d, and the next block begins at %d (%v)", round, top, next, err)
	}
	db.Close()
	s, err := runstore.OpenSQLite(dir, runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatalf("round %d: the store does not open on what the killed process left: %v", round, err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	for id := range paused {
		rec, err := s.Load(id)
		if err != nil || (rec.Status != runtime.Paused && rec.Status != runtime.Failed) {
			t.Errorf("round %d: run %s was reported paused, and the store has %+v %v", round, id, rec, err)
		}
	}
	listed := 0
	for q := (runstore.Query{Limit: runstore.MaxLimit}); ; {
		page, err := s.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range page.Runs {
			listed++
			rec, err := s.Load(sum.RunID)
			if err != nil || len(rec.Events) < 60 {
				t.Errorf("round %d: run %s is listed and does not load whole: %v", round, sum.RunID, err)
				continue
			}
			if rec.Status == runtime.Running {
				t.Errorf("round %d: run %s left running after Expire", round, sum.RunID)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	t.Logf("round %d: %d runs, %d reported paused", round, listed, len(paused))
	if listed < 50 {
		t.Fatalf("only %d runs saved before the kill", listed)
	}
}
