package pkgmgr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// halo pack packs the manifest and what it names: here README.md and the docs folder, without
// the dot-files, node_modules and packed files inside it; the folder's other files (sources,
// tests, go.mod, a secret) stay out.
func TestPackDirCollectsFilesAndIsReproducible(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		ManifestFile:                strings.Replace(acmeManifest, `"files": ["README.md"]`, `"files": ["README.md", "docs/"]`, 1),
		"README.md":                 "# Acme\n",
		"docs/usage.md":             "use it\n",
		"docs/.hidden":              "x",
		"docs/node_modules/y/a.txt": "x",
		"docs/old-0.9.0.halotool":   "old",
		"main.go":                   "package main",
		"main_test.go":              "package main",
		"go.mod":                    "module example.com/acme",
		"go.sum":                    "",
		".env":                      "SECRET=1",
		".git/config":               "x",
		"node_modules/x/index.js":   "x",
		"acme-0.9.0.halotool":       "old",
		"secret.txt":                "x",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err) // not named, so never looked at
	}
	p1, err := PackDir(context.Background(), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range p1.Files {
		names = append(names, f.Path)
	}
	if got := strings.Join(names, ","); got != "README.md,docs/usage.md" {
		t.Fatalf("packed %s", got)
	}
	p2, err := PackDir(context.Background(), dir, PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p1.SHA256 != p2.SHA256 || p1.SHA256 != Sum(p1.Bytes) {
		t.Fatalf("packing twice gave %s and %s", p1.SHA256, p2.SHA256)
	}
	back, err := ReadPackage(p1.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if back.FileName() != "acme-1.0.0.halotool" || len(back.Files) != 2 {
		t.Fatalf("read back %s with %d files", back.FileName(), len(back.Files))
	}
	out := filepath.Join(t.TempDir(), "acme")
	if err := back.Unpack(out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "docs", "usage.md")); string(b) != "use it\n" {
		t.Fatalf("unpacked %q", b)
	}
	if _, err := ParseManifest(mustRead(t, filepath.Join(out, ManifestFile))); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPackDirRefusesSymlinksAndBadManifests(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{ManifestFile: strings.Replace(acmeManifest, `"README.md"`, `"passwd", "docs"`, 1), "docs/a.md": "a"})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "docs", "b.md")); err != nil {
		t.Fatal(err)
	}
	_, err := PackDir(context.Background(), dir, PackOptions{})
	if Code(err) != CodeInvalid || !strings.Contains(err.Error(), "passwd: a symlink cannot be packed") || !strings.Contains(err.Error(), "docs/b.md: a symlink cannot be packed") {
		t.Fatalf("want the symlinks refused, got %v", err)
	}
	missing := t.TempDir()
	writeTree(t, missing, map[string]string{ManifestFile: acmeManifest})
	if _, err := PackDir(context.Background(), missing, PackOptions{}); Code(err) != CodeInvalid || !strings.Contains(err.Error(), "files[0]: README.md: no such file") {
		t.Fatalf("a named file that is not there: %v", err)
	}
	empty := t.TempDir()
	if _, err := PackDir(context.Background(), empty, PackOptions{}); Code(err) != CodeInvalid {
		t.Fatalf("a folder without a manifest: %v", err)
	}
	big := t.TempDir()
	writeTree(t, big, map[string]string{ManifestFile: strings.Replace(acmeManifest, `"README.md"`, `"big.bin"`, 1), "big.bin": strings.Repeat("x", MaxPlainSize+1)})
	if _, err := PackDir(context.Background(), big, PackOptions{}); Code(err) != CodeInvalid || !strings.Contains(err.Error(), "MiB limit") {
		t.Fatalf("an oversize package: %v", err)
	}
}

func TestModulePackBuildsAndCompresses(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{ManifestFile: `{"name":"clock","version":"1.0.0","description":"d","providers":{
		"Clock":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/linux-amd64/clock","darwin/arm64":"bin/darwin-arm64/clock"},"build":{"go":"./cmd/clock"}}}}`})
	var calls []string
	build := func(_ context.Context, d, goPkg, platform string) ([]byte, error) {
		calls = append(calls, goPkg+" "+platform)
		return bytes.Repeat([]byte(platform), 1000), nil
	}
	var progress []string
	report := func(i, n int, provider, platform string) {
		progress = append(progress, fmt.Sprintf("[%d/%d] %s %s", i, n, provider, platform))
	}
	pkg, err := PackDir(context.Background(), dir, PackOptions{Build: build, Progress: report})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(calls, ",") != "./cmd/clock darwin/arm64,./cmd/clock linux/amd64" {
		t.Fatalf("builds %q", calls)
	}
	if got := strings.Join(progress, ","); got != "[1/2] Clock darwin/arm64,[2/2] Clock linux/amd64" {
		t.Fatalf("progress %q", got)
	}
	f, ok := pkg.File("bin/linux-amd64/clock")
	if !ok || !f.Executable || len(f.Data) != 11000 {
		t.Fatalf("executable %+v", f)
	}
	if len(pkg.Bytes) > 2000 {
		t.Fatalf("executables are not compressed: %d bytes", len(pkg.Bytes))
	}
	out := filepath.Join(t.TempDir(), "clock")
	if err := pkg.Unpack(out); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(out, "bin", "linux-amd64", "clock"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("unpacked executable %v %v", st, err)
	}
	if _, err := PackDir(context.Background(), dir, PackOptions{}); Code(err) != CodeInvalid {
		t.Fatalf("a build entry without a builder: %v", err)
	}
}

