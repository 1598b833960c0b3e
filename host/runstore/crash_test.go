package runstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
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
// records in the folder it names until it is killed: "folder DIR" as halo serve does
// (runstore.Folder), "files DIR" with runtime.Store's GroupCommit, "log DIR" as halo mcp
// does (GroupCommit and Log).
const crashChild = "HALO_RUNSTORE_CRASH_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChild); spec != "" {
		mode, dir, _ := strings.Cut(spec, " ")
		saveUntilKilled(mode, dir)
		os.Exit(2) // never reached: the test kills the process
	}
	os.Exit(m.Run())
}

// bigRecord is a record of a few pages, so that writing one takes several writes to the
// page cache and a kill can land in the middle of one.
func bigRecord(id string, st runtime.Status, n int) *runtime.Record {
	rec := runstoreRecord(id, st)
	rec.Inputs = map[string]any{"n": n}
	for i := range 60 {
		rec.Events = append(rec.Events, runtime.Event{Type: "stage", RunID: id, Output: strings.Repeat(fmt.Sprintf("%d.", i), 50)})
	}
	return rec
}

func runstoreRecord(id string, st runtime.Status) *runtime.Record {
	now := time.Now().UTC()
	rec := &runtime.Record{RunID: id, Pipeline: "P", Status: st, Inputs: map[string]any{},
		Meta: runtime.Meta{RunID: id, Calls: []runtime.CallInfo{}, Violations: []runtime.ViolationInfo{}}, Started: now, Updated: now}
	if st == runtime.Paused {
		rec.Meta.Paused = &runtime.PauseInfo{WaitingFor: "yield", Question: "ok?"}
		rec.Resume = &runtime.ResumePoint{Stage: 1}
	}
	return rec
}

// saveUntilKilled saves records from 8 goroutines at once, forever: new runs that start and
// complete, runs that pause, are claimed and fail, and the same runs saved over and over. It
// says "ready" on stdout once records are being saved.
func saveUntilKilled(mode, dir string) {
	var save func(rec *runtime.Record) error
	var start func(rec *runtime.Record) error
	var claim func(rec *runtime.Record) error
	switch mode {
	case "folder":
		f, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		save = f.Save
		start = func(rec *runtime.Record) error { return f.Start(context.Background(), rec) }
		claim = func(rec *runtime.Record) error {
			return f.Claim(context.Background(), rec, runstore.Signal{Channel: "yield"})
		}
	case "log": // halo mcp: a run is saved once it stops, so most are lines of a run log
		s := &runtime.Store{Dir: dir, GroupCommit: true, Log: true}
		save, start, claim = s.Save, func(*runtime.Record) error { return nil }, func(rec *runtime.Record) error {
			running := *rec
			running.Status = runtime.Running
			return s.Save(&running)
		}
	default:
		s := &runtime.Store{Dir: dir, GroupCommit: true}
		save, start, claim = s.Save, s.Save, func(rec *runtime.Record) error {
			running := *rec
			running.Status = runtime.Running
			return s.Save(&running)
		}
	}
	var saved atomic.Int64
	var ready sync.Once
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				var err error
				switch id := fmt.Sprintf("g%d-%d", g, i); i % 4 {
				case 0, 1: // a run that starts and completes
					if err = start(bigRecord(id, runtime.Running, i)); err == nil {
						err = save(bigRecord(id, runtime.Completed, i))
					}
				case 2: // a run that pauses, is continued and fails
					if err = start(bigRecord(id, runtime.Running, i)); err == nil {
						err = save(bigRecord(id, runtime.Paused, i))
					}
					if err == nil {
						var rec *runtime.Record
						if rec, err = (&runtime.Store{Dir: dir}).Load(id); err == nil {
							if err = claim(rec); err == nil {
								err = save(bigRecord(id, runtime.Failed, i))
							}
						}
					}
				case 3: // one run of each goroutine saved again and again (a long run in serve)
					id = fmt.Sprintf("g%d-again", g)
					rec := bigRecord(id, runtime.Completed, i)
					if i == 3 {
						err = start(rec)
					} else {
						err = save(rec)
					}
				}
				if err != nil && !strings.Contains(err.Error(), "RUN_TAKEN") {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(1)
				}
				if saved.Add(1) == 100 {
					ready.Do(func() { fmt.Println("ready") })
				}
			}
		})
	}
	wg.Wait()
}

// A process killed (SIGKILL) while it saves many records at once, as halo serve and as halo
// mcp save them, leaves only whole records: every <id>.json parses as the record of its
// run, every line of a run log but a log's last one parses as a record, every run listed
// loads, and the folder store opens on what it left, failing the runs it left running with
// HOST_LOST.
func TestKilledWhileSavingLeavesWholeRecords(t *testing.T) {
	for _, mode := range []string{"folder", "files", "log"} {
		t.Run(mode, func(t *testing.T) {
			for round := range 2 {
				dir := filepath.Join(t.TempDir(), ".halo", "runs")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				killWhileSaving(t, mode, dir, time.Duration(5+20*round)*time.Millisecond)
				checkWhole(t, dir)
			}
		})
	}
}

func killWhileSaving(t *testing.T, mode, dir string, after time.Duration) {
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
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the saving process did not start saving: %q %v; stderr:\n%s", line, err, stderr.String())
	}
	time.Sleep(after)
	cmd.Process.Kill()
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the saving process ended on its own: %v; stderr:\n%s", err, stderr.String())
	}
}

func checkWhole(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	records := 0
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var rec runtime.Record
		if err := json.Unmarshal(b, &rec); err != nil || rec.RunID != id {
			t.Errorf("%s is not a whole record of run %s (%d bytes): %v", name, id, len(b), err)
		}
		records++
	}
	logs, _ := filepath.Glob(filepath.Join(dir, runtime.LogFolder, "*.jsonl"))
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		for i, line := range lines {
			var rec runtime.Record
			if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.RunID == "" {
				if i < len(lines)-1 { // the last line, after the last newline, may be cut short
					t.Errorf("line %d of %s is not a whole record (%d bytes): %v", i+1, name, len(line), err)
				}
				continue
			}
			records++
		}
	}
	t.Logf("%d records", records)
	if records < 50 {
		t.Fatalf("only %d records saved before the kill", records)
	}
	f, err := runstore.OpenFolder(dir, runstore.FolderOptions{})
	if err != nil {
		t.Fatalf("the folder store does not open on what the killed process left: %v", err)
	}
	defer f.Close()
	ctx := context.Background()
	if _, err := f.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	listed := 0
	for q := (runstore.Query{Limit: runstore.MaxLimit}); ; {
		page, err := f.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range page.Runs {
			listed++
			rec, err := f.Load(s.RunID)
			if err != nil {
				t.Errorf("run %s is listed and does not load: %v", s.RunID, err)
				continue
			}
			if rec.Status == runtime.Running || (rec.Status == runtime.Failed && rec.Error != nil && rec.Error.Code != runstore.CodeHostLost && rec.Error.Code != "") {
				t.Errorf("run %s left %s (%+v) after Expire", s.RunID, rec.Status, rec.Error)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	if listed == 0 {
		t.Errorf("no run listed")
	}
}
