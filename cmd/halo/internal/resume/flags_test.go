package resume

import (
	"context"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

// The flags and arguments of halo resume reach its options, and --payload is required, even
// when empty.
func TestNewCmdResumeFlags(t *testing.T) {
	var got *Options
	newCmd := func(args ...string) error {
		got = nil
		cmd := NewCmdResume(&cmdutil.Factory{}, func(_ context.Context, o *Options) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		return cmd.Execute()
	}
	if err := newCmd("f.halo", "last", "--payload", `{"ok":true}`, "--channel", "orders", "--json", "--events", "e", "--mock", "--mocks", "m"); err != nil {
		t.Fatal(err)
	}
	if got.File != "f.halo" || got.RunID != "last" || got.Payload != `{"ok":true}` || got.Channel != "orders" || !got.JSON || got.Events != "e" || !got.Mock || got.Mocks != "m" {
		t.Errorf("got %+v", got)
	}
	if err := newCmd("f.halo", "last", "--payload", ""); err != nil || got == nil || got.Payload != "" {
		t.Errorf("empty payload: %v %+v", err, got)
	}
	if err := newCmd("f.halo", "last"); cmdutil.StatusOf(err) != cmdutil.ExitUsage || got != nil {
		t.Errorf("no --payload: %v (status %d)", err, cmdutil.StatusOf(err))
	}
}
