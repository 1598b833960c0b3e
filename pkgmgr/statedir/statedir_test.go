package statedir_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"halolang.dev/halo/internal/treestate"
	"halolang.dev/halo/pkgmgr/statedir"
)

func TestOpenCreatesAndReopens(t *testing.T) {
	project := t.TempDir()
	if _, _, err := statedir.Open(project, false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing .halo without create: %v", err)
	}
	runs, err := statedir.OpenFolder(project, "runs", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := runs.WriteFile("r1.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs.Close()
	if _, err := os.Stat(filepath.Join(project, ".halo", "runs", "r1.json")); err != nil {
		t.Fatal(err)
	}
	st, created, err := statedir.Open(project, true)
	if err != nil || created {
		t.Fatalf("reopen: created=%v %v", created, err)
	}
	defer st.Close()
	tools, created, err := statedir.OpenIn(st, "tools", true)
	if err != nil || !created {
		t.Fatalf("tools: created=%v %v", created, err)
	}
	tools.Close()
	for _, bad := range []string{"", ".", "..", "a/b", "../x"} {
		if _, _, err := statedir.OpenIn(st, bad, true); err == nil {
			t.Errorf("OpenIn(%q) was accepted", bad)
		}
	}
}

// A repository that commits .halo or .halo/runs as a link (or as a file) is refused, and the
// link's target is not touched, with or without create.
func TestLinksAreRefused(t *testing.T) {
	victim := t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "id_ed25519"), []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := treestate.Describe(victim, nil)
	if err != nil {
		t.Fatal(err)
	}
	layouts := map[string]func(t *testing.T, project string){
		".halo is a link": func(t *testing.T, project string) {
			must(t, os.Symlink(victim, filepath.Join(project, ".halo")))
		},
		".halo is a file": func(t *testing.T, project string) {
			must(t, os.WriteFile(filepath.Join(project, ".halo"), []byte("x"), 0o644))
		},
		".halo/runs is a link": func(t *testing.T, project string) {
			must(t, os.Mkdir(filepath.Join(project, ".halo"), 0o755))
			must(t, os.Symlink(victim, filepath.Join(project, ".halo", "runs")))
		},
		".halo/runs is a relative link inside .halo": func(t *testing.T, project string) {
			must(t, os.MkdirAll(filepath.Join(project, ".halo", "other"), 0o755))
			must(t, os.Symlink("other", filepath.Join(project, ".halo", "runs")))
		},
	}
	for name, make := range layouts {
		for _, create := range []bool{false, true} {
			project := t.TempDir()
			make(t, project)
			r, err := statedir.OpenFolder(project, "runs", create)
			if err == nil {
				r.WriteFile("planted", []byte("x"), 0o644)
				r.Close()
			}
			if statedirCode(err) != statedir.CodeUnsafe {
				t.Errorf("%s, create=%v: want %s, got %v", name, create, statedir.CodeUnsafe, err)
			}
			after, err := treestate.Describe(victim, nil)
			if err != nil {
				t.Fatal(err)
			}
			if after != before {
				t.Fatalf("%s: the link's target changed:\n%s", name, after)
			}
		}
	}
}

func statedirCode(err error) string {
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
