package runtime_test

import (
	"context"
	"errors"
	"testing"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
)

// lastSaved keeps the last record a runtime saved.
type lastSaved struct{ rec *runtime.Record }

func (s *lastSaved) Save(rec *runtime.Record) error       { cp := *rec; s.rec = &cp; return nil }
func (s *lastSaved) Load(string) (*runtime.Record, error) { return nil, errors.New("not kept") }
func (s *lastSaved) Latest() (string, error)              { return "", errors.New("not kept") }
func (s *lastSaved) SealKey() ([]byte, error)             { return []byte("a key of sixteen bytes or more"), nil }

// A run's record names the file that declares its pipeline, whatever was loaded: under halo
// serve of a folder ("."), each pipeline's own file, not the folder.
func TestRecordNamesThePipelinesFile(t *testing.T) {
	a, diags := lang.Parse("flows/a.halo", []byte("pipeline A(x: String) -> Result:\n  x |> System.Value(x)\n"))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	b, diags := lang.Parse("flows/b.halo", []byte("pipeline B(x: String) -> Result:\n  x |> System.Value(x)\n"))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	store := &lastSaved{}
	rt, err := runtime.New(&lang.Program{Files: []*lang.File{a, b}}, runtime.Config{File: ".", Store: store})
	if err != nil {
		t.Fatal(err)
	}
	for pipeline, want := range map[string]string{"A": "flows/a.halo", "B": "flows/b.halo"} {
		if _, err := rt.Run(context.Background(), pipeline, map[string]any{"x": "1"}); err != nil {
			t.Fatal(err)
		}
		if store.rec == nil || store.rec.File != want {
			t.Errorf("run of %s: record file %+v, want %s", pipeline, store.rec, want)
		}
	}
}
