package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stage writes a small copy of the repository's three modules.
func stage(t *testing.T, hostMod, sdkVersion string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                               hostMod,
		"main.go":                              "package halo\n",
		"cmd/halo/main.go":                     "package main\n",
		"cmd/halo/internal/version/release.go": "package version\n\nconst releaseCommit = \"\"\n",
		"sdk/go.mod":                           "module halolang.dev/halo/sdk\n\ngo 1.26.0\n\nrequire halolang.dev/halo/proto v0.1.0\n\nreplace halolang.dev/halo/proto => ../proto\n",
		"sdk/version.go":                       "package sdk\n\nconst Version = \"" + sdkVersion + "\"\n",
		"proto/go.mod":                         "module halolang.dev/halo/proto\n\ngo 1.26.0\n",
		"proto/proto.go":                       "package proto\n",
		"proto/testdata/x.go":                  "package x\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const hostMod = `module halolang.dev/halo

go 1.26.0

require (
	halolang.dev/halo/proto v0.1.0
	halolang.dev/halo/sdk v0.1.0
)

replace (
	halolang.dev/halo/proto => ./proto
	halolang.dev/halo/sdk => ./sdk
)
`

// The proxy tree holds the three modules, each go.mod without replace directives and with the
// released modules it requires in go.sum; the host module's zip leaves the nested modules out
// and holds the commit.
func TestWriteProxy(t *testing.T) {
	src := stage(t, hostMod, "0.1.0")
	r := Release{Src: src, Version: "v0.2.0", Commit: "abc123", Time: time.Unix(1796153905, 0).UTC()}
	mods, err := r.Modules()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteCommit(); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := WriteProxy(mods, out, r.Time); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ path, version string }{{"halolang.dev/halo", "v0.2.0"}, {"halolang.dev/halo/sdk", "v0.1.0"}, {"halolang.dev/halo/proto", "v0.1.0"}} {
		at := filepath.Join(out, m.path, "@v")
		if b, _ := os.ReadFile(filepath.Join(at, "list")); string(b) != m.version+"\n" {
			t.Errorf("%s list: %q", m.path, b)
		}
		if b, _ := os.ReadFile(filepath.Join(at, m.version+".info")); !strings.Contains(string(b), `"Version":"`+m.version+`","Time":"2026-`) {
			t.Errorf("%s info: %s", m.path, b)
		}
		mod, _ := os.ReadFile(filepath.Join(at, m.version+".mod"))
		if strings.Contains(string(mod), "replace") {
			t.Errorf("%s go.mod keeps a replace:\n%s", m.path, mod)
		}
	}
	zr, err := zip.OpenReader(filepath.Join(out, "halolang.dev/halo/@v/v0.2.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	got := strings.Join(names, " ")
	if strings.Contains(got, "/sdk/") || strings.Contains(got, "/proto/") || !strings.Contains(got, "halolang.dev/halo@v0.2.0/cmd/halo/main.go") {
		t.Errorf("host zip holds %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "cmd/halo/internal/version/release.go")); !strings.Contains(string(b), `const releaseCommit = "abc123"`) {
		t.Errorf("release.go: %s", b)
	}
	sum, _ := os.ReadFile(filepath.Join(src, "go.sum"))
	for _, want := range []string{"halolang.dev/halo/proto v0.1.0 h1:", "halolang.dev/halo/proto v0.1.0/go.mod h1:", "halolang.dev/halo/sdk v0.1.0 h1:", "halolang.dev/halo/sdk v0.1.0/go.mod h1:"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("the host's go.sum has no %q:\n%s", want, sum)
		}
	}
	if sdkSum, _ := os.ReadFile(filepath.Join(src, "sdk/go.sum")); !strings.Contains(string(sdkSum), "halolang.dev/halo/proto v0.1.0 h1:") {
		t.Errorf("the sdk's go.sum: %s", sdkSum)
	}
	site := t.TempDir()
	if err := WriteSite(site, "https://halolang.dev/goproxy", mods); err != nil {
		t.Fatal(err)
	}
	for _, page := range []string{"halo/index.html", "halo/cmd/halo/index.html", "halo/sdk/index.html", "halo/proto/index.html"} {
		b, err := os.ReadFile(filepath.Join(site, page))
		if err != nil || !strings.Contains(string(b), `<meta name="go-import" content="halolang.dev/halo mod https://halolang.dev/goproxy">`) {
			t.Errorf("%s: %s %v", page, b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(site, "halo/proto/testdata")); !os.IsNotExist(err) {
		t.Error("a page for testdata")
	}
}

// What a release cannot publish is refused before anything is written.
func TestModulesRefuses(t *testing.T) {
	if _, err := (Release{Src: stage(t, hostMod, "0.1.0"), Version: "v0.2"}).Modules(); err == nil || !strings.Contains(err.Error(), "not a release version") {
		t.Errorf("a bad version: %v", err)
	}
	if _, err := (Release{Src: stage(t, hostMod, "0.1.1"), Version: "v0.2.0"}).Modules(); err == nil || !strings.Contains(err.Error(), "requires halolang.dev/halo/sdk v0.1.0, but the release publishes v0.1.1") {
		t.Errorf("an SDK version the host does not require: %v", err)
	}
	src := stage(t, hostMod+"\nreplace example.com/fork => ./fork\n", "0.1.0")
	r := Release{Src: src, Version: "v0.2.0"}
	mods, err := r.Modules()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteProxy(mods, t.TempDir(), time.Now()); err == nil || !strings.Contains(err.Error(), "replaces example.com/fork: a released go.mod may replace nothing") {
		t.Errorf("a fork by replace: %v", err)
	}
}
