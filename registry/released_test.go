package registry

import (
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"halolang.dev/halo/pkgmgr"
	"halolang.dev/halo/registry/generate"
)

// A halo built without registry/local (a plain go build) offers the module packages of the
// latest release from registry/released/: the index names each by its URL in the release
// folder, with its sha256, signed by the release's key, whose public half halo embeds.
// halo add downloads the file and holds it to both; a file that differs is refused.
func TestReleasedPackagesAreDownloaded(t *testing.T) {
	src := t.TempDir()
	plat := runtime.GOOS + "/" + runtime.GOARCH
	writeFile(t, filepath.Join(src, "clock", pkgmgr.ManifestFile), `{"name":"clock","version":"1.0.0","description":"A clock","publisher":"Halo",
		"providers":{"Clock":{"kind":"module","description":"d","executables":{"`+plat+`":"bin/clock"}}}}`)
	writeFile(t, filepath.Join(src, "clock", "bin", "clock"), "#!/bin/sh\n")
	key, err := pkgmgr.GenerateSignKey()
	if err != nil {
		t.Fatal(err)
	}
	built := t.TempDir()
	var served []byte
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/dl/clock-1.0.0.halotool" {
			http.NotFound(w, r)
			return
		}
		w.Write(served)
	}))
	defer srv.Close()
	if err := generate.GenerateLocal(context.Background(), src, built, time.Unix(1796153905, 0), pkgmgr.PackOptions{}, key, srv.URL+"/dl/"); err != nil {
		t.Fatal(err)
	}
	served, err = os.ReadFile(filepath.Join(built, "packages", "clock-1.0.0.halotool"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("index.json")
	if err != nil {
		t.Fatal(err)
	}
	record, err := os.ReadFile(filepath.Join(built, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(record), `"file": "`+srv.URL+`/dl/clock-1.0.0.halotool"`) {
		t.Fatalf("the release's record names no URL:\n%s", record)
	}
	fsys := fstest.MapFS{
		"index.json":          {Data: committed},
		"released/index.json": {Data: record},
		"released/build.pub":  {Data: key.PublicKeyFile()},
	}
	def, err := Merge(fsys)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fs.ReadFile(def, "index.json")
	idx, err := pkgmgr.ParseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	if p := idx.Packages["clock"]; p == nil || !strings.HasPrefix(p.Versions["1.0.0"].File, "https://") || idx.Packages["stripe"] == nil {
		t.Fatalf("the default registry without local/: %s", b)
	}
	keys := builtInKeys(fsys)
	if len(keys) != 2 || keys[1].KeyID != key.KeyID() {
		t.Fatalf("built-in keys %+v", keys)
	}
	project := func() *pkgmgr.Project {
		dir := t.TempDir()
		return &pkgmgr.Project{Dir: dir, TrustFile: filepath.Join(t.TempDir(), "trust.json"), BuiltInKeys: keys,
			Registries: pkgmgr.RegistryOptions{Default: def, Client: srv.Client()}}
	}
	ip, err := project().Add(context.Background(), "clock", pkgmgr.AddOptions{Trust: true})
	if err != nil {
		t.Fatal(err)
	}
	if e := ip.Entry; e.Source != "registry:default#clock@1.0.0" || e.Signature == nil || e.Signature.KeyID != key.KeyID() {
		t.Fatalf("locked %+v", e)
	}
	// The release folder's file replaced: refused, before anything is written.
	good := served
	served = append(append([]byte(nil), good...), ' ')
	pr := project()
	if _, err := pr.Add(context.Background(), "clock", pkgmgr.AddOptions{Trust: true}); pkgmgr.Code(err) != pkgmgr.CodeIntegrity {
		t.Fatalf("a changed file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(pr.Dir, "halo.lock")); !os.IsNotExist(err) {
		t.Error("a refused package left a lock")
	}
	served = good

	// A package built on this machine comes before the release's.
	fsys["local/index.json"] = &fstest.MapFile{Data: []byte(strings.Replace(string(record), srv.URL+"/dl/", "packages/", 1))}
	def, err = Merge(fsys)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = fs.ReadFile(def, "index.json")
	if !strings.Contains(string(b), `"file": "local/packages/clock-1.0.0.halotool"`) {
		t.Errorf("registry/local does not come first:\n%s", b)
	}
}

func writeFile(t *testing.T, file, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}
