package add

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdAddFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdAdd(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"jira@1.0.0", "--trust", "--registry", "./reg", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Spec != "jira@1.0.0" || !got.Trust || got.Registry != "./reg" || !got.JSON || got.ctx == nil {
		t.Errorf("got %+v", got)
	}
}
