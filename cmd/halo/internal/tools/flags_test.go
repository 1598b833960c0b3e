package tools

import (
	"bytes"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdToolsFlags(t *testing.T) {
	var got *Options
	var out bytes.Buffer
	f := &cmdutil.Factory{Dir: "/p", IO: cmdutil.IOStreams{Out: &out, OutTTY: true}, Env: cmdutil.Env{}}
	cmd := NewCmdTools(f, func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.JSON || got.Dir != "/p" || got.Out != &out || !got.Color || got.Build == nil || got.Servers == nil || got.Ctx == nil {
		t.Errorf("got %+v", got)
	}
}
