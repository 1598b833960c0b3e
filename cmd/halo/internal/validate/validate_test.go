package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/halo-lang/halo/cmd/halo/internal/cmdutil"
)

func TestNewCmdValidateFlags(t *testing.T) {
	tests := []struct {
		args  []string
		paths []string
		json  bool
	}{
		{nil, []string{}, false},
		{[]string{"a.halo", "flows"}, []string{"a.halo", "flows"}, false},
		{[]string{"--json", "flows"}, []string{"flows"}, true},
	}
	for _, tt := range tests {
		f := &cmdutil.Factory{Dir: "/work"}
		var got *Options
		cmd := NewCmdValidate(f, func(o *Options) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.Dir != "/work" || got.JSON != tt.json || len(got.Paths) != len(tt.paths) {
			t.Errorf("%v: got %+v", tt.args, got)
		}
	}
}

func TestLockProviders(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("halo.lock", `{"tools": {"stripe": {"providers": ["Stripe"]}, "cf": {"providers": ["Cloudflare", "CloudflareZone"]}}}`)
	write("sub/halo.lock", `{"tools": {"jira": {"providers": ["Jira", "Stripe"]}}}`)
	write("bad/halo.lock", `{"tools": [`)

	names, diags := lockProviders(dir, []string{"sub", "x.halo"})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	if want := []string{"Cloudflare", "CloudflareZone", "Jira", "Stripe"}; !reflect.DeepEqual(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	if _, diags := lockProviders(dir, []string{"bad"}); len(diags) != 1 || diags[0].Code != "IO" {
		t.Errorf("bad lock: %v", diags)
	}
	if names, diags := lockProviders(t.TempDir(), nil); len(names) != 0 || len(diags) != 0 {
		t.Errorf("no lock: %v %v", names, diags)
	}
}

func TestValidateRunJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.halo"), []byte("tool X : Nope()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err := validateRun(&Options{IO: cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Dir: dir, JSON: true})
	if cmdutil.StatusOf(err) != cmdutil.ExitFailed {
		t.Fatalf("status %d, want %d", cmdutil.StatusOf(err), cmdutil.ExitFailed)
	}
	var res Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Valid || res.Errors != 1 || res.Diagnostics[0].Code != "UNKNOWN_PROVIDER" || res.Diagnostics[0].Line != 1 || res.Diagnostics[0].Col != 10 {
		t.Errorf("got %+v", res)
	}
	if errOut.Len() != 0 {
		t.Errorf("--json wrote to stderr: %s", errOut.String())
	}
}

// BenchmarkValidateExamples is `halo validate examples/` without process start-up; the
// floor beside it only reads the same files.
func BenchmarkValidateExamples(b *testing.B) {
	dir, err := filepath.Abs("../../../../examples")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor-read-files", func(b *testing.B) {
		for b.Loop() {
			files, _ := filepath.Glob(filepath.Join(dir, "*.halo"))
			for _, f := range files {
				if _, err := os.ReadFile(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			if err := validateRun(&Options{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir}); err != nil {
				b.Fatal(err, out.String())
			}
		}
	})
}
