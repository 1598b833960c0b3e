package registry

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"halolang.dev/halo/pkgmgr"
)

// Every package of the default registry is signed: the committed ones with the project's
// key, whose public half is built in; world-time with the key of its local build. halo add
// installs them all without asking, and records who signed.
func TestDefaultRegistryIsSigned(t *testing.T) {
	def, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fs.ReadFile(def, "index.json")
	idx, err := pkgmgr.ParseIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	keys := BuiltInKeys()
	if keys[0].KeyID != "4892CD5CBBF08BD6" || keys[0].Publisher != Publisher {
		t.Fatalf("built-in keys %+v", keys)
	}
	dir := t.TempDir()
	pr := &pkgmgr.Project{Dir: dir, Registries: pkgmgr.RegistryOptions{Default: def}, TrustFile: filepath.Join(dir, "..", "trust.json"), BuiltInKeys: keys}
	for name, p := range idx.Packages {
		for version, v := range p.Versions {
			if v.Signature == nil {
				t.Errorf("%s@%s is not signed: sign it with the project's key (go run ./registry/gen -sign KEY)", name, version)
				continue
			}
			ip, err := pr.Add(context.Background(), name+"@"+version, pkgmgr.AddOptions{Trust: true})
			if err != nil {
				t.Errorf("%s@%s: %v", name, version, err)
				continue
			}
			if s := ip.Entry.Signature; s == nil || s.Publisher != Publisher {
				t.Errorf("%s@%s recorded signature %+v", name, version, s)
			}
		}
	}
}

// The default registry's first-party packages are known to be signed by Halo, so that an
// unsigned copy of one from another registry is refused (issue 27 item 7).
func TestSignedPackages(t *testing.T) {
	def, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := SignedPackages(def)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"stripe", "github-mcp", "jira"} {
		if signed[name] != Publisher {
			t.Errorf("%s: %q, want %q", name, signed[name], Publisher)
		}
	}
}
