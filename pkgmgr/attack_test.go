package pkgmgr

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"halolang.dev/halo/internal/usertest"
	"halolang.dev/halo/pkgmgr/statedir"
)

// victimHome returns a home folder with a ~/.ssh worth stealing or deleting: the test user's
// own HOME when this is the re-run as halo-test, a fresh folder otherwise.
func victimHome(t *testing.T) (home, ssh string) {
	t.Helper()
	home = t.TempDir()
	if usertest.IsChild() {
		home = os.Getenv("HOME")
	}
	ssh = filepath.Join(home, ".ssh")
	writeTree(t, ssh, map[string]string{
		"id_ed25519":      "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"authorized_keys": "ssh-ed25519 AAAA user@host\n",
		"acme/notes":      "a folder named like a package\n",
		"keys/old":        "x",
	})
	return home, ssh
}

// A repository that commits .halo, .halo/tools or a package's folder as a link to the user's
// ~/.ssh gets every package command refused: nothing is read through the link, nothing is
// written into it or deleted from it, and the project is left as it was. Run as root and, as
// root, again as halo-test against that user's own home.
func TestSymlinkedStateIsRefused(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	clean := newProject(t, index)
	ctx := context.Background()
	if _, err := clean.Add(ctx, "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	lock := mustRead(t, filepath.Join(clean.Dir, LockFile))
	_, ssh := victimHome(t)

	layouts := []struct {
		name string
		make func(t *testing.T, dir string)
	}{
		{".halo -> ~/.ssh", func(t *testing.T, dir string) {
			mustSymlink(t, ssh, filepath.Join(dir, ".halo"))
		}},
		{".halo -> relative link", func(t *testing.T, dir string) {
			rel, err := filepath.Rel(dir, ssh)
			if err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, rel, filepath.Join(dir, ".halo"))
		}},
		{".halo/tools -> ~/.ssh", func(t *testing.T, dir string) {
			mustMkdir(t, filepath.Join(dir, ".halo"))
			mustSymlink(t, ssh, filepath.Join(dir, ".halo", "tools"))
		}},
		{".halo/tools/acme -> ~/.ssh", func(t *testing.T, dir string) {
			mustMkdir(t, filepath.Join(dir, ".halo", "tools"))
			mustSymlink(t, ssh, filepath.Join(dir, ".halo", "tools", "acme"))
		}},
	}
	ops := []struct {
		name     string
		withLock bool
		run      func(pr *Project) error
	}{
		{"add", false, func(pr *Project) error { _, err := pr.Add(ctx, "acme", AddOptions{}); return err }},
		{"install", true, func(pr *Project) error { _, err := pr.Install(ctx, InstallOptions{}); return err }},
		{"remove", true, func(pr *Project) error { _, err := pr.Remove("acme"); return err }},
		{"load", true, func(pr *Project) error { _, err := pr.Load(ctx); return err }},
	}
	for _, l := range layouts {
		for _, op := range ops {
			t.Run(l.name+"/"+op.name, func(t *testing.T) {
				pr := newProject(t, index)
				l.make(t, pr.Dir)
				if op.withLock {
					mustWrite(t, filepath.Join(pr.Dir, LockFile), lock)
				}
				victimBefore := hashTree(t, ssh)
				projectBefore := hashTree(t, pr.Dir)
				err := op.run(pr)
				if Code(err) != statedir.CodeUnsafe {
					t.Errorf("want %s, got %v", statedir.CodeUnsafe, err)
				}
				if err != nil && !strings.Contains(err.Error(), "symbolic link") {
					t.Errorf("the error does not say what is wrong: %v", err)
				}
				if got := hashTree(t, ssh); got != victimBefore {
					t.Fatalf("the link's target changed:\nbefore:\n%s\nafter:\n%s", victimBefore, got)
				}
				if got := hashTree(t, pr.Dir); got != projectBefore {
					t.Fatalf("the project changed:\nbefore:\n%s\nafter:\n%s", projectBefore, got)
				}
			})
		}
	}
	usertest.Rerun(t)
}

