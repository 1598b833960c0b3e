package pkgmgr

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/internal/usertest"
)

// envShared names, in the re-run as halo-test, a project another user trusted a package in.
const envShared = "HALO_TEST_SHARED_PROJECT"

// cloneRepo makes a project the way a repository ships it: the author's halo.lock and
// installed package folders, copied into dir.
func cloneRepo(t *testing.T, author *Project, dir string) {
	t.Helper()
	mustWrite(t, filepath.Join(dir, LockFile), mustRead(t, filepath.Join(author.Dir, LockFile)))
	src := filepath.Join(author.Dir, StateDir, ToolsDir)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dir, StateDir, ToolsDir, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(target, mustRead(t, p), info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Trust is the user's, never the repository's: a .halo/trust.json a repository commits is
// ignored (with a warning), --trust is recorded in the user's own trust file for that project
// folder, and another user, or the same lock in another folder, is not trusted by it. Run as
// root and, as root, again as halo-test, who also checks that root's trust in a shared
// project is not theirs.
func TestTrustIsTheUsers(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	if usertest.IsChild() {
		home = os.Getenv("HOME")
	}
	trustFile := filepath.Join(home, ".config", "halo", "trust.json")
	index := newRegistry(t, mcpCommandManifest("gh", "1.0.0", "Gh"))
	author := newProject(t, index)
	if _, err := author.Add(ctx, "gh", AddOptions{Trust: true}); err != nil {
		t.Fatal(err)
	}
	lock, err := ReadLock(author.Dir)
	if err != nil {
		t.Fatal(err)
	}
	sha := lock.Tools["gh"].SHA256

	// The repository ships the lock, the installed package, and trust files of both shapes
	// that claim the package is trusted.
	repo := t.TempDir()
	cloneRepo(t, author, repo)
	mustWrite(t, filepath.Join(repo, StateDir, ProjectTrustFile), []byte(`{"trusted":{"gh":"`+sha+`"},"format":"halo-trust/1","projects":{"`+repo+`":{"gh":"`+sha+`"}}}`))
	var warnings []string
	pr := &Project{Dir: repo, Registry: index, TrustFile: trustFile, Warn: func(m string) { warnings = append(warnings, m) }}
	before := hashTree(t, repo)
	if _, err := pr.Load(ctx); Code(err) != CodeUntrusted {
		t.Fatalf("load: want %s, got %v", CodeUntrusted, err)
	}
	if _, err := pr.Install(ctx, InstallOptions{}); Code(err) != CodeUntrusted {
		t.Fatalf("install: want %s, got %v", CodeUntrusted, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], ".halo/trust.json is ignored") || !strings.Contains(warnings[0], trustFile) {
		t.Fatalf("warnings: %q", warnings)
	}
	if got := hashTree(t, repo); got != before {
		t.Fatalf("a refused command changed the project:\n%s\n---\n%s", before, got)
	}
	if _, err := os.Stat(trustFile); !os.IsNotExist(err) {
		t.Fatalf("the user's trust file was written: %v", err)
	}

	// The user trusts it: recorded in the user's file, for this folder, readable only by them.
	rep, err := pr.Install(ctx, InstallOptions{Trust: true})
	if err != nil || len(rep.Trusted) != 1 {
		t.Fatalf("install --trust: %+v %v", rep, err)
	}
	if _, err := pr.Load(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(trustFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("trust file: %v %v", info, err)
	}
	realRepo, _ := filepath.EvalSymlinks(repo)
	if b := string(mustRead(t, trustFile)); !strings.Contains(b, `"`+realRepo+`": {`) || !strings.Contains(b, sha) {
		t.Fatalf("trust file:\n%s", b)
	}
	if got := hashTree(t, filepath.Join(repo, StateDir)); !strings.Contains(got, ProjectTrustFile) {
		t.Fatal("the project's own trust file was touched")
	}

	// The same repository in another folder is another project: not trusted.
	elsewhere := t.TempDir()
	cloneRepo(t, author, elsewhere)
	if _, err := (&Project{Dir: elsewhere, TrustFile: trustFile}).Load(ctx); Code(err) != CodeUntrusted {
		t.Fatalf("another folder: want %s, got %v", CodeUntrusted, err)
	}
	// Without a trust file, nothing is trusted and --trust says what is missing.
	if _, err := (&Project{Dir: repo}).Load(ctx); Code(err) != CodeUntrusted {
		t.Fatalf("no trust file: %v", err)
	}
	if _, err := (&Project{Dir: elsewhere}).Install(ctx, InstallOptions{Trust: true}); Code(err) != CodeUntrusted || !strings.Contains(err.Error(), "HOME") {
		t.Fatalf("--trust without a trust file: %v", err)
	}
	// halo remove drops the trust with the package.
	if _, err := pr.Remove("gh"); err != nil {
		t.Fatal(err)
	}
	if b := string(mustRead(t, trustFile)); strings.Contains(b, realRepo) {
		t.Fatalf("trust left after remove:\n%s", b)
	}

	if usertest.IsChild() {
		// Root trusted the package in this shared project; that is not this user's trust.
		shared := os.Getenv(envShared)
		if shared == "" {
			t.Fatalf("%s is not set", envShared)
		}
		if _, err := (&Project{Dir: shared, TrustFile: trustFile}).Load(ctx); Code(err) != CodeUntrusted {
			t.Fatalf("another user's trust in %s: want %s, got %v", shared, CodeUntrusted, err)
		}
		return
	}
	shared := usertest.TempDir(t)
	cloneRepo(t, author, shared)
	sp := &Project{Dir: shared, Registry: index, TrustFile: trustFile}
	if _, err := sp.Install(ctx, InstallOptions{Trust: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := sp.Load(ctx); err != nil {
		t.Fatal(err)
	}
	usertest.Rerun(t, envShared+"="+shared)
}
