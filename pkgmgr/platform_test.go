package pkgmgr

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const twoModules = `{"name":"clocks","version":"1.0.0","description":"d","providers":{
	"Clock":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/clocks","darwin/arm64":"bin/clocks-mac"}},
	"Alarm":{"kind":"module","description":"d","executables":{"linux/amd64":"bin/clocks"}},
	"Web":{"kind":"http","description":"d","baseUrl":"https://api.example.com","methods":[{"name":"get","description":"d","effect":"read","http":{"method":"GET","path":"/x"}}]}}}`

func TestCheckPlatform(t *testing.T) {
	m, err := ParseManifest([]byte(twoModules))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckPlatform("linux/amd64"); err != nil {
		t.Errorf("linux/amd64: %v", err)
	}
	err = m.CheckPlatform("darwin/arm64")
	if Code(err) != CodePlatform || !strings.Contains(err.Error(), "Alarm (it has linux/amd64)") || strings.Contains(err.Error(), "Clock") {
		t.Errorf("darwin/arm64: %v", err)
	}
	if got := m.ModuleExecutables("linux/amd64"); len(got) != 1 || strings.Join(got["bin/clocks"], ",") != "Alarm,Clock" {
		t.Errorf("one executable serves both: %v", got)
	}
	// http and mcp packages run nothing of their own: any platform will do.
	h, _ := ParseManifest([]byte(httpManifest("acme", "1.0.0", "Acme")))
	if err := h.CheckPlatform("plan9/amd64"); err != nil || len(h.ModuleExecutables("linux/amd64")) != 0 {
		t.Errorf("http: %v", err)
	}
}

func TestDescription(t *testing.T) {
	dir := t.TempDir()
	if ReadDescription(dir, "abc") != nil {
		t.Fatal("a description out of nothing")
	}
	d := &Description{SHA256: "abc", Providers: map[string]json.RawMessage{"Clock": json.RawMessage(`{"methods":[]}`)}}
	if err := WriteDescription(dir, d); err != nil {
		t.Fatal(err)
	}
	got := ReadDescription(dir, "abc")
	var clock struct{ Methods []any }
	if got == nil || json.Unmarshal(got.Providers["Clock"], &clock) != nil || clock.Methods == nil {
		t.Fatalf("read back %+v", got)
	}
	// For another checksum (the package changed since), it is not used.
	if ReadDescription(dir, "def") != nil {
		t.Error("a description of another package was used")
	}
	// Nor is one that is not JSON, too large, or a symlink someone planted.
	os.WriteFile(filepath.Join(dir, Described), []byte("{"), 0o644)
	if ReadDescription(dir, "abc") != nil {
		t.Error("a broken description was used")
	}
	other := filepath.Join(t.TempDir(), "elsewhere.json")
	b, _ := json.Marshal(d)
	os.WriteFile(other, b, 0o644)
	os.Remove(filepath.Join(dir, Described))
	if err := os.Symlink(other, filepath.Join(dir, Described)); err != nil {
		t.Fatal(err)
	}
	if ReadDescription(dir, "abc") != nil {
		t.Error("a symlinked description was followed")
	}
	os.Remove(filepath.Join(dir, Described))
	os.WriteFile(filepath.Join(dir, Described), append(b, make([]byte, MaxDescriptionSize)...), 0o644)
	if ReadDescription(dir, "abc") != nil {
		t.Error("an oversized description was read")
	}
}

// The description beside an installed package is not package content: loading the project
// neither rewrites the folder for it nor removes it.
func TestDescriptionSurvivesLoad(t *testing.T) {
	proj := t.TempDir()
	src := t.TempDir()
	writeTree(t, src, map[string]string{ManifestFile: httpManifest("acme", "1.0.0", "Acme"), "README.md": "readme"})
	pr := &Project{Dir: proj}
	ip, err := pr.Add(context.Background(), src, AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteDescription(ip.Dir, &Description{SHA256: ip.Entry.SHA256}); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, proj)
	for i := 0; i < 2; i++ { // the quick check, then (with the listing cache cold) the full one
		if _, err := pr.Load(context.Background()); err != nil {
			t.Fatal(err)
		}
		if after := hashTree(t, proj); after != before {
			t.Fatalf("load changed the project:\n%s\nwas\n%s", after, before)
		}
	}
	tools := os.DirFS(filepath.Dir(ip.Dir))
	if !dirMatches(tools, ip.Name, ip.Package) || !quickMatches(tools, ip.Name, ip.Package) {
		t.Error("the folder with its description does not match its package")
	}
	// Anything else added to the folder still does not match.
	os.WriteFile(filepath.Join(ip.Dir, "extra.txt"), []byte("x"), 0o644)
	if dirMatches(tools, ip.Name, ip.Package) || quickMatches(tools, ip.Name, ip.Package) {
		t.Error("an extra file went unnoticed")
	}
}

// Add calls Check only for a package it may install, and a refusal changes nothing. An
// untrusted package's refusal carries what it can reach.
func TestAddCheck(t *testing.T) {
	proj := t.TempDir()
	src := t.TempDir()
	writeTree(t, src, map[string]string{ManifestFile: mcpCommandManifest("runner", "1.0.0", "Runner"), "README.md": "readme"})
	pr := &Project{Dir: proj}
	called := 0
	check := func(context.Context, *Package) error { called++; return errorf(CodeInvalid, "no") }
	_, err := pr.Add(context.Background(), src, AddOptions{Check: check})
	var pe *Error
	if Code(err) != CodeUntrusted || called != 0 {
		t.Fatalf("untrusted: %v, check called %d times", err, called)
	}
	if !asError(err, &pe) || pe.Permissions == nil || strings.Join(pe.Permissions.Spawn, ",") != "docker" {
		t.Errorf("the refusal does not say what the package reaches: %+v", pe)
	}
	before := hashTree(t, proj)
	if _, err := pr.Add(context.Background(), src, AddOptions{Trust: true, Check: check}); Code(err) != CodeInvalid || called != 1 {
		t.Fatalf("check: %v, called %d times", err, called)
	}
	if after := hashTree(t, proj); after != before {
		t.Errorf("a refused check changed the project:\n%s", after)
	}
}

func asError(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}
