package runtime_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/halo-lang/halo/errcode"
	"github.com/halo-lang/halo/host/runtime"
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
