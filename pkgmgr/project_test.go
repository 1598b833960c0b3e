package pkgmgr

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

var testNow = time.Date(2026, 11, 2, 20, 23, 38, 25e6, time.UTC)

// packTo packs a manifest into dir/name-version.halotool and returns the file's path.
func packTo(t *testing.T, dir, manifest string) (string, *Package) {
	t.Helper()
	src := t.TempDir()
	writeTree(t, src, map[string]string{ManifestFile: manifest, "README.md": "readme"})
	pkg, err := PackDir(context.Background(), src, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, pkg.FileName())
	if err := os.WriteFile(p, pkg.Bytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, pkg
}

// newRegistry publishes packages into a fresh registry folder and returns its index path.
func newRegistry(t *testing.T, manifests ...string) string {
	t.Helper()
	reg := filepath.Join(t.TempDir(), "site")
	index := filepath.Join(reg, "index.json")
	for _, m := range manifests {
		p, _ := packTo(t, t.TempDir(), m)
		if _, _, err := Publish(index, mustRead(t, p), testNow); err != nil {
			t.Fatal(err)
		}
	}
	return index
}

func newProject(t *testing.T, registry string) *Project {
	return &Project{
		Dir:        t.TempDir(),
		TrustFile:  filepath.Join(t.TempDir(), ".config", "halo", "trust.json"),
		Registry:   registry,
		Reserved:   func(n string) bool { return n == "Workspace" || n == "Bash" || n == "MCP" },
		Registries: RegistryOptions{Client: http.DefaultClient},
	}
}

func TestPublish(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"), httpManifest("acme", "1.2.0", "Acme"))
	p, _ := packTo(t, t.TempDir(), httpManifest("acme", "1.1.0", "Acme"))
	pkg, v, err := Publish(index, mustRead(t, p), testNow)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ParseIndex(mustRead(t, index))
	if err != nil {
		t.Fatal(err)
	}
	e := idx.Packages["acme"]
	if e.Latest != "1.2.0" || len(e.Versions) != 3 || v.SHA256 != pkg.SHA256 || v.File != "packages/acme-1.1.0.halotool" {
		t.Fatalf("latest %s, %d versions, %+v", e.Latest, len(e.Versions), v)
	}
	if v.PublishedAt != "2026-11-02T20:23:38.025Z" || v.Permissions.Network[0] != "api.acme.example" || v.Providers[0] != "Acme" {
		t.Fatalf("entry %+v", v)
	}
	if Sum(mustRead(t, filepath.Join(filepath.Dir(index), "packages", "acme-1.1.0.halotool"))) != v.SHA256 {
		t.Fatal("the copied file differs")
	}
	before := hashTree(t, filepath.Dir(index))
	if _, _, err := Publish(index, mustRead(t, p), testNow); Code(err) != CodeExists {
		t.Fatalf("publishing twice: %v", err)
	}
	if _, _, err := Publish(index, []byte("{}"), testNow); Code(err) != CodeInvalid {
		t.Fatalf("publishing junk: %v", err)
	}
	if after := hashTree(t, filepath.Dir(index)); after != before {
		t.Fatalf("a refused publish changed the registry:\n%s\n---\n%s", before, after)
	}
}

func TestAddFromRegistryAndRemove(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"), httpManifest("acme", "1.1.0", "Acme"))
	pr := newProject(t, index)
	got, err := pr.Add(context.Background(), "acme@1.0.0", AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Entry.Version != "1.0.0" || got.Entry.Source != "registry:"+index+"#acme@1.0.0" {
		t.Fatalf("entry %+v", got.Entry)
	}
	if _, err := os.Stat(filepath.Join(pr.Dir, ".halo", "tools", "acme", "README.md")); err != nil {
		t.Fatal(err)
	}
	got, err = pr.Add(context.Background(), "acme", AddOptions{})
	if err != nil || got.Entry.Version != "1.1.0" {
		t.Fatalf("upgrade: %+v %v", got, err)
	}
	loaded, err := pr.Load(context.Background())
	if err != nil || len(loaded) != 1 || loaded[0].Package.Manifest.Version != "1.1.0" {
		t.Fatalf("load: %v %v", loaded, err)
	}
	if _, err := pr.Remove("acme"); err != nil {
		t.Fatal(err)
	}
	lock, _ := ReadLock(pr.Dir)
	if len(lock.Tools) != 0 {
		t.Fatalf("lock after remove: %+v", lock.Tools)
	}
	if _, err := os.Stat(pr.PackageDir("acme")); !os.IsNotExist(err) {
		t.Fatalf("folder left after remove: %v", err)
	}
	if _, err := pr.Remove("acme"); Code(err) != CodeNotFound {
		t.Fatalf("removing twice: %v", err)
	}
}

// Every failure must leave halo.lock and .halo/ exactly as they were.
func TestFailuresChangeNothing(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"), httpManifest("other", "1.0.0", "Acme"),
		httpManifest("builtin", "1.0.0", "Workspace"), mcpCommandManifest("gh", "1.0.0", "Gh"))
	// A registry whose index promises another checksum than its file has.
	bad := filepath.Join(filepath.Dir(index), "bad.json")
	b := strings.ReplaceAll(string(mustRead(t, index)), `"sha256": "`, `"sha256": "00`)
	if err := os.WriteFile(bad, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	hostileDir := t.TempDir()
	hostile := filepath.Join(hostileDir, "evil.halotool")
	mustWrite(t, hostile, rawPackage(t, httpManifest("evil", "1.0.0", "Evil"), []wireFile{{Path: "../../escape"}}))

	for _, fresh := range []bool{true, false} {
		pr := newProject(t, index)
		if !fresh {
			if _, err := pr.Add(context.Background(), "acme", AddOptions{}); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(pr.Dir, ".halo", "trust.json"), []byte(`{"trusted":{}}`+"\n"))
		}
		before := hashTree(t, pr.Dir)
		trustBefore := hashTree(t, filepath.Dir(pr.TrustFile))
		cases := []struct {
			spec string
			reg  string
			code string
		}{
			{"other", index, CodeConflict},
			{"builtin", index, CodeConflict},
			{"gh", index, CodeUntrusted},
			{"nope", index, CodeNotFound},
			{"acme@9.9.9", index, CodeNotFound},
			{"other", bad, CodeIntegrity},
			{hostile, index, CodeInvalid},
			{"http://example.com/x.halotool", index, CodeRegistry},
			{"acme", "http://example.com/index.json", CodeRegistry},
		}
		for _, c := range cases {
			pr.Registry = c.reg
			if c.spec == "other" && fresh && c.reg == index {
				continue // nothing to clash with yet
			}
			_, err := pr.Add(context.Background(), c.spec, AddOptions{})
			if Code(err) != c.code {
				t.Errorf("fresh=%v add %s from %s: want %s, got %v", fresh, c.spec, c.reg, c.code, err)
			}
			if after := hashTree(t, pr.Dir); after != before {
				t.Fatalf("fresh=%v add %s changed the project:\nbefore:\n%s\nafter:\n%s", fresh, c.spec, before, after)
			}
			if after := hashTree(t, filepath.Dir(pr.TrustFile)); after != trustBefore {
				t.Fatalf("fresh=%v add %s changed the user's trust file", fresh, c.spec)
			}
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(hostileDir), "escape")); !os.IsNotExist(err) {
			t.Fatal("the hostile package wrote outside the project")
		}
	}
}

