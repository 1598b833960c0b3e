package replay

import (
	"context"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdReplayFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdReplay(&cmdutil.Factory{}, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"f.halo", "last", "--json", "--events", "e.jsonl"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.File != "f.halo" || got.RunID != "last" || !got.JSON || got.Events != "e.jsonl" {
		t.Errorf("got %+v", got)
	}
}
