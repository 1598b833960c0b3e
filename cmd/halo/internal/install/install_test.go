package install

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdInstallFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdInstall(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--trust", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Trust || !got.JSON || got.ctx == nil {
		t.Errorf("got %+v", got)
	}
}
