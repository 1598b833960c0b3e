package search

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdSearchFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		term string
	}{
		{[]string{"--registry", "r", "--json"}, ""},
		{[]string{"jira", "--registry", "r", "--json"}, "jira"},
	} {
		var got *Options
		cmd := NewCmdSearch(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.Term != tt.term || got.Registry != "r" || !got.JSON || got.ctx == nil {
			t.Errorf("%v: got %+v", tt.args, got)
		}
	}
}
