package registry

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/halo-lang/halo/pkgmgr"
	"github.com/halo-lang/halo/registry/generate"
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

// The default registry has the seven first-party packages; world-time only once set-up has
// built it for this machine.
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
	}
	if _, err := fs.Stat(fsys, "local/index.json"); err == nil {
		want["world-time"] = []string{"WorldTime"}
	} else {
		t.Log("registry/local has no world-time build; run go run ./registry/gen -local (set-up does)")
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
		pkg, err := pkgmgr.ReadPackage(data)
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
		if goPkg != "github.com/halo-lang/halo/plugins/worldtime/cmd/worldtime" {
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
