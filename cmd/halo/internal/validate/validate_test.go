package validate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/internal/bigprog"
	"halolang.dev/halo/internal/cputime"
	"halolang.dev/halo/pkgmgr"
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

// entry is a halo.lock entry as halo add writes it.
func entry(name string, providers ...string) string {
	b, _ := json.Marshal(map[string]any{"version": "1.0.0", "source": "registry:default#" + name + "@1.0.0",
		"sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "providers": providers})
	return string(b)
}

// halo validate reads halo.lock with pkgmgr's reader, as halo run does: the provider names of
// the lock in the working folder and in each folder named are declarable without installing
// anything, and a lock that halo run would refuse (an entry without its checksum, say) is an
// error here too, with run's code. (validate once read the lock with a lenient reader of its
// own and passed a project halo run refused.)
func TestValidateReadsTheLockAsRunDoes(t *testing.T) {
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
	write("halo.lock", `{"tools": {"stripe": `+entry("stripe", "Stripe")+`, "cf": `+entry("cf", "Cloudflare", "CloudflareZone")+`}}`)
	write("sub/halo.lock", `{"tools": {"jira": `+entry("jira", "Jira", "Stripe")+`}}`)
	write("sub/a.halo", "tool S : Stripe()\ntool C : CloudflareZone()\ntool J : Jira()\n")
	write("bad/halo.lock", `{"tools": {"stripe": {"providers": ["Stripe"]}}}`)
	write("bad/b.halo", "tool S : Stripe()\n")
	write("broken/halo.lock", `{"tools": [`)
	write("broken/b.halo", "tool S : Stripe()\n")

	run := func(paths ...string) Result {
		t.Helper()
		var out, errOut bytes.Buffer
		f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Dir: dir, Env: cmdutil.Env{}}
		validateRun(&Options{F: f, IO: f.IO, Dir: dir, Paths: paths, JSON: true})
		var res Result
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%v: %v\n%s", paths, err, errOut.String())
		}
		return res
	}
	if res := run("sub"); !res.Valid || len(res.Diagnostics) != 0 {
		t.Errorf("sub: %+v", res)
	}
	for _, folder := range []string{"bad", "broken"} {
		res := run(folder)
		if res.Valid || len(res.Diagnostics) != 1 || res.Diagnostics[0].Code != pkgmgr.CodeIntegrity || res.Diagnostics[0].File != filepath.Join(folder, "halo.lock") {
			t.Errorf("%s: %+v", folder, res)
		}
	}
}

func TestValidateRunJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.halo"), []byte("tool X : Nope()\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &errOut}, Dir: dir, Env: cmdutil.Env{}}
	err := validateRun(&Options{F: f, IO: f.IO, Dir: dir, JSON: true})
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
	// The span is the provider's name, "Nope" at byte 9, and the suggestion-less help says
	// what to do.
	d := res.Diagnostics[0]
	if d.Start == nil || *d.Start != (lang.Location{Line: 1, Column: 10, Offset: 9}) || *d.End != (lang.Location{Line: 1, Column: 14, Offset: 13}) || !strings.Contains(d.Help, "halo add") {
		t.Errorf("span %+v %+v, help %q", d.Start, d.End, d.Help)
	}
}

// A suggestion is in --json as the replacement of the diagnostic's range.
func TestValidateJSONSuggestion(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.halo"), []byte("tool Docs : Workspace(root: \".\")\nagent A [openai/gpt-4o]\n  equips Dosc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir, Env: cmdutil.Env{}}
	validateRun(&Options{F: f, IO: f.IO, Dir: dir, JSON: true})
	var res struct {
		Diagnostics []struct {
			Message, Help string
			Suggestions   []struct {
				Replacement string
				Start, End  lang.Location
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err, out.String())
	}
	if len(res.Diagnostics) != 1 || len(res.Diagnostics[0].Suggestions) != 1 {
		t.Fatalf("%s", out.String())
	}
	s := res.Diagnostics[0].Suggestions[0]
	if s.Replacement != "Docs" || s.Start != (lang.Location{Line: 3, Column: 10, Offset: 66}) || s.End.Offset != 70 || res.Diagnostics[0].Message != "undeclared tool Dosc" {
		t.Errorf("%s", out.String())
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
			f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir, Env: cmdutil.Env{}}
			if err := validateRun(&Options{F: f, IO: f.IO, Dir: dir}); err != nil {
				b.Fatal(err, out.String())
			}
		}
	})
}

// BenchmarkValidate1MB is `halo validate big.halo` on internal/bigprog's 1 MB program
// without process start-up: what the command does beyond `halo version` (see
// scripts/bench-validate.sh for the whole processes side by side). The floor beside it reads
// the file.
func BenchmarkValidate1MB(b *testing.B) {
	dir := b.TempDir()
	src := bigprog.Generate(1 << 20)
	if err := os.WriteFile(filepath.Join(dir, "big.halo"), src, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("floor-read-file", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := os.ReadFile(filepath.Join(dir, "big.halo")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("validate", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		b.ReportAllocs()
		start := cputime.Self()
		defer func() {
			// Throughput per second of processor time (GC included), which a loaded machine
			// does not lower as it lowers MB/s.
			if used := cputime.Self() - start; used > 0 {
				b.ReportMetric(float64(len(src))*float64(b.N)/used.Seconds()/1e6, "cpu-MB/s")
			}
		}()
		for b.Loop() {
			var out bytes.Buffer
			f := &cmdutil.Factory{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Dir: dir, Env: cmdutil.Env{}}
			if err := validateRun(&Options{F: f, IO: f.IO, Dir: dir, Paths: []string{"big.halo"}}); err != nil {
				b.Fatal(err, out.String())
			}
			if out.String() != "ok: 1 file valid\n" {
				b.Fatalf("got %q", out.String())
			}
		}
	})
}
