package fmtcmd

import (
	"os"
	"path/filepath"
	"testing"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/internal/usertest"
)

func TestNewCmdFmtFlags(t *testing.T) {
	for _, tt := range []struct {
		args              []string
		list, diff, check bool
		paths             int
	}{
		{nil, false, false, false, 0},
		{[]string{"-l", "a.halo", "flows"}, true, false, false, 2},
		{[]string{"-d", "--check", "."}, false, true, true, 1},
	} {
		var got *Options
		cmd := NewCmdFmt(&cmdutil.Factory{Dir: "/work"}, func(o *Options) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.List != tt.list || got.Diff != tt.diff || got.Check != tt.check || len(got.Paths) != tt.paths || got.Dir != "/work" {
			t.Errorf("%v: %+v", tt.args, got)
		}
	}
}

// replace leaves the old file whole when it cannot write the new one, and no temporary
// file behind. Root may write anywhere, so the test runs again as halo-test, where the
// write fails.
func TestReplaceKeepsTheFileWhenItCannotWrite(t *testing.T) {
	replaceInReadOnlyFolder(t)
	usertest.Rerun(t)
}

func replaceInReadOnlyFolder(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.halo")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	err := replace(path, []byte("new\n"))
	if os.Geteuid() != 0 && err == nil {
		t.Fatal("wrote through a folder it may not write")
	}
	b, _ := os.ReadFile(path)
	entries, _ := os.ReadDir(dir)
	if err != nil && (string(b) != "old\n" || len(entries) != 1) {
		t.Errorf("after a failed write: %q, %d entries", b, len(entries))
	}
	if err == nil && string(b) != "new\n" {
		t.Errorf("after a write: %q", b)
	}
}
