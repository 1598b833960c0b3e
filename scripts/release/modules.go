package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// Root is the module path of the host module; the SDK and the plugin contract are below it.
const Root = "halolang.dev/halo"

// A Module is one of the repository's modules, in the staged copy.
type Module struct {
	Path    string // halolang.dev/halo/sdk
	Dir     string // the folder in the staged copy
	Version string // v0.1.0
}

// A Release says what to publish.
type Release struct {
	Src     string    // the staged copy of the repository
	Version string    // the host module's version, with its v
	Commit  string    // the commit it is of
	Time    time.Time // the commit's time, for the .info files
}

func modulesCmd(args []string) error {
	fs := flag.NewFlagSet("modules", flag.ContinueOnError)
	src := fs.String("src", "", "the staged copy of the repository (rewritten in place)")
	version := fs.String("version", "", "the release, as 0.2.0")
	commit := fs.String("commit", "", "the commit the release is of")
	epoch := fs.Int64("time", 0, "the commit's time, in seconds since 1970")
	goproxy := fs.String("goproxy", "", "the folder to write the module proxy tree into")
	site := fs.String("site", "", "the folder to write the go-import pages into")
	proxyURL := fs.String("proxy", "", "the URL the module proxy tree is served at")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *src == "" || *version == "" || *goproxy == "" || *site == "" || *proxyURL == "" {
		return fmt.Errorf("modules needs -src, -version, -goproxy, -site and -proxy")
	}
	r := Release{Src: *src, Version: "v" + *version, Commit: *commit, Time: time.Unix(*epoch, 0).UTC()}
	mods, err := r.Modules()
	if err != nil {
		return err
	}
	if err := r.WriteCommit(); err != nil {
		return err
	}
	if err := WriteProxy(mods, *goproxy, r.Time); err != nil {
		return err
	}
	return WriteSite(*site, *proxyURL, mods)
}

// Modules reads the three modules' versions from the staged copy: the host's is the release,
// the SDK's is sdk.Version (sdk/version.go), the contract's is the one sdk/go.mod requires.
// The host's go.mod must require both at those versions, as `halo plugin init` writes them.
func (r Release) Modules() ([]Module, error) {
	if semver.Canonical(r.Version) != r.Version {
		return nil, fmt.Errorf("version %q is not a release version like 1.2.3 or 1.2.3-rc.1", strings.TrimPrefix(r.Version, "v"))
	}
	b, err := os.ReadFile(filepath.Join(r.Src, "sdk", "version.go"))
	if err != nil {
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^const Version = "([^"]+)"$`).FindSubmatch(b)
	if m == nil {
		return nil, fmt.Errorf("sdk/version.go has no const Version")
	}
	sdkVersion := "v" + string(m[1])
	sdkMod, err := readMod(filepath.Join(r.Src, "sdk", "go.mod"))
	if err != nil {
		return nil, err
	}
	protoVersion := required(sdkMod, Root+"/proto")
	if protoVersion == "" {
		return nil, fmt.Errorf("sdk/go.mod does not require %s/proto", Root)
	}
	host, err := readMod(filepath.Join(r.Src, "go.mod"))
	if err != nil {
		return nil, err
	}
	for _, want := range []struct{ path, version string }{{Root + "/sdk", sdkVersion}, {Root + "/proto", protoVersion}} {
		if got := required(host, want.path); got != want.version {
			return nil, fmt.Errorf("go.mod requires %s %s, but the release publishes %s: make them agree", want.path, got, want.version)
		}
	}
	return []Module{
		{Path: Root + "/proto", Dir: filepath.Join(r.Src, "proto"), Version: protoVersion},
		{Path: Root + "/sdk", Dir: filepath.Join(r.Src, "sdk"), Version: sdkVersion},
		{Path: Root, Dir: r.Src, Version: r.Version},
	}, nil
}

func readMod(file string) (*modfile.File, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(file, b, nil)
}

func required(f *modfile.File, path string) string {
	for _, r := range f.Require {
		if r.Mod.Path == path {
			return r.Mod.Version
		}
	}
	return ""
}

// WriteCommit writes the release's commit into the host module's version package, so a halo
// built by go install from the released module knows it (cmd/halo/internal/version).
func (r Release) WriteCommit() error {
	file := filepath.Join(r.Src, "cmd", "halo", "internal", "version", "release.go")
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	line := regexp.MustCompile(`(?m)^const releaseCommit = ""$`)
	if !line.Match(b) {
		return fmt.Errorf("%s has no empty releaseCommit to fill in", file)
	}
	return os.WriteFile(file, line.ReplaceAll(b, []byte(fmt.Sprintf("const releaseCommit = %q", r.Commit))), 0o644)
}

