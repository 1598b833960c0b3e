package run_test

import (
	"context"
	"reflect"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/run"
)

// The flags and arguments of halo run reach its options, without running anything.
func TestNewCmdRunFlags(t *testing.T) {
	var got *run.Options
	cmd := run.NewCmdRun(&cmdutil.Factory{}, func(_ context.Context, o *run.Options) error { got = o; return nil })
	cmd.SetArgs([]string{"f.halo", "P", "-i", "a=1", "--input", "b=2", "--input-json", `{"c":3}`, "--json", "--events", "e.jsonl", "--mock", "--mocks", "m.json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := run.Options{File: "f.halo", Pipeline: "P", RunFlags: run.RunFlags{Inputs: []string{"a=1", "b=2"}, InputJSON: `{"c":3}`, JSON: true, Events: "e.jsonl", Mock: true, Mocks: "m.json"}}
	got.F = nil
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("got %+v\nwant %+v", *got, want)
	}
}
