package remove

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdRemoveFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdRemove(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"jira", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Name != "jira" || !got.JSON {
		t.Errorf("got %+v", got)
	}
}
