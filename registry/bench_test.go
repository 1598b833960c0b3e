package registry

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"halolang.dev/halo/pkgmgr"
)

// firstParty installs every package of the default registry into a fresh project and returns
// it with the package names; world-time is among them once set-up has built it.
func firstParty(b *testing.B) (*pkgmgr.Project, []string) {
	b.Helper()
	def, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	// The publisher keys halo knows without asking, as cmd/halo gives them: the first-party
	// packages are signed.
	pr := &pkgmgr.Project{Dir: dir, Registries: pkgmgr.RegistryOptions{Default: def}, TrustFile: filepath.Join(dir, "..", "trust.json"), BuiltInKeys: BuiltInKeys()}
	idx, err := fs.ReadFile(def, "index.json")
	if err != nil {
		b.Fatal(err)
	}
	index, _ := pkgmgr.ParseIndex(idx)
	var names []string
	for n := range index.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, err := pr.Add(context.Background(), n, pkgmgr.AddOptions{Trust: true}); err != nil {
			b.Fatal(err)
		}
	}
	if len(names) < 7 {
		b.Logf("%d packages (world-time is not built here: go run ./registry/gen -local)", len(names))
	}
	return pr, names
}

// BenchmarkInstall measures `halo install` of the first-party packages from the default
// registry: cold (no .halo: every package read from the registry, checked and unpacked) and
// warm (everything installed: each package file hashed and each folder compared). The floor
// is hashing the same package files once, which any verification has to do.
func BenchmarkInstall(b *testing.B) {
	pr, _ := firstParty(b)
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			if err := os.RemoveAll(filepath.Join(pr.Dir, ".halo")); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			rep, err := pr.Install(ctx, pkgmgr.InstallOptions{})
			if err != nil || len(rep.Fetched) != len(rep.Packages) {
				b.Fatalf("%+v %v", rep, err)
			}
		}
	})
	b.Run("warm", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			rep, err := pr.Install(ctx, pkgmgr.InstallOptions{})
			if err != nil || len(rep.Fetched) != 0 {
				b.Fatalf("%+v %v", rep, err)
			}
		}
	})
	b.Run("floor-hash", func(b *testing.B) {
		lock, _ := pkgmgr.ReadLock(pr.Dir)
		for i := 0; i < b.N; i++ {
			for _, n := range lock.Names() {
				data, err := os.ReadFile(filepath.Join(pr.PackageDir(n), pkgmgr.Installed))
				if err != nil || pkgmgr.Sum(data) != lock.Tools[n].SHA256 {
					b.Fatal("hash mismatch")
				}
			}
		}
	})
}