// WriteProxy writes the module proxy tree of mods into dir, in order: each module's go.mod
// loses its replace directives for the repository's own modules, and its go.sum gets the
// released modules it requires, so the zips hold what `go mod tidy` would write against the
// published versions.
func WriteProxy(mods []Module, dir string, t time.Time) error {
	sums := map[string][]string{} // module path → its go.sum lines
	for _, m := range mods {
		if err := rewriteGoMod(m, mods, sums); err != nil {
			return err
		}
		at := filepath.Join(dir, filepath.FromSlash(m.Path), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return err
		}
		zipFile := filepath.Join(at, m.Version+".zip")
		if err := writeZip(zipFile, m); err != nil {
			return err
		}
		gomod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
		if err != nil {
			return err
		}
		info, _ := json.Marshal(struct {
			Version string
			Time    string
		}{m.Version, t.Format(time.RFC3339)})
		for name, data := range map[string][]byte{m.Version + ".mod": gomod, m.Version + ".info": append(info, '\n'), "list": []byte(m.Version + "\n")} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return err
			}
		}
		h1, err := dirhash.HashZip(zipFile, dirhash.Hash1)
		if err != nil {
			return err
		}
		modH1, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gomod)), nil })
		if err != nil {
			return err
		}
		sums[m.Path] = []string{
			fmt.Sprintf("%s %s %s", m.Path, m.Version, h1),
			fmt.Sprintf("%s %s/go.mod %s", m.Path, m.Version, modH1),
		}
	}
	return nil
}

// rewriteGoMod drops m's replace directives for the repository's modules, requires them at
// the released versions, and adds their go.sum lines (sums holds those of the modules written
// so far: a module's own requirements come before it in mods).
func rewriteGoMod(m Module, mods []Module, sums map[string][]string) error {
	file := filepath.Join(m.Dir, "go.mod")
	f, err := readMod(file)
	if err != nil {
		return err
	}
	for _, rep := range append([]*modfile.Replace(nil), f.Replace...) {
		if !strings.HasPrefix(rep.Old.Path, Root+"/") {
			return fmt.Errorf("%s replaces %s: a released go.mod may replace nothing (go install refuses it)", file, rep.Old.Path)
		}
		if err := f.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
			return err
		}
	}
	var lines []string
	for _, dep := range mods {
		if dep.Path == m.Path || required(f, dep.Path) == "" {
			continue
		}
		if err := f.AddRequire(dep.Path, dep.Version); err != nil {
			return err
		}
		if sums[dep.Path] == nil {
			return fmt.Errorf("%s requires %s, which is published after it", m.Path, dep.Path)
		}
		lines = append(lines, sums[dep.Path]...)
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, out, 0o644); err != nil {
		return err
	}
	if len(lines) == 0 {
		return nil
	}
	sumFile := filepath.Join(m.Dir, "go.sum")
	old, err := os.ReadFile(sumFile)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	all := strings.Split(strings.TrimSpace(string(old)), "\n")
	all = append(all, lines...)
	seen := map[string]bool{}
	var keep []string
	for _, l := range all {
		if l != "" && !seen[l] {
			seen[l] = true
			keep = append(keep, l)
		}
	}
	sort.Strings(keep)
	return os.WriteFile(sumFile, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

func writeZip(file string, m Module) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".zip-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := modzip.CreateFromDir(tmp, module.Version{Path: m.Path, Version: m.Version}, m.Dir); err != nil {
		tmp.Close()
		return fmt.Errorf("zip %s@%s: %w", m.Path, m.Version, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// goImport is the page the project's domain serves at every import path of its modules:
// `go get` reads the go-import meta tag, whose "mod" form sends it to a module proxy (the
// release's goproxy/ tree, wherever it is uploaded) rather than to a version control system.
var goImport = template.Must(template.New("").Parse(`<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta name="go-import" content="{{.Root}} mod {{.Proxy}}">
<title>{{.Path}}</title>
</head>
<body>
<p><code>{{.Path}}</code> is a Go package of Halo. Install halo with
<code>go install {{.Root}}/cmd/halo@latest</code>; plugin authors require
<code>{{.Root}}/sdk</code>.</p>
</body>
</html>
`))

// WriteSite writes the go-import page at every folder of the modules that holds a Go package,
// and at each module's root, as site/<path below the domain>/index.html.
func WriteSite(site, proxy string, mods []Module) error {
	dirs := map[string]bool{}
	for _, m := range mods {
		dirs[m.Path] = true
		err := filepath.WalkDir(m.Dir, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if p != m.Dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
					return filepath.SkipDir
				}
				if p != m.Dir {
					if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
						return filepath.SkipDir // another module, walked on its own
					}
				}
				return nil
			}
			if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				rel, err := filepath.Rel(m.Dir, filepath.Dir(p))
				if err != nil {
					return err
				}
				dirs[path.Join(m.Path, filepath.ToSlash(rel))] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	host, _, _ := strings.Cut(Root, "/")
	for importPath := range dirs {
		rel := strings.TrimPrefix(importPath, host+"/")
		out := filepath.Join(site, filepath.FromSlash(rel), "index.html")
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		var b bytes.Buffer
		if err := goImport.Execute(&b, struct{ Root, Proxy, Path string }{Root, proxy, importPath}); err != nil {
			return err
		}
		if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