// Halo deletes only folders of packages it installed: halo install leaves a folder in
// .halo/tools that holds something else (and says so), and halo remove refuses to delete one.
func TestOnlyInstalledFoldersAreDeleted(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"), httpManifest("old", "1.0.0", "Old"))
	pr := newProject(t, index)
	ctx := context.Background()
	for _, n := range []string{"acme", "old"} {
		if _, err := pr.Add(ctx, n, AddOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The lock forgets "old" (its folder is stale install output); someone keeps notes in
	// .halo/tools/notes, and a package's folder is swapped for one of their own.
	other := newProject(t, index)
	if _, err := other.Add(ctx, "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(pr.Dir, LockFile), mustRead(t, filepath.Join(other.Dir, LockFile)))
	writeTree(t, filepath.Join(pr.Dir, ".halo", "tools", "notes"), map[string]string{"todo.txt": "keep me"})
	rep, err := pr.Install(ctx, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Kept) != 1 || rep.Kept[0] != "notes" {
		t.Fatalf("kept %v, want [notes]", rep.Kept)
	}
	if _, err := os.Stat(pr.PackageDir("old")); !os.IsNotExist(err) {
		t.Fatalf("the stale package's folder is still there: %v", err)
	}
	if string(mustRead(t, filepath.Join(pr.PackageDir("notes"), "todo.txt"))) != "keep me" {
		t.Fatal("notes changed")
	}

	// A locked package's folder that holds someone's files instead of the package.
	acme := pr.PackageDir("acme")
	if err := os.RemoveAll(acme); err != nil {
		t.Fatal(err)
	}
	writeTree(t, acme, map[string]string{"mine.txt": "not a package"})
	before := hashTree(t, pr.Dir)
	// Loading does not send the user to a halo install that would refuse without saying so.
	if _, err := pr.Load(ctx); Code(err) != CodeIntegrity || !strings.Contains(err.Error(), "holds no package Halo installed") || !strings.Contains(err.Error(), "move the folder out of the way") {
		t.Fatalf("load: %v", err)
	}
	if _, err := pr.Remove("acme"); Code(err) != CodeConflict || !strings.Contains(err.Error(), "does not hold a package Halo installed") {
		t.Fatalf("remove: %v", err)
	}
	if _, err := pr.Install(ctx, InstallOptions{}); Code(err) != CodeConflict {
		t.Fatalf("install: %v", err)
	}
	if got := hashTree(t, pr.Dir); got != before {
		t.Fatalf("a refused command changed the project:\n%s\n---\n%s", before, got)
	}
	// A damaged copy of the package itself (its package file gone, a file edited) is put back.
	if err := os.RemoveAll(acme); err != nil {
		t.Fatal(err)
	}
	writeTree(t, acme, map[string]string{"README.md": "edited", ManifestFile: "{}"})
	if _, err := pr.Install(ctx, InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	if string(mustRead(t, filepath.Join(acme, "README.md"))) != "readme" {
		t.Fatal("the damaged package was not restored")
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A repository that commits .halo/tools/<name>/package.halotool as a named pipe (or a
// folder) gets halo run refused with INTEGRITY at once: opening the pipe to read it would
// wait for a writer forever. Run as root and again as halo-test.
func TestPlantedPipeIsRefused(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	p := newProject(t, index)
	ctx := context.Background()
	if _, err := p.Add(ctx, "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	installed := filepath.Join(p.Dir, statedir.Name, ToolsDir, "acme", Installed)
	for _, plant := range []func() error{
		func() error { return syscall.Mkfifo(installed, 0o644) },
		func() error { return os.Mkdir(installed, 0o755) },
	} {
		if err := os.RemoveAll(installed); err != nil {
			t.Fatal(err)
		}
		if err := plant(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := p.Load(ctx)
			done <- err
		}()
		select {
		case err := <-done:
			if Code(err) != CodeIntegrity || !strings.Contains(err.Error(), "is not a package file") {
				t.Errorf("Load with %s planted: %v, want %s", installed, err, CodeIntegrity)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Load still waits on the planted %s after 10 s", installed)
		}
	}
	usertest.Rerun(t)
}
