package sandboxwrap

import (
	"bytes"
	"reflect"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
)

// halo __sandbox passes its arguments to the sandbox as written (its flags and the program's
// are not parsed by cobra), with the environment halo was given.
func TestNewCmdSandboxArgs(t *testing.T) {
	var got *Options
	var errOut bytes.Buffer
	f := &cmdutil.Factory{Env: cmdutil.Env{"PATH": "/bin"}, IO: cmdutil.IOStreams{ErrOut: &errOut}}
	cmd := NewCmdSandbox(f, func(o *Options) error { got = o; return nil })
	args := []string{"--ro", "/usr", "--rw", "/tmp/w", "--net", "--", "prog", "--help", "-x"}
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Args, args) || !reflect.DeepEqual(got.Env, []string{"PATH=/bin"}) || got.ErrOut != &errOut {
		t.Errorf("got %+v", got)
	}
}