func TestTrustAndLockEdits(t *testing.T) {
	index := newRegistry(t, mcpCommandManifest("gh", "1.0.0", "Gh"), mcpCommandManifest("gh", "1.1.0", "Gh"))
	pr := newProject(t, index)
	ctx := context.Background()
	if _, err := pr.Add(ctx, "gh@1.0.0", AddOptions{Trust: true}); err != nil {
		t.Fatal(err)
	}
	trust, err := pr.Trust()
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := ReadLock(pr.Dir)
	if !trust.Trusts("gh", lock.Tools["gh"].SHA256) || !lock.Tools["gh"].Permissions.NeedsTrust() {
		t.Fatalf("trust %+v lock %+v", trust, lock.Tools["gh"])
	}
	if _, err := pr.Load(ctx); err != nil {
		t.Fatal(err)
	}
	// A pull request changes the lock to another version: the next load and install refuse it.
	other := newProject(t, index)
	if _, err := other.Add(ctx, "gh@1.1.0", AddOptions{Trust: true}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(pr.Dir, LockFile), mustRead(t, filepath.Join(other.Dir, LockFile)))
	before := hashTree(t, pr.Dir)
	if _, err := pr.Load(ctx); Code(err) != CodeIntegrity {
		t.Fatalf("load with a new pin: %v", err)
	}
	if _, err := pr.Install(ctx, InstallOptions{}); Code(err) != CodeUntrusted {
		t.Fatalf("install with a new pin, no --trust: %v", err)
	}
	if after := hashTree(t, pr.Dir); after != before {
		t.Fatalf("a refused install changed the project:\n%s\n---\n%s", before, after)
	}
	rep, err := pr.Install(ctx, InstallOptions{Trust: true})
	if err != nil || len(rep.Trusted) != 1 || len(rep.Fetched) != 1 {
		t.Fatalf("install --trust: %+v %v", rep, err)
	}
	if _, err := pr.Load(ctx); err != nil {
		t.Fatal(err)
	}
	// A lock edited to a checksum nothing has is an integrity failure, whatever trust says.
	l := string(mustRead(t, filepath.Join(pr.Dir, LockFile)))
	sha := lock.Tools["gh"].SHA256
	l2, _ := ReadLock(pr.Dir)
	mustWrite(t, filepath.Join(pr.Dir, LockFile), []byte(strings.Replace(l, l2.Tools["gh"].SHA256, strings.Repeat("a", 64), 1)))
	_ = sha
	before = hashTree(t, pr.Dir)
	if _, err := pr.Install(ctx, InstallOptions{Trust: true}); Code(err) != CodeIntegrity {
		t.Fatalf("install with an edited checksum: %v", err)
	}
	if after := hashTree(t, pr.Dir); after != before {
		t.Fatal("a refused install changed the project")
	}
}

