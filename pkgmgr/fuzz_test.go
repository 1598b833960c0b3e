package pkgmgr

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseManifest: any input either parses into a manifest whose permissions can be
// computed, or fails with PACKAGE_INVALID; it never panics.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(acmeManifest))
	f.Add([]byte(mcpCommandManifest("gh", "1.0.0", "Gh")))
	f.Add([]byte(`{"name":"m","version":"1.0.0","description":"d","providers":{"M":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/m"}}}}`))
	f.Add([]byte(`{"providers":{"A":{"kind":"http","methods":[{"http":{"path":"/{a}/{a}"}}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			if Code(err) != CodeInvalid {
				t.Fatalf("error without %s: %v", CodeInvalid, err)
			}
			return
		}
		_ = m.Permissions()
		if len(m.Providers) == 0 {
			t.Fatal("a valid manifest without providers")
		}
	})
}

// FuzzReadPackage: a package file either is refused, or unpacks entirely inside its folder.
func FuzzReadPackage(f *testing.F) {
	f.Add(rawPackage(f, acmeManifest, []wireFile{{Path: "README.md"}, {Path: "docs/a.md"}}))
	f.Add(rawPackage(f, acmeManifest, []wireFile{{Path: "../x"}}))
	f.Add(rawPackage(f, acmeManifest, []wireFile{{Path: "a"}, {Path: "a/b"}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		pkg, err := ReadPackage(data)
		if err != nil {
			if Code(err) != CodeInvalid {
				t.Fatalf("error without %s: %v", CodeInvalid, err)
			}
			return
		}
		root := t.TempDir()
		dir := filepath.Join(root, "pkg")
		if err := pkg.Unpack(dir); err != nil {
			t.Fatalf("a package that read cleanly did not unpack: %v", err)
		}
		entries, _ := os.ReadDir(root)
		if len(entries) != 1 {
			t.Fatalf("unpacking wrote beside its folder: %v", entries)
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !strings.HasPrefix(p, dir) {
				t.Fatalf("wrote %s", p)
			}
			if err == nil && d.Type()&fs.ModeSymlink != 0 {
				t.Fatalf("unpacked a symlink %s", p)
			}
			return nil
		})
		if !dirMatches(dir, pkg) {
			// The folder lacks package.halotool, which the installer adds; with it, it must match.
			os.WriteFile(filepath.Join(dir, Installed), pkg.Bytes, 0o644)
			if !dirMatches(dir, pkg) {
				t.Fatal("an unpacked package does not match itself")
			}
		}
	})
}
