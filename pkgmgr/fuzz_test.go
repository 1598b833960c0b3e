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
		// The folder is two levels down, so a file that escaped it by one or two levels
		// would still land inside root, where the walk below sees it.
		root := t.TempDir()
		parent := filepath.Join(root, "a", "b")
		if err := os.MkdirAll(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(parent, "pkg")
		if err := pkg.Unpack(dir); err != nil {
			t.Fatalf("a package that read cleanly did not unpack: %v", err)
		}
		var outside, links []string
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			switch {
			case rel == "." || rel == "a" || rel == "a/b":
			case rel == "a/b/pkg" || strings.HasPrefix(rel, "a/b/pkg/"):
				if d.Type()&fs.ModeSymlink != 0 {
					links = append(links, rel)
				}
			default:
				outside = append(outside, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(outside) > 0 || len(links) > 0 {
			t.Fatalf("unpacking wrote outside its folder %v, or symlinks %v", outside, links)
		}
		// The folder holds exactly the package's files (with package.halotool, which the
		// installer adds).
		if err := os.WriteFile(filepath.Join(dir, Installed), pkg.Bytes, 0o644); err != nil {
			t.Fatal(err)
		}
		fsys := os.DirFS(parent)
		if !dirMatches(fsys, "pkg", pkg) {
			t.Fatal("an unpacked package does not match itself")
		}
		if _, listed := readListing(data); listed && !quickMatches(fsys, "pkg", pkg) {
			t.Fatal("an unpacked package does not match its own listing")
		}
	})
}
