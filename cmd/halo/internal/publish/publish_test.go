package publish

import (
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdPublishFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdPublish(&cmdutil.Factory{}, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"acme-1.0.0.halotool", "--registry", "site/index.json", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.File != "acme-1.0.0.halotool" || got.Registry != "site/index.json" || !got.JSON {
		t.Errorf("got %+v", got)
	}
}
