package pkgmgr

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CheckPlatform reports, as a PACKAGE_PLATFORM error, every module provider of m that has no
// plugin executable for platform ("linux/amd64"). A package without module providers passes.
func (m *Manifest) CheckPlatform(platform string) error {
	var missing []string
	for _, name := range m.ProviderNames() {
		p := m.Providers[name]
		if p.Kind != KindModule {
			continue
		}
		if _, ok := p.Executables[platform]; !ok {
			missing = append(missing, fmt.Sprintf("%s (it has %s)", name, strings.Join(sortedKeys(p.Executables), ", ")))
		}
	}
	if len(missing) > 0 {
		return errorf(CodePlatform, "%s@%s has no plugin executable for %s: %s", m.Name, m.Version, platform, strings.Join(missing, "; "))
	}
	return nil
}

// ModuleExecutables groups m's module providers by the executable that serves them on
// platform: one plugin may serve several providers. Providers without an executable for
// platform are left out (CheckPlatform reports them).
func (m *Manifest) ModuleExecutables(platform string) map[string][]string {
	out := map[string][]string{}
	for _, name := range m.ProviderNames() {
		p := m.Providers[name]
		if p.Kind != KindModule {
			continue
		}
		if rel, ok := p.Executables[platform]; ok {
			out[rel] = append(out[rel], name)
		}
	}
	return out
}

// Described is the file beside an installed package's files in which halo add and halo install
// keep what its plugin serves, so `halo tools` can list a module's methods without starting
// it. A package cannot hold a file of that name (dot-files are refused), and the checks of an
// installed folder leave it out.
const Described = ".described.json"

// MaxDescriptionSize bounds a description file; a plugin's description is data it sent.
const MaxDescriptionSize = 4 << 20

// A Description is what a package's plugins served when they were described, for the package
// with checksum SHA256.
type Description struct {
	SHA256 string `json:"sha256"`
	// Providers maps each provider name to what its plugin said about it (host/tool/packages
	// owns the shape: pkgmgr knows files, not how a provider is called).
	Providers map[string]json.RawMessage `json:"providers"`
}

// WriteDescription writes d into the installed package folder dir, replacing any earlier one.
func WriteDescription(dir string, d *Description) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if len(b) > MaxDescriptionSize {
		return fmt.Errorf("the description of %s is %d bytes, more than %d", filepath.Base(dir), len(b), MaxDescriptionSize)
	}
	tmp, err := os.CreateTemp(dir, ".described-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, Described))
}

// ReadDescription reads the description in the installed package folder dir, and returns nil
// when there is none, or when it was made for another checksum than sha256 (the package
// changed since) or cannot be read: a description is a cache, never a reason to fail.
func ReadDescription(dir, sha256 string) *Description {
	path := filepath.Join(dir, Described)
	// Lstat: a symlink planted in its place is not followed.
	if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() || info.Size() > MaxDescriptionSize {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > MaxDescriptionSize {
		return nil
	}
	var d Description
	if json.Unmarshal(b, &d) != nil || d.SHA256 != sha256 {
		return nil
	}
	return &d
}
