package mcp

import (
	"context"
	"reflect"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdMCPFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdMCP(&cmdutil.Factory{}, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"flows", "a.halo", "--dir", "/proj", "--mock", "--mocks", "m.json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Paths, []string{"flows", "a.halo"}) || got.Dir != "/proj" || !got.Mock || got.Mocks != "m.json" {
		t.Errorf("got %+v", got)
	}
}
