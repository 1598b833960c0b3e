package pack

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdPackFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdPack(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"src/acme", "--out", "dist", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Dir != "src/acme" || got.Out != "dist" || !got.JSON || got.ctx == nil {
		t.Errorf("got %+v", got)
	}
}
