// Package generate rebuilds the default registry (registry/index.json, packages/ and local/)
// from the package folders in registry/src. registry/gen runs it; the staleness test in
// registry/ runs it into a temporary folder and compares.
package generate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"halolang.dev/halo/pkgmgr"
)

// IsLocal reports whether a source package is built per machine: it has a module provider,
// whose executables are not committed.
func IsLocal(m *pkgmgr.Manifest) bool {
	for _, p := range m.Providers {
		if p.Kind == pkgmgr.KindModule {
			return true
		}
	}
	return false
}

// Generate rebuilds outDir/index.json and outDir/packages/ from the package folders in srcDir,
// skipping module packages (GenerateLocal builds those). A version whose file is unchanged
// keeps its publishedAt and its signature from the index already in outDir, so regenerating
// an up-to-date registry changes nothing. sign, when not nil, signs every package (the
// project's key: see keys.go); without it a changed package is left unsigned, which
// TestCommittedRegistryIsSigned refuses.
func Generate(ctx context.Context, srcDir, outDir string, now time.Time, sign *pkgmgr.SignKey) error {
	return generate(ctx, srcDir, outDir, now, false, pkgmgr.PackOptions{}, sign, "")
}

// GenerateLocal builds the module packages of srcDir for the given platforms into outDir
// (registry/local), with opts.Build compiling their plugins, and signs them with sign.
// baseURL, when not empty, is where a release publishes the package files: the index then
// names each by its absolute URL (baseURL/name-version.halotool), so a halo that embeds the
// index without the files (a release's) downloads them, held to the sha256 it lists.
func GenerateLocal(ctx context.Context, srcDir, outDir string, now time.Time, opts pkgmgr.PackOptions, sign *pkgmgr.SignKey, baseURL string) error {
	return generate(ctx, srcDir, outDir, now, true, opts, sign, baseURL)
}

func generate(ctx context.Context, srcDir, outDir string, now time.Time, local bool, opts pkgmgr.PackOptions, sign *pkgmgr.SignKey, baseURL string) error {
	prev := &pkgmgr.Index{Packages: map[string]*pkgmgr.IndexPackage{}}
	if b, err := os.ReadFile(filepath.Join(outDir, "index.json")); err == nil {
		if p, err := pkgmgr.ParseIndex(b); err == nil {
			prev = p
		}
	}
	entries, err := os.ReadDir(srcDir)
	if err != nil {
		return err
	}
	idx := &pkgmgr.Index{Format: pkgmgr.RegistryFormat, Packages: map[string]*pkgmgr.IndexPackage{}}
	written := map[string][]byte{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(srcDir, e.Name())
		mb, err := os.ReadFile(filepath.Join(dir, pkgmgr.ManifestFile))
		if err != nil {
			return err
		}
		m, err := pkgmgr.ParseManifest(mb)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		if m.Name != e.Name() {
			return fmt.Errorf("%s: the folder must be named after the package (%s)", dir, m.Name)
		}
		if IsLocal(m) != local {
			continue
		}
		pkg, err := pkgmgr.PackDir(ctx, dir, opts)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		rel := "packages/" + pkg.FileName()
		published := now.UTC().Format("2006-01-02T15:04:05.000Z")
		var sig *pkgmgr.Signature
		if pp, ok := prev.Packages[m.Name]; ok {
			if pv, ok := pp.Versions[m.Version]; ok && pv.SHA256 == pkg.SHA256 {
				published, sig = pv.PublishedAt, pv.Signature
			}
		}
		if sign != nil {
			if sig, err = sign.Sign(pkg, now); err != nil {
				return fmt.Errorf("%s: %w", e.Name(), err)
			}
		}
		file := rel
		if baseURL != "" {
			file = strings.TrimSuffix(baseURL, "/") + "/" + pkg.FileName()
		}
		idx.Packages[m.Name] = &pkgmgr.IndexPackage{
			Description: m.Description, Publisher: m.Publisher, Homepage: m.Homepage, License: m.License, Latest: m.Version,
			Versions: map[string]*pkgmgr.IndexVersion{m.Version: {
				File: file, SHA256: pkg.SHA256, Providers: m.ProviderNames(),
				Permissions: pkg.Permissions(), PublishedAt: published, Signature: sig,
			}},
		}
		written[rel] = pkg.Bytes
	}
	out, err := idx.Marshal()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(outDir, "packages"), 0o755); err != nil {
		return err
	}
	// Files of packages that are gone are removed; the rest are rewritten.
	old, _ := filepath.Glob(filepath.Join(outDir, "packages", "*.halotool"))
	for _, f := range old {
		if _, keep := written["packages/"+filepath.Base(f)]; !keep {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(written))
	for n := range written {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(outDir, filepath.FromSlash(n)), written[n], 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(outDir, "index.json"), out, 0o644)
}
