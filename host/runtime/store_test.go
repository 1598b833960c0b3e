package runtime_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/usertest"
)

func TestStoreSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".halo", "runs")
	s := &runtime.Store{Dir: dir}
	rec := &runtime.Record{RunID: "abc123", Pipeline: "P", Status: runtime.Paused, Inputs: map[string]any{"x": "y"}}
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	rec.Status = runtime.Completed
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("abc123")
	if err != nil || got.Status != runtime.Completed || got.Inputs["x"] != "y" {
		t.Fatalf("load: %+v %v", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the folder holds %d files, want only the record (no temporary file left)", len(entries))
	}
	for _, bad := range []string{"../x", "", "a/b", "nope"} {
		if _, err := s.Load(bad); errcode.Code(err) != runtime.CodeRun {
			t.Errorf("load %q: %v, want RUN_RECORD", bad, err)
		}
	}
	os.WriteFile(filepath.Join(dir, "broken.json"), []byte("{"), 0o644)
	if _, err := s.Load("broken"); errcode.Code(err) != runtime.CodeRun {
		t.Errorf("a broken record: %v", err)
	}
}

// A record is one line of JSON: no indentation (records are many and read by programs).
func TestStoreWritesCompactRecords(t *testing.T) {
	s := &runtime.Store{Dir: t.TempDir()}
	if err := s.Save(&runtime.Record{RunID: "r1", Pipeline: "P", Status: runtime.Completed, Inputs: map[string]any{"x": "y"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "r1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 1 || bytes.Contains(b, []byte("  ")) {
		t.Errorf("record is not one compact line:\n%s", b)
	}
}

// A nil *Store in Config.Store means no store, as a nil RunStore does.
func TestNilFileStoreIsNoStore(t *testing.T) {
	var s *runtime.Store
	rt := load(t, "pipeline P(x: String) -> Result:\n  x |> System.Value(x)\n", runtime.Config{Store: s})
	if res := run(t, rt, "P", map[string]any{"x": "a"}); res.Status != runtime.Completed {
		t.Fatalf("%+v", res)
	}
}

// tracker records what a Tracker is told, and can refuse or cancel runs.
type tracker struct {
	runtime.Store
	mu     sync.Mutex
	begun  []runtime.Record
	saved  []runtime.Status
	refuse error
	cancel context.CancelFunc
}

func (tr *tracker) Begin(ctx context.Context, rec *runtime.Record) (context.Context, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.refuse != nil {
		return nil, tr.refuse
	}
	tr.begun = append(tr.begun, *rec)
	ctx, tr.cancel = context.WithCancel(ctx)
	return ctx, nil
}

func (tr *tracker) Save(rec *runtime.Record) error {
	tr.mu.Lock()
	tr.saved = append(tr.saved, rec.Status)
	tr.mu.Unlock()
	return tr.Store.Save(rec)
}

// A Tracker store is told as a run starts (status running, its id and inputs known) and as a
// paused run is continued, before any stage runs; its context is the run's; a refusal stops
// the run before anything runs and leaves the record as it was.
func TestTrackerBeginsRuns(t *testing.T) {
	tr := &tracker{Store: runtime.Store{Dir: t.TempDir()}}
	ran := 0
	rt := load(t, askSrc, runtime.Config{Store: tr, MockAgents: true})
	rt.MockFunc("A.draft", func(req runtime.MockRequest) (any, error) { ran++; return "d", nil })
	res := run(t, rt, "Ask", map[string]any{"x": "go"})
	if res.Status != runtime.Paused || len(tr.begun) != 1 {
		t.Fatalf("%+v, begun %d", res, len(tr.begun))
	}
	b := tr.begun[0]
	if b.Status != runtime.Running || b.RunID != res.RunID || b.Pipeline != "Ask" || b.Inputs["x"] != "go" || len(b.Events) != 0 {
		t.Errorf("begun with %+v", b)
	}
	if fmt.Sprint(tr.saved) != "[paused]" {
		t.Errorf("saved %v", tr.saved)
	}

	// A refused continuation runs nothing and saves nothing.
	before := recordBytes(t, &tr.Store, res.RunID)
	tr.refuse = &runtime.Error{Code: runtime.CodeRun, Message: "taken elsewhere"}
	if _, err := rt.Signal(context.Background(), res.RunID, "yield", "ok"); err == nil || !strings.Contains(err.Error(), "taken elsewhere") {
		t.Fatalf("signal: %v", err)
	}
	if after := recordBytes(t, &tr.Store, res.RunID); after != before || len(tr.saved) != 1 {
		t.Errorf("a refused continuation changed the record")
	}
	tr.refuse = nil
	done, err := rt.Signal(context.Background(), res.RunID, "yield", "ok")
	if err != nil || done.Status != runtime.Completed {
		t.Fatalf("%+v %v", done, err)
	}
	if len(tr.begun) != 2 || tr.begun[1].Status != runtime.Paused || tr.begun[1].RunID != res.RunID {
		t.Errorf("continuation begun with %+v", tr.begun[1:])
	}
	if ran != 1 {
		t.Errorf("the agent ran %d times", ran)
	}

	// A refused start runs nothing.
	tr.refuse = errors.New("no room")
	if _, err := rt.Run(context.Background(), "Ask", map[string]any{"x": "go"}); err == nil || ran != 1 {
		t.Fatalf("refused start: %v, ran %d", err, ran)
	}
}

// Cancelling the context a Tracker returns cancels the run: it fails CANCELLED.
func TestTrackerCancels(t *testing.T) {
	tr := &tracker{Store: runtime.Store{Dir: t.TempDir()}}
	rt := load(t, askSrc, runtime.Config{Store: tr})
	rt.MockFunc("A.draft", func(req runtime.MockRequest) (any, error) {
		tr.mu.Lock()
		tr.cancel()
		tr.mu.Unlock()
		return "d", nil
	})
	res := run(t, rt, "Ask", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error == nil || res.Error.Code != runtime.CodeCancelled {
		t.Fatalf("%+v", res)
	}
}

// A cloned repository that ships .halo or .halo/runs as a link to another folder gets every
// save and load refused (STATE_DIR_UNSAFE), and nothing is written through the link; as
// root, and again as the unprivileged halo-test.
func TestStoreRefusesSymlinkedFolders(t *testing.T) {
	for _, which := range []string{".halo", ".halo/runs"} {
		t.Run(which, func(t *testing.T) {
			project, victim := t.TempDir(), t.TempDir()
			if which == ".halo/runs" {
				if err := os.Mkdir(filepath.Join(project, ".halo"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(victim, filepath.Join(project, which)); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(victim, "r1.json"), []byte(`{"runId":"r1","status":"paused"}`), 0o644)
			s := &runtime.Store{Dir: filepath.Join(project, ".halo", "runs")}
			if err := s.Save(&runtime.Record{RunID: "r2", Status: runtime.Completed}); errcode.Code(err) != "STATE_DIR_UNSAFE" {
				t.Errorf("save: %v, want STATE_DIR_UNSAFE", err)
			}
			if _, err := s.Load("r1"); errcode.Code(err) != "STATE_DIR_UNSAFE" {
				t.Errorf("load: %v, want STATE_DIR_UNSAFE", err)
			}
			if _, err := s.Latest(); errcode.Code(err) != "STATE_DIR_UNSAFE" {
				t.Errorf("latest: %v, want STATE_DIR_UNSAFE", err)
			}
			if entries, _ := os.ReadDir(victim); len(entries) != 1 {
				t.Errorf("the link's target holds %d entries, want the 1 it had", len(entries))
			}
		})
	}
	usertest.Rerun(t)
}
