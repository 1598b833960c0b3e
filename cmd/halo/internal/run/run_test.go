package run_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/root"
	"halolang.dev/halo/cmd/halo/internal/run"
)

// TestMain lets the example scripts run this test binary as `halo`.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"halo": func() { os.Exit(root.Main(os.Args[1:], root.ProcessSystem())) },
	})
}

// TestExamples runs every pipeline of the repository's examples/ with its mocks file
// (testdata/script/*.txtar; $EXAMPLES is the examples folder).
func TestExamples(t *testing.T) {
	examples, err := filepath.Abs("../../../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("EXAMPLES", examples)
			return nil
		},
	})
}

// TestExitStatuses checks the statuses halo run returns: 0 completed, 1 failed, 2 bad
// usage, 3 paused.
func TestExitStatuses(t *testing.T) {
	dir := t.TempDir()
	src := `agent A [openai/gpt-4o]
pipeline Done(x: String) -> String:
  x |> A.t()
pipeline Fail(x: String) -> String:
  x |> System.Fail("no")
pipeline Wait(x: String) -> String:
  x |! yield("ok?")
`
	if err := os.WriteFile(filepath.Join(dir, "f.halo"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pipeline string
		inputs   []string
		want     int
	}{
		{"Done", []string{"x=1"}, cmdutil.ExitOK},
		{"Fail", []string{"x=1"}, cmdutil.ExitFailed},
		{"Wait", []string{"x=1"}, cmdutil.ExitPaused},
		{"Done", nil, cmdutil.ExitUsage},
		{"Nope", []string{"x=1"}, cmdutil.ExitUsage},
	} {
		var out, errOut bytes.Buffer
		f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Env: cmdutil.Env{}, Now: time.Now, Dir: dir, Logger: hclog.NewNullLogger()}
		cmd := run.NewCmdRun(f, nil)
		args := []string{"f.halo", tc.pipeline, "--mock"}
		for _, in := range tc.inputs {
			args = append(args, "--input", in)
		}
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.ExecuteContext(context.Background())
		if got := cmdutil.StatusOf(err); got != tc.want {
			t.Errorf("%s %v: exit status %d (%v), want %d; stderr %s", tc.pipeline, tc.inputs, got, err, tc.want, errOut.String())
		}
	}
}

func TestParseInputs(t *testing.T) {
	in, err := run.ParseInputs([]string{"a=1", "b=x=y"}, `{"a": 2, "c": [1]}`)
	if err != nil || in["a"] != "1" || in["b"] != "x=y" || in["c"] == nil {
		t.Errorf("%v %v", in, err)
	}
	for _, bad := range [][2]string{{"novalue", ""}, {"=x", ""}, {"", "[1]"}, {"", "{"}} {
		var kv []string
		if bad[0] != "" {
			kv = []string{bad[0]}
		}
		_, err := run.ParseInputs(kv, bad[1])
		var ee *cmdutil.ExitError
		if !errors.As(err, &ee) || ee.Status != cmdutil.ExitUsage {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}