func TestLoadRewritesEditedFiles(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	pr := newProject(t, index)
	ctx := context.Background()
	if _, err := pr.Add(ctx, "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	clean := hashTree(t, pr.Dir)
	dir := pr.PackageDir("acme")
	mustWrite(t, filepath.Join(dir, ManifestFile), []byte(`{"evil":true}`))
	mustWrite(t, filepath.Join(dir, "extra.js"), []byte(`evil()`))
	must(t, os.Remove(filepath.Join(dir, "README.md")))
	if _, err := pr.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hashTree(t, pr.Dir); got != clean {
		t.Fatalf("load did not restore the package:\n%s\n---\n%s", clean, got)
	}
	// An edited package.halotool is refused: it no longer has the pinned checksum.
	mustWrite(t, filepath.Join(dir, Installed), append(mustRead(t, filepath.Join(dir, Installed)), ' '))
	if _, err := pr.Load(ctx); Code(err) != CodeIntegrity || !strings.Contains(err.Error(), "halo install") {
		t.Fatalf("load with an edited package file: %v", err)
	}
	// halo install puts it right, warm from the registry.
	rep, err := pr.Install(ctx, InstallOptions{})
	if err != nil || len(rep.Fetched) != 1 {
		t.Fatalf("install: %+v %v", rep, err)
	}
	if got := hashTree(t, pr.Dir); got != clean {
		t.Fatal("install did not restore the package")
	}
	rep, err = pr.Install(ctx, InstallOptions{})
	if err != nil || len(rep.Fetched) != 0 || len(rep.Rewritten) != 0 {
		t.Fatalf("a warm install did work: %+v %v", rep, err)
	}
}

func TestAddSpecForms(t *testing.T) {
	ctx := context.Background()
	pr := newProject(t, "")
	// A folder inside the project is recorded relative to it.
	writeTree(t, filepath.Join(pr.Dir, "tools", "acme"), map[string]string{ManifestFile: httpManifest("acme", "1.0.0", "Acme"), "README.md": "readme"})
	got, err := pr.Add(ctx, "./tools/acme", AddOptions{})
	if err != nil || got.Entry.Source != "tools/acme" {
		t.Fatalf("folder: %+v %v", got, err)
	}
	// A file outside is recorded by its absolute path.
	file, _ := packTo(t, t.TempDir(), httpManifest("beta", "1.0.0", "Beta"))
	got, err = pr.Add(ctx, file, AddOptions{})
	if err != nil || got.Entry.Source != file {
		t.Fatalf("file: %+v %v", got, err)
	}
	// A URL, over https.
	_, pkg := packTo(t, t.TempDir(), httpManifest("gamma", "1.0.0", "Gamma"))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/gamma-1.0.0.halotool" {
			http.NotFound(w, r)
			return
		}
		w.Write(pkg.Bytes)
	}))
	defer srv.Close()
	pr.Registries.Client = srv.Client()
	got, err = pr.Add(ctx, srv.URL+"/gamma-1.0.0.halotool", AddOptions{})
	if err != nil || got.Entry.Source != srv.URL+"/gamma-1.0.0.halotool" {
		t.Fatalf("url: %+v %v", got, err)
	}
	if _, err := pr.Add(ctx, srv.URL+"/missing.halotool", AddOptions{}); Code(err) != CodeNotFound {
		t.Fatalf("missing url: %v", err)
	}
	// Reinstalling everything from the lock, cold.
	must(t, os.RemoveAll(filepath.Join(pr.Dir, ".halo")))
	rep, err := pr.Install(ctx, InstallOptions{})
	if err != nil || len(rep.Fetched) != 3 {
		t.Fatalf("install: %+v %v", rep, err)
	}
	// A folder that changed since it was added no longer matches the lock; a file the
	// manifest does not name is not packed, so it changes nothing.
	writeTree(t, filepath.Join(pr.Dir, "tools", "acme"), map[string]string{"new.txt": "x"})
	must(t, os.RemoveAll(filepath.Join(pr.Dir, ".halo")))
	if _, err := pr.Install(ctx, InstallOptions{}); err != nil {
		t.Fatalf("a file the manifest does not name: %v", err)
	}
	writeTree(t, filepath.Join(pr.Dir, "tools", "acme"), map[string]string{"README.md": "changed"})
	must(t, os.RemoveAll(filepath.Join(pr.Dir, ".halo")))
	if _, err := pr.Install(ctx, InstallOptions{}); Code(err) != CodeIntegrity {
		t.Fatalf("changed folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pr.Dir, ".halo")); !os.IsNotExist(err) {
		t.Fatal("a failed install left .halo behind")
	}
}

