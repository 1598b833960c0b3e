package packages

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/pkgmgr"
)

// described is one provider in a package's description (pkgmgr.Description.Providers).
type described struct {
	Description string        `json:"description"`
	Methods     []tool.Method `json:"methods"`
}

// Describe checks a module package against its plugins before it is packed or installed: it
// must have an executable for cfg.Platform (PACKAGE_PLATFORM), and each executable, started
// from a temporary unpacked copy of pkg (pinned to the package's checksum, in the sandbox
// when cfg.Executable is set), must serve every provider the manifest names for it
// (PACKAGE_INVALID otherwise). It returns what the plugins serve, for halo add to keep
// beside the installed package (pkgmgr.WriteDescription). A package without module providers
// returns nil and starts nothing. Only call it for a package that may run: packed by its
// author, or trusted.
func Describe(ctx context.Context, pkg *pkgmgr.Package, cfg Config) (*pkgmgr.Description, error) {
	if err := pkg.Manifest.CheckPlatform(cfg.withDefaults().Platform); err != nil {
		return nil, err
	}
	if len(pkg.Manifest.ModuleExecutables(cfg.withDefaults().Platform)) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "halo-describe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, pkg.Manifest.Name)
	if err := pkg.Unpack(dir); err != nil {
		return nil, err
	}
	return describeIn(ctx, pkg, dir, cfg)
}

// DescribeInstalled is Describe for a package installed and verified in ip.Dir (halo install
// has just checked it against the lock): the plugins start from that folder.
func DescribeInstalled(ctx context.Context, ip *pkgmgr.InstalledPackage, cfg Config) (*pkgmgr.Description, error) {
	return describeIn(ctx, ip.Package, ip.Dir, cfg)
}

func describeIn(ctx context.Context, pkg *pkgmgr.Package, dir string, cfg Config) (*pkgmgr.Description, error) {
	cfg = cfg.withDefaults()
	m := pkg.Manifest
	if err := m.CheckPlatform(cfg.Platform); err != nil {
		return nil, err
	}
	groups := m.ModuleExecutables(cfg.Platform)
	if len(groups) == 0 {
		return nil, nil
	}
	d := &pkgmgr.Description{SHA256: pkg.SHA256, Providers: map[string]json.RawMessage{}}
	for _, rel := range sortedKeys(groups) {
		names := groups[rel]
		cmd, err := moduleCommand(pkg, dir, rel, names[0], cfg)
		if err != nil {
			return nil, err
		}
		client := plugin.New(cmd, plugin.Options{Logger: cfg.Logger})
		specs, err := client.Describe(ctx)
		client.Close()
		if err != nil {
			return nil, &pkgmgr.Error{Code: pkgmgr.CodeInvalid, Message: fmt.Sprintf("%s@%s: the plugin %s did not start and describe itself", m.Name, m.Version, rel), Err: err}
		}
		var served []string
		for _, s := range specs {
			served = append(served, s.Name)
		}
		for _, name := range names {
			i := slices.IndexFunc(specs, func(s plugin.Spec) bool { return s.Name == name })
			if i < 0 {
				return nil, &pkgmgr.Error{Code: pkgmgr.CodeInvalid, Message: fmt.Sprintf("%s@%s: halo-tool.json names provider %s, but its plugin %s serves %s", m.Name, m.Version, name, rel, orNone(served))}
			}
			b, err := json.Marshal(described{Description: specs[i].Description, Methods: specs[i].Methods})
			if err != nil {
				return nil, err
			}
			d.Providers[name] = b
		}
	}
	return d, nil
}

// Described returns, for halo tools, the methods of every module provider installed in the
// project at dir as its plugin described them at halo add or halo install, by provider name.
// It starts nothing. It is for display only: the description sits in the project's .halo
// folder, which a repository can ship, so a run never takes methods or effects from it
// (calls and policies use what the running plugin says).
func Described(dir string) map[string][]tool.Method {
	lock, err := pkgmgr.ReadLock(dir)
	if err != nil {
		return nil
	}
	pr := &pkgmgr.Project{Dir: dir}
	out := map[string][]tool.Method{}
	for _, name := range lock.Names() {
		e := lock.Tools[name]
		d := pkgmgr.ReadDescription(pr.PackageDir(name), e.SHA256)
		if d == nil {
			continue
		}
		for _, prov := range e.Providers {
			var p described
			if raw, ok := d.Providers[prov]; ok && json.Unmarshal(raw, &p) == nil && p.Methods != nil {
				out[prov] = p.Methods
			}
		}
	}
	return out
}

// moduleCommand is the plugin command of the executable rel in the unpacked package folder
// dir, pinned to the checksum the package lists for it, with only the manifest's variables,
// and confined to the folder when cfg.Executable is set. name is a provider it serves.
func moduleCommand(pkg *pkgmgr.Package, dir, rel, name string, cfg Config) (plugin.Command, error) {
	m := pkg.Manifest
	f, ok := pkg.File(rel)
	if !ok {
		return plugin.Command{}, &pkgmgr.Error{Code: pkgmgr.CodeIntegrity, Message: fmt.Sprintf("package %s lacks %s", m.Name, rel)}
	}
	// The pin is the checksum the verified package lists for the executable; the plugin
	// client hashes the file on disk against it before every start.
	sum, err := hex.DecodeString(f.SHA256)
	if err != nil || len(sum) != sha256.Size {
		return plugin.Command{}, &pkgmgr.Error{Code: pkgmgr.CodeIntegrity, Message: fmt.Sprintf("package %s: no checksum for %s", m.Name, rel)}
	}
	spec := m.Providers[name]
	cmd := plugin.Command{
		Name:   name,
		Path:   filepath.Join(dir, filepath.FromSlash(rel)),
		Dir:    dir,
		Env:    spec.Env,
		SHA256: sum,
		Getenv: cfg.Getenv,
	}
	if cfg.Executable != "" {
		cmd.Sandbox = ModuleSandbox(dir, cmd.Path, spec)
	}
	return cmd, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no provider"
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
