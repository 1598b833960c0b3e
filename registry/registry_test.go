package registry

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/pkgmgr"
	"halolang.dev/halo/registry/generate"
)

// TestCommittedRegistryIsFresh regenerates index.json and packages/ from src/ into a
// temporary folder and fails when the committed files differ: run `go run ./registry/gen`.
func TestCommittedRegistryIsFresh(t *testing.T) {
	out := t.TempDir()
	// Start from the committed index so unchanged versions keep their publishedAt.
	idx, err := os.ReadFile("index.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(out, "index.json"), idx, 0o644)
	if err := generate.Generate(context.Background(), "src", out, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	compareTrees(t, out, ".", "index.json")
	compareTrees(t, filepath.Join(out, "packages"), "packages", "")
}

func compareTrees(t *testing.T, fresh, committed, only string) {
	t.Helper()
	entries, _ := os.ReadDir(fresh)
	seen := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() || (only != "" && e.Name() != only) {
			continue
		}
		seen[e.Name()] = true
		want, _ := os.ReadFile(filepath.Join(fresh, e.Name()))
		got, err := os.ReadFile(filepath.Join(committed, e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("registry/%s is stale: run go run ./registry/gen", filepath.Join(committed, e.Name()))
		}
	}
	if only != "" {
		return
	}
	old, _ := os.ReadDir(committed)
	for _, e := range old {
		if !seen[e.Name()] {
			t.Errorf("registry/%s/%s is no longer generated: run go run ./registry/gen", committed, e.Name())
		}
	}
}

// The default registry has the seven first-party packages. world-time is built by set-up
// (scripts/build-local-registry.sh) rather than committed; a halo built without it cannot
// install the seed's `halo add world-time --trust`, so its absence fails here.
func TestDefaultRegistry(t *testing.T) {
	fsys, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := pkgmgr.ParseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"stripe": {"Stripe"}, "jira": {"Jira"}, "notion": {"Notion"}, "sentry": {"Sentry"},
		"cloudflare": {"Cloudflare", "CloudflareZone"}, "github-mcp": {"GitHubMCP"},
		"world-time": {"WorldTime"},
	}
	if _, err := fs.Stat(fsys, "local/index.json"); err != nil {
		t.Error("registry/local has no world-time build: run scripts/build-local-registry.sh (scripts/setup-test-deps.sh does), then rebuild")
	}
	for name, providers := range want {
		p, ok := idx.Packages[name]
		if !ok {
			t.Errorf("the default registry has no %s", name)
			continue
		}
		v := p.Versions[p.Latest]
		data, err := fs.ReadFile(fsys, v.File)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var pkg *pkgmgr.Package
		if name == "world-time" {
			pkg, err = readWorldTime() // 28 MB: read once for all the tests
		} else {
			pkg, err = pkgmgr.ReadPackage(data)
		}
		if err != nil || pkg.SHA256 != v.SHA256 {
			t.Errorf("%s: %v (sha %s, index %s)", name, err, pkg.SHA256, v.SHA256)
			continue
		}
		if got := pkg.Manifest.ProviderNames(); len(got) != len(providers) || got[0] != providers[0] {
			t.Errorf("%s provides %v, want %v", name, got, providers)
		}
		for _, prov := range pkg.Manifest.Providers {
			if prov.Kind == pkgmgr.KindHTTP && len(prov.Methods) < 5 {
				t.Errorf("%s: %d methods, want at least 5", name, len(prov.Methods))
			}
		}
	}
}

// world-time's source manifest packs with a builder for each of its platforms.
func TestWorldTimePacks(t *testing.T) {
	var platforms []string
	build := func(_ context.Context, dir, goPkg, platform string) ([]byte, error) {
		platforms = append(platforms, platform)
		if goPkg != "halolang.dev/halo/plugins/worldtime/cmd/worldtime" {
			t.Errorf("builds %s", goPkg)
		}
		return []byte("#!fake " + platform), nil
	}
	pkg, err := pkgmgr.PackDir(context.Background(), "src/world-time", pkgmgr.PackOptions{Build: build, Platforms: []string{"linux/arm64"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(platforms) != 1 || platforms[0] != "linux/arm64" || !pkg.Permissions().Code {
		t.Fatalf("built %v, permissions %+v", platforms, pkg.Permissions())
	}
	if _, ok := pkg.File("bin/linux-arm64/worldtime"); !ok {
		t.Fatal("no executable")
	}
}

// readWorldTime reads the world-time package of the default registry, once for all the tests
// (it holds four platforms' plugins; under -race a read takes seconds).
var readWorldTime = sync.OnceValues(func() (*pkgmgr.Package, error) {
	fsys, err := Default()
	if err != nil {
		return nil, err
	}
	b, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return nil, err
	}
	idx, err := pkgmgr.ParseIndex(b)
	if err != nil {
		return nil, err
	}
	p, ok := idx.Packages["world-time"]
	if !ok {
		return nil, errors.New("the default registry has no world-time: run scripts/build-local-registry.sh (scripts/setup-test-deps.sh does), then rebuild")
	}
	data, err := fs.ReadFile(fsys, p.Versions[p.Latest].File)
	if err != nil {
		return nil, err
	}
	return pkgmgr.ReadPackage(data)
})

func worldTimePackage(t *testing.T) *pkgmgr.Package {
	t.Helper()
	pkg, err := readWorldTime()
	if err != nil {
		t.Fatal(err)
	}
	return pkg
}

// The world-time package of the default registry is one package for every platform halo is
// released for, as Terraform providers ship: the same file, and so the same sha256 in
// halo.lock, wherever halo runs.
func TestWorldTimeHasEveryPlatform(t *testing.T) {
	pkg := worldTimePackage(t)
	spec := pkg.Manifest.Providers["WorldTime"]
	for _, plat := range []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"} {
		rel, ok := spec.Executables[plat]
		if !ok {
			t.Errorf("world-time lists no executable for %s (it lists %v): run scripts/build-local-registry.sh", plat, spec.Executables)
			continue
		}
		if f, ok := pkg.File(rel); !ok || !f.Executable || len(f.Data) < 1<<20 {
			t.Errorf("world-time's %s executable %s is missing or not a plugin", plat, rel)
		}
	}
}

// The build is reproducible: building plugins/worldtime again for this platform, as set-up
// and scripts/release.sh do, gives the very bytes the package holds.
func TestWorldTimeIsReproducible(t *testing.T) {
	pkg := worldTimePackage(t)
	plat := runtime.GOOS + "/" + runtime.GOARCH
	rel, ok := pkg.Manifest.Providers["WorldTime"].Executables[plat]
	if !ok {
		t.Fatalf("world-time has no executable for %s", plat)
	}
	f, _ := pkg.File(rel)
	build := pkgmgr.GoBuilder("go", os.Environ())
	exe, err := build(context.Background(), "src/world-time", "halolang.dev/halo/plugins/worldtime/cmd/worldtime", plat)
	if err != nil {
		t.Fatal(err)
	}
	if got := pkgmgr.Sum(exe); got != f.SHA256 {
		t.Errorf("a fresh build of %s is %s, the package holds %s: the build is not reproducible, or registry/local is stale (run scripts/build-local-registry.sh)", rel, got, f.SHA256)
	}
}