func TestRegistryOverHTTPSAndDefault(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	site := filepath.Dir(index)
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	pr := newProject(t, srv.URL+"/index.json")
	pr.Registries.Client = srv.Client()
	ctx := context.Background()
	got, err := pr.Add(ctx, "acme", AddOptions{})
	if err != nil || got.Entry.Source != "registry:"+srv.URL+"/index.json#acme@1.0.0" {
		t.Fatalf("https registry: %+v %v", got, err)
	}
	// The default registry is an fs.FS.
	def := fstest.MapFS{
		"index.json":                   {Data: mustRead(t, index)},
		"packages/acme-1.0.0.halotool": {Data: mustRead(t, filepath.Join(site, "packages", "acme-1.0.0.halotool"))},
	}
	pr2 := newProject(t, "")
	pr2.Registries.Default = def
	got, err = pr2.Add(ctx, "acme", AddOptions{})
	if err != nil || got.Entry.Source != "registry:default#acme@1.0.0" {
		t.Fatalf("default registry: %+v %v", got, err)
	}
	// Network failures are NETWORK_ERROR and change nothing.
	srv.Close()
	before := hashTree(t, pr.Dir)
	must(t, os.RemoveAll(pr.PackageDir("acme")))
	mid := hashTree(t, pr.Dir)
	if _, err := pr.Install(ctx, InstallOptions{}); Code(err) != CodeNetwork {
		t.Fatalf("install with the registry down: %v", err)
	}
	if hashTree(t, pr.Dir) != mid || before == mid {
		t.Fatal("a failed install changed the project")
	}
}

// The fast check of an installed folder catches a changed executable bit, and a package
// without per-file checksums (made by hand) is checked the slow way.
func TestQuickCheck(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	pr := newProject(t, index)
	ctx := context.Background()
	if _, err := pr.Add(ctx, "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	clean := hashTree(t, pr.Dir)
	loaded, err := pr.Load(ctx)
	if err != nil || loaded[0].Package.Files[0].Data != nil || loaded[0].Package.Files[0].SHA256 == "" {
		t.Fatalf("an intact folder was decoded: %+v %v", loaded, err)
	}
	must(t, os.Chmod(filepath.Join(pr.PackageDir("acme"), "README.md"), 0o755))
	if _, err := pr.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hashTree(t, pr.Dir); got != clean {
		t.Fatalf("the executable bit was not restored:\n%s\n---\n%s", clean, got)
	}
	// A hand-made package without checksums still installs and verifies.
	file := filepath.Join(t.TempDir(), "hand.halotool")
	mustWrite(t, file, rawPackage(t, httpManifest("hand", "1.0.0", "Hand"), []wireFile{{Path: "a.txt"}}))
	if _, err := pr.Add(ctx, file, AddOptions{}); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(pr.PackageDir("hand"), "a.txt"), []byte("changed"))
	loaded, err = pr.Load(ctx)
	if err != nil || len(loaded) != 2 {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(pr.PackageDir("hand"), "a.txt")); string(b) != "x" {
		t.Fatalf("a.txt is %q", b)
	}
	// A listed checksum that does not match its file is refused.
	bad := rawPackage(t, httpManifest("bad", "1.0.0", "Bad"), []wireFile{{Path: "a.txt", SHA256: strings.Repeat("0", 64)}})
	if _, err := ReadPackage(bad); Code(err) != CodeInvalid || !strings.Contains(err.Error(), "do not have the sha256") {
		t.Fatalf("bad checksum: %v", err)
	}
}
