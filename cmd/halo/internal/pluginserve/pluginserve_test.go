package pluginserve

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

// halo __plugin NAME hands the plugin's name and the environment halo was given to the
// plugin, and nothing else.
func TestNewCmdPluginArgs(t *testing.T) {
	var got *Options
	cmd := NewCmdPlugin(&cmdutil.Factory{Env: cmdutil.Env{"HOME": "/h"}}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"workspace"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if len(got.Args) != 1 || got.Args[0] != "workspace" {
		t.Errorf("args %v", got.Args)
	}
	if v, ok := got.Getenv("HOME"); !ok || v != "/h" {
		t.Errorf("HOME = %q, %v", v, ok)
	}
}