// Hostile package files are refused by ReadPackage, before anything is written.
func TestReadPackageRefusesHostileFiles(t *testing.T) {
	module := `{"name":"m","version":"1.0.0","description":"d","providers":{"M":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/m"}}}}`
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"parent path", rawPackage(t, acmeManifest, []wireFile{{Path: "../evil"}}), `"../evil": .. is not allowed`},
		{"nested parent path", rawPackage(t, acmeManifest, []wireFile{{Path: "a/../../evil"}}), "not a clean relative path"},
		{"absolute path", rawPackage(t, acmeManifest, []wireFile{{Path: "/etc/cron.d/evil"}}), "an absolute path is not allowed"},
		{"windows path", rawPackage(t, acmeManifest, []wireFile{{Path: `..\evil`}}), "backslashes"},
		{"dot file", rawPackage(t, acmeManifest, []wireFile{{Path: ".bashrc"}}), "dot-files"},
		{"duplicate file", rawPackage(t, acmeManifest, []wireFile{{Path: "a.txt"}, {Path: "a.txt"}}), `"a.txt" appears twice`},
		{"duplicate by case", rawPackage(t, acmeManifest, []wireFile{{Path: "A.txt"}, {Path: "a.txt"}}), "appears twice"},
		{"manifest as a file", rawPackage(t, acmeManifest, []wireFile{{Path: ManifestFile}}), "never packed"},
		{"nested package", rawPackage(t, acmeManifest, []wireFile{{Path: "x.halotool"}}), "never packed"},
		{"file and folder", rawPackage(t, acmeManifest, []wireFile{{Path: "a"}, {Path: "a/b"}}), "both a file and a folder"},
		{"bad base64", rawPackage(t, acmeManifest, []wireFile{{Path: "a", Data: "!!!"}}), "bad base64"},
		{"oversize", rawPackage(t, acmeManifest, []wireFile{{Path: "a", Data: b64(strings.Repeat("x", MaxPlainSize))}}), "MiB limit"},
		{"smuggled executable", rawPackage(t, acmeManifest, []wireFile{{Path: "a", Executable: true}}), "marked executable"},
		{"missing executable", rawPackage(t, module, nil), `module executable "bin/m" is missing`},
		{"bad gzip", rawPackage(t, module, []wireFile{{Path: "bin/m", Executable: true, Gzip: true, Data: b64("not gzip")}}), "bad gzip data"},
		{"gzip on a plain file", rawPackage(t, acmeManifest, []wireFile{{Path: "a.txt", Gzip: true, Data: b64(gzipped(t, []byte("x")))}}), "only a module executable may be gzip-compressed"},
		{"bad manifest", rawPackage(t, `{"name":"x"}`, nil), "version: required"},
		{"wrong format", []byte(`{"format":"zip","manifest":{},"files":[]}`), `format "zip"`},
		{"unknown field", []byte(`{"format":"halotool/1","manifest":{},"files":[],"hooks":["rm -rf /"]}`), "unknown field"},
		{"not json", []byte("PK\x03\x04"), "not a .halotool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadPackage(tt.data)
			if Code(err) != CodeInvalid || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want %s with %q, got %v", CodeInvalid, tt.want, err)
			}
		})
	}
}

// A gzip bomb stops at the limit instead of filling memory, and gzip data that inflates past
// the size its trailer states (a lie that would defeat the limit) is refused.
func TestGunzipLimit(t *testing.T) {
	bomb := []byte(gzipped(t, make([]byte, 1<<20)))
	if _, err := gunzip(bomb, 1<<10); !errors.Is(err, errTooLarge) {
		t.Fatalf("want the limit, got %v", err)
	}
	out, err := gunzip(bomb, 1<<20)
	if err != nil || len(out) != 1<<20 {
		t.Fatalf("%d %v", len(out), err)
	}
	liar := append([]byte(nil), bomb...)
	copy(liar[len(liar)-4:], []byte{0, 4, 0, 0}) // says 1 KiB
	if _, err := gunzip(liar, 1<<20); err == nil || !strings.Contains(err.Error(), "past the size its trailer states") {
		t.Fatalf("a lying trailer: %v", err)
	}
	twice := append([]byte(gzipped(t, []byte("a"))), gzipped(t, []byte("b"))...)
	if _, err := gunzip(twice, 1<<20); err == nil {
		t.Fatal("two gzip members were accepted")
	}
	for _, bad := range [][]byte{nil, []byte("xy"), []byte("not gzip data")} {
		if _, err := gunzip(bad, 1<<20); err == nil || !strings.Contains(err.Error(), "bad gzip data") {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
