package pkgmgr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"halolang.dev/halo/pkgmgr/statedir"
)

// A Project is the package state of one project folder: halo.lock and .halo/tools/, and the
// user's trust in it, kept in the user's trust file. Every change it makes is all or
// nothing: new files are staged in a temporary folder inside .halo and renamed into place,
// halo.lock and the trust file are snapshotted first, and any failure puts back exactly what
// was there.
type Project struct {
	// Dir is the project folder.
	Dir string
	// Registries says how to reach registries (Dir there is ignored: it is this Dir).
	Registries RegistryOptions
	// Registry is the registry for name specs: --registry, HALO_REGISTRY, halo.json's
	// "registry", or "" for the default.
	Registry string
	// Reserved reports whether a provider name belongs to a built-in provider.
	Reserved func(name string) bool
	// Build builds module executables when a folder spec is packed.
	Build BuildFunc
	// TrustFile is the user's trust file, outside every project (the CLI passes
	// <user config folder>/halo/trust.json). Empty: nothing is trusted, and --trust fails.
	TrustFile string
	// Warn receives warnings, such as a .halo/trust.json in the project being ignored; nil
	// drops them.
	Warn func(msg string)
	// BuiltInKeys are publisher keys trusted without asking: the project's own, whose public
	// half ships in the binary (see keys.go).
	BuiltInKeys []PublisherKey
	// KnownSigned names packages known to be signed, with their publisher, beside those the
	// user's trust file records: the default registry's first-party packages. An unsigned
	// or renamed copy of one is refused (downgrade.go).
	KnownSigned map[string]string
	// FoldPublisher folds the look-alikes of a publisher's name to the letters they look
	// like ("Асme" with a Cyrillic А to "Acme"), before names are compared; the CLI passes
	// host/policy's folding. Nil folds nothing (case and punctuation are folded anyway).
	FoldPublisher func(string) string
	// Now stamps keys the user accepts; nil means time.Now.
	Now func() time.Time

	warnedTrust bool
}

// An InstalledPackage is a verified package of the project.
type InstalledPackage struct {
	Name  string
	Entry *LockEntry
	// Package is the verified package. When its folder was already intact, Load and Install
	// do not decode the files: each File then has its Path, Executable bit and SHA256 but no
	// Data (read it from Dir, which was just checked against those checksums).
	Package *Package
	// Dir is the folder it is unpacked in.
	Dir string
}

// A Spec is what halo add was given.
type Spec struct {
	// Registry specs: Name and, optionally, Version.
	Name, Version string
	// Path is a folder or a .halotool file; URL a .halotool to download.
	Path, URL string
}

var reSpec = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-z0-9][a-z0-9-]{0,62})(?:@(.+))?$`) })

// ParseSpec reads a halo add argument: name, name@1.0.0, ./folder, file.halotool, or an
// https:// URL of a .halotool (http:// only on localhost).
func ParseSpec(s string) (Spec, error) {
	switch {
	case s == "":
		return Spec{}, errorf(CodeNotFound, "empty package spec")
	case strings.Contains(s, "://"):
		if _, err := CheckDownloadURL(s); err != nil {
			return Spec{}, err
		}
		return Spec{URL: s}, nil
	case strings.HasSuffix(s, ".halotool") || strings.ContainsAny(s, `/\`) || strings.HasPrefix(s, "."):
		return Spec{Path: s}, nil
	}
	m := reSpec().FindStringSubmatch(s)
	if m == nil {
		return Spec{}, errorf(CodeNotFound, "%q is not a package spec: want name, name@1.0.0, ./folder, file.halotool or https://…/file.halotool", s)
	}
	if m[2] != "" && !reVersion().MatchString(m[2]) {
		return Spec{}, errorf(CodeNotFound, "%q: %q is not a version", s, m[2])
	}
	return Spec{Name: m[1], Version: m[2]}, nil
}

func (p *Project) stateDir() string { return filepath.Join(p.Dir, StateDir) }
func (p *Project) toolsDir() string { return filepath.Join(p.Dir, StateDir, ToolsDir) }

// PackageDir is where the package called name is unpacked.
func (p *Project) PackageDir(name string) string { return filepath.Join(p.toolsDir(), name) }

func (p *Project) registryOptions() RegistryOptions {
	o := p.Registries
	o.Dir = p.Dir
	return o
}

// fetchSpec reads the package a spec names and says how the lock records its source, the
// sha256 it must have ("" when nothing says), its signature, and what the registry's index
// says of the package (nil for a file or URL).
func (p *Project) fetchSpec(ctx context.Context, s Spec, dir string) (pkg *Package, source, want string, sig *Signature, ip *IndexPackage, err error) {
	switch {
	case s.URL != "":
		b, err := Download(ctx, p.Registries.Client, s.URL)
		if err != nil {
			return nil, "", "", nil, nil, err
		}
		if pkg, err = ReadPackage(b); err != nil {
			return nil, "", "", nil, nil, err
		}
		sig, err = p.fetchSignature(ctx, s, "")
		return pkg, s.URL, "", sig, nil, err
	case s.Path != "":
		abs := s.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, abs)
		}
		pkg, err = p.readPath(ctx, abs)
		if err != nil {
			return nil, "", "", nil, nil, err
		}
		sig, err = p.fetchSignature(ctx, s, abs)
		return pkg, p.pathSource(abs), "", sig, nil, err
	}
	reg, err := OpenRegistry(p.Registry, p.registryOptions())
	if err != nil {
		return nil, "", "", nil, nil, err
	}
	pkg, version, v, ip, err := fetchFromRegistry(ctx, reg, s.Name, s.Version)
	if err != nil {
		return nil, "", "", nil, nil, err
	}
	return pkg, "registry:" + reg.Source + "#" + s.Name + "@" + version, v.SHA256, v.Signature, ip, nil
}

func fetchFromRegistry(ctx context.Context, reg *Registry, name, version string) (*Package, string, *IndexVersion, *IndexPackage, error) {
	idx, err := reg.Index(ctx)
	if err != nil {
		return nil, "", nil, nil, err
	}
	ip, version, v, err := idx.Lookup(name, version)
	if err != nil {
		return nil, "", nil, nil, err
	}
	b, err := reg.Fetch(ctx, v.File)
	if err != nil {
		return nil, "", nil, nil, err
	}
	// The checksum is compared before the file is even parsed: a download that differs from
	// the index is refused whatever it holds.
	if got := Sum(b); got != v.SHA256 {
		return nil, "", nil, nil, errorf(CodeIntegrity, "%s@%s from registry %s has sha256 %s, but the index says %s", name, version, reg.Source, got, v.SHA256)
	}
	pkg, err := ReadPackage(b)
	if err != nil {
		return nil, "", nil, nil, err
	}
	if pkg.Manifest.Name != name || pkg.Manifest.Version != version {
		return nil, "", nil, nil, errorf(CodeIntegrity, "registry %s lists %s@%s, but its file holds %s@%s", reg.Source, name, version, pkg.Manifest.Name, pkg.Manifest.Version)
	}
	return pkg, version, v, ip, nil
}

func (p *Project) readPath(ctx context.Context, abs string) (*Package, error) {
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(CodeNotFound, "%s does not exist", abs)
		}
		return nil, err
	}
	if st.IsDir() {
		return PackDir(ctx, abs, PackOptions{Build: p.Build})
	}
	if st.Size() > MaxFileSize {
		return nil, errorf(CodeInvalid, "%s is more than the %d MiB limit", abs, MaxFileSize>>20)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	return ReadPackage(b)
}

// pathSource records a folder or file: relative to the project when inside it, else absolute.
func (p *Project) pathSource(abs string) string {
	root, err1 := filepath.Abs(p.Dir)
	a, err2 := filepath.Abs(abs)
	if err1 == nil && err2 == nil {
		if rel, err := filepath.Rel(root, a); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
		return a
	}
	return abs
}

// fetchSource reads a package again from a lock entry's source.
func (p *Project) fetchSource(ctx context.Context, name string, e *LockEntry) (*Package, error) {
	src := e.Source
	if rest, ok := strings.CutPrefix(src, "registry:"); ok {
		i := strings.LastIndex(rest, "#")
		if i < 0 {
			return nil, errorf(CodeIntegrity, "halo.lock: %s has a bad source %q", name, src)
		}
		loc, nv := rest[:i], rest[i+1:]
		n, v, _ := strings.Cut(nv, "@")
		reg, err := OpenRegistry(loc, p.registryOptions())
		if err != nil {
			return nil, err
		}
		pkg, _, _, _, err := fetchFromRegistry(ctx, reg, n, v)
		return pkg, err
	}
	if strings.Contains(src, "://") {
		if _, err := CheckDownloadURL(src); err != nil {
			return nil, err
		}
		b, err := Download(ctx, p.Registries.Client, src)
		if err != nil {
			return nil, err
		}
		return ReadPackage(b)
	}
	abs := filepath.FromSlash(src)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.Dir, abs)
	}
	return p.readPath(ctx, abs)
}

// AddOptions configure Add.
type AddOptions struct {
	// Trust records the package's sha256 in the user's trust file for this project, so a
	// package that runs code may be installed.
	Trust bool
	// Dir resolves a relative path spec (the working folder); "" means the project folder.
	Dir string
	// AcceptKey is the id of a publisher's key the user accepts on first sight (--accept-key).
	AcceptKey string
	// Check, when not nil, is called with the fetched package once it may be installed
	// (checksum, names and trust all pass) and before anything is written; an error refuses
	// the package. The CLI starts a module's plugin here to see that it serves its providers.
	Check func(ctx context.Context, pkg *Package) error
}

// Add installs the package a spec names, pins it in halo.lock and, with Trust, trusts it.
// A package with the same name is replaced.
func (p *Project) Add(ctx context.Context, spec string, opts AddOptions) (*InstalledPackage, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	dir := opts.Dir
	if dir == "" {
		dir = p.Dir
	}
	if err := p.checkState(); err != nil {
		return nil, err
	}
	pkg, source, want, sig, ip, err := p.fetchSpec(ctx, s, dir)
	if err != nil {
		return nil, err
	}
	if want != "" && pkg.SHA256 != want {
		return nil, errorf(CodeIntegrity, "%s has sha256 %s, but %s was expected", spec, pkg.SHA256, want)
	}
	lock, err := ReadLock(p.Dir)
	if err != nil {
		return nil, err
	}
	trust, err := p.Trust()
	if err != nil {
		return nil, err
	}
	name := pkg.Manifest.Name
	keys, err := p.Keys()
	if err != nil {
		return nil, err
	}
	ts, err := p.readTrustStore()
	if err != nil {
		return nil, err
	}
	claims := p.signClaims(pkg, ip, lock.Tools[name], ts, keys)
	signed, pin, err := checkSigned(spec, pkg, sig, claims, []string{opts.AcceptKey}, keys, "halo add "+spec)
	if err != nil {
		return nil, err
	}
	entry := &LockEntry{
		Version: pkg.Manifest.Version, Source: source, SHA256: pkg.SHA256,
		Providers: pkg.Manifest.ProviderNames(), Permissions: pkg.Permissions(), Signature: signed,
	}
	next := &Lock{Tools: map[string]*LockEntry{}, MCP: lock.MCP}
	for n, e := range lock.Tools {
		next.Tools[n] = e
	}
	next.Tools[name] = entry
	if err := p.checkProviders(next, name); err != nil {
		return nil, err
	}
	ch := change{lock: next, install: []*Package{pkg}}
	if pin != nil {
		ch.keys = append(ch.keys, *pin)
	}
	p.recordSigned(&ch, ts, name, signed)
	if entry.Permissions.NeedsTrust() && !trust.Trusts(name, pkg.SHA256) {
		if !opts.Trust {
			err := untrusted([]string{name}, "halo add "+spec+" --trust")
			err.Permissions = &entry.Permissions
			return nil, err
		}
	}
	if opts.Check != nil {
		if err := opts.Check(ctx, pkg); err != nil {
			return nil, err
		}
	}
	if opts.Trust && entry.Permissions.NeedsTrust() && !trust.Trusts(name, pkg.SHA256) {
		trust.Trusted[name] = pkg.SHA256
		ch.trust = trust
	}
	if err := p.apply(ch); err != nil {
		return nil, err
	}
	p.noteSigned(ch.signed)
	return &InstalledPackage{Name: name, Entry: entry, Package: pkg, Dir: p.PackageDir(name)}, nil
}

func untrusted(names []string, fix string) *Error {
	return errorf(CodeUntrusted, "%s starts a program or runs its own code, and you have not trusted that exact checksum in this project folder; read its permissions and source (halo search, halo.lock), then run: %s", strings.Join(names, ", "), fix)
}

// compactStrings drops repeats from a sorted list.
func compactStrings(list []string) []string {
	out := list[:0]
	for i, x := range list {
		if i == 0 || list[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkProviders refuses a lock in which a provider takes a built-in's name or another
// package's.
func (p *Project) checkProviders(l *Lock, focus ...string) error {
	owner := map[string]string{}
	// The packages being added are checked last, so a clash names the one already there.
	names := l.Names()
	sort.SliceStable(names, func(i, j int) bool { return !contains(focus, names[i]) && contains(focus, names[j]) })
	for _, n := range names {
		for _, prov := range l.Tools[n].Providers {
			if p.Reserved != nil && p.Reserved(prov) {
				return errorf(CodeConflict, "package %s: provider %s is the name of a built-in provider", n, prov)
			}
			if other, ok := owner[prov]; ok {
				return errorf(CodeConflict, "package %s: provider %s is already provided by package %s; remove one of them", n, prov, other)
			}
			owner[prov] = n
		}
	}
	return nil
}

// Remove uninstalls the package called name and drops it from halo.lock and from the user's
// trust in this project.
func (p *Project) Remove(name string) (*LockEntry, error) {
	lock, err := ReadLock(p.Dir)
	if err != nil {
		return nil, err
	}
	entry, ok := lock.Tools[name]
	if !ok {
		return nil, errorf(CodeNotFound, "%s is not installed (not in halo.lock)", name)
	}
	delete(lock.Tools, name)
	ch := change{lock: lock, remove: []string{name}}
	trust, err := p.Trust()
	if err != nil {
		return nil, err
	}
	if _, ok := trust.Trusted[name]; ok {
		delete(trust.Trusted, name)
		ch.trust = trust
	}
	return entry, p.apply(ch)
}

// InstallOptions configure Install.
type InstallOptions struct {
	// Trust trusts every package in the lock that runs code.
	Trust bool
	// AcceptKeys are ids of publisher keys the user accepts on first sight (--accept-key).
	AcceptKeys []string
}

// An InstallReport says what Install did.
type InstallReport struct {
	Packages []*InstalledPackage
	// Fetched lists packages read from their source; the rest were already installed intact.
	Fetched []string
	// Rewritten lists packages whose folder was (re)written.
	Rewritten []string
	// Trusted lists packages newly trusted.
	Trusted []string
	// Kept lists folders in .halo/tools that are not in the lock and were left alone,
	// because they do not hold a package Halo installed.
	Kept []string
}

// Install makes .halo/tools match halo.lock: every package at its pinned checksum, fetched
// again from its source when the installed copy is missing or differs, unpacked afresh when
// its folder was edited, folders of packages no longer locked removed.
func (p *Project) Install(ctx context.Context, opts InstallOptions) (*InstallReport, error) {
	lock, err := ReadLock(p.Dir)
	if err != nil {
		return nil, err
	}
	if err := p.checkState(); err != nil {
		return nil, err
	}
	trust, err := p.Trust()
	if err != nil {
		return nil, err
	}
	if err := p.checkProviders(lock); err != nil {
		return nil, err
	}
	keys, err := p.Keys()
	if err != nil {
		return nil, err
	}
	ts, err := p.readTrustStore()
	if err != nil {
		return nil, err
	}
	rep := &InstallReport{}
	ch := change{}
	var untrustedNames []string
	for _, name := range lock.Names() {
		e := lock.Tools[name]
		pkg, intact := p.installedCopy(name, e)
		if pkg == nil {
			pkg, err = p.fetchSource(ctx, name, e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			rep.Fetched = append(rep.Fetched, name)
		}
		if err := checkLocked(name, e, pkg); err != nil {
			return nil, err
		}
		// The signature halo.lock recorded is verified again, with the key this user trusts;
		// an entry without one is refused where this user knows the package is signed.
		claims := p.signClaims(pkg, nil, nil, ts, keys)
		if err := checkLockedSignature(name, e, pkg, claims, opts.AcceptKeys, &keys, &ch); err != nil {
			return nil, err
		}
		p.recordSigned(&ch, ts, name, e.Signature)
		if e.Permissions.NeedsTrust() || pkg.Permissions().NeedsTrust() {
			if !trust.Trusts(name, e.SHA256) {
				untrustedNames = append(untrustedNames, name)
			}
		}
		if !intact {
			ch.install = append(ch.install, pkg)
			rep.Rewritten = append(rep.Rewritten, name)
		}
		rep.Packages = append(rep.Packages, &InstalledPackage{Name: name, Entry: e, Package: pkg, Dir: p.PackageDir(name)})
	}
	if len(untrustedNames) > 0 {
		if !opts.Trust {
			return nil, untrusted(untrustedNames, "halo install --trust")
		}
		for _, n := range untrustedNames {
			trust.Trusted[n] = lock.Tools[n].SHA256
		}
		ch.trust = trust
		rep.Trusted = untrustedNames
	}
	// Folders of packages no longer in the lock are install output that is out of date; a
	// folder that does not hold a package Halo installed is left alone and reported.
	s, err := p.openState(false)
	if err != nil {
		return nil, err
	}
	if s.tools != nil {
		entries, err := fs.ReadDir(s.tools.FS(), ".")
		if err != nil {
			s.Close()
			return nil, err
		}
		for _, de := range entries {
			name := de.Name()
			if _, ok := lock.Tools[name]; ok || strings.HasPrefix(name, ".") {
				continue
			}
			if removable(s.tools, name, nil) == nil {
				ch.remove = append(ch.remove, name)
			} else {
				rep.Kept = append(rep.Kept, name)
			}
		}
	}
	s.Close()
	if len(ch.install) > 0 || len(ch.remove) > 0 || ch.trust != nil || len(ch.keys) > 0 {
		if err := p.apply(ch); err != nil {
			return nil, err
		}
	}
	p.noteSigned(ch.signed)
	return rep, nil
}

// checkLocked compares a package with its lock entry.
func checkLocked(name string, e *LockEntry, pkg *Package) error {
	if pkg.SHA256 != e.SHA256 {
		return errorf(CodeIntegrity, "%s: the package from %s has sha256 %s, but halo.lock pins %s; if the change is expected, run halo add again", name, e.Source, pkg.SHA256, e.SHA256)
	}
	if pkg.Manifest.Name != name || pkg.Manifest.Version != e.Version {
		return errorf(CodeIntegrity, "%s: halo.lock pins %s@%s, but the package is %s@%s", name, name, e.Version, pkg.Manifest.Name, pkg.Manifest.Version)
	}
	return nil
}

// installedCopy returns the installed package.halotool when it has the pinned checksum, and
// whether the unpacked folder still matches it exactly.
func (p *Project) installedCopy(name string, e *LockEntry) (*Package, bool) {
	s, err := p.openState(false)
	if err != nil {
		return nil, false
	}
	defer s.Close()
	b, err := readInstalled(s.tools, name)
	if err != nil || Sum(b) != e.SHA256 {
		return nil, false
	}
	if lp, ok := readListing(b); ok && quickMatches(s.toolsFS(), name, lp) {
		return lp, true
	}
	pkg, err := ReadPackage(b)
	if err != nil {
		return nil, false
	}
	return pkg, dirMatches(s.toolsFS(), name, pkg)
}

// Load verifies every package in halo.lock for a command that is about to use them: each
// installed package.halotool must have the pinned sha256, packages that run code must be
// trusted at that checksum, and no provider may take another's name. Only then are unpacked
// folders that differ from their verified package rewritten, so an edited file never runs.
func (p *Project) Load(ctx context.Context) ([]*InstalledPackage, error) {
	lock, err := ReadLock(p.Dir)
	if err != nil {
		return nil, err
	}
	if len(lock.Tools) == 0 {
		return nil, nil
	}
	trust, err := p.Trust()
	if err != nil {
		return nil, err
	}
	if err := p.checkProviders(lock); err != nil {
		return nil, err
	}
	s, err := p.openState(false)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []*InstalledPackage
	ch := change{}
	for _, name := range lock.Names() {
		e := lock.Tools[name]
		dir := p.PackageDir(name)
		b, err := readInstalled(s.tools, name)
		if errors.Is(err, fs.ErrNotExist) {
			if checkFolder(s.tools, name) == nil {
				// install puts a damaged copy back, and refuses a folder of other files:
				// which it is cannot be told without the package.
				return nil, errorf(CodeIntegrity, "%s is in halo.lock, but %s/%s/%s holds no package Halo installed; run halo install: it puts the package back when the folder holds only the package's files, and otherwise refuses (PACKAGE_CONFLICT): then move the folder out of the way", name, statedir.Name, ToolsDir, name)
			}
			return nil, errorf(CodeIntegrity, "%s is in halo.lock but not installed; run halo install", name)
		}
		if err != nil {
			return nil, err
		}
		if got := Sum(b); got != e.SHA256 {
			return nil, errorf(CodeIntegrity, "%s: .halo/tools/%s/%s has sha256 %s, but halo.lock pins %s; run halo install", name, name, Installed, got, e.SHA256)
		}
		// The fast path hashes the unpacked files against the checksums the pinned package
		// lists; anything else reads the whole package and compares byte for byte.
		pkg, intact := readListing(b)
		intact = intact && quickMatches(s.toolsFS(), name, pkg)
		if !intact {
			if pkg, err = ReadPackage(b); err != nil {
				return nil, err
			}
		}
		if err := checkLocked(name, e, pkg); err != nil {
			return nil, err
		}
		if pkg.Permissions().NeedsTrust() && !trust.Trusts(name, e.SHA256) {
			return nil, untrusted([]string{name}, "halo install --trust")
		}
		if !intact && !dirMatches(s.toolsFS(), name, pkg) {
			ch.install = append(ch.install, pkg)
		}
		out = append(out, &InstalledPackage{Name: name, Entry: e, Package: pkg, Dir: dir})
	}
	if len(ch.install) > 0 {
		ch.lock = nil
		if err := p.apply(ch); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// dirMatches reports whether the folder dir of fsys holds exactly what unpacking pkg writes,
// plus the package file itself: same names, contents and executable bits, nothing else. A
// nil fsys holds nothing.
func dirMatches(fsys fs.FS, dir string, pkg *Package) bool {
	if fsys == nil {
		return false
	}
	want, err := pkg.unpackedFiles()
	if err != nil {
		return false
	}
	want[Installed] = pkg.Bytes
	found := 0
	ok := true
	err = fs.WalkDir(fsys, dir, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			ok = false
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := relSlash(dir, fp)
		if rel == Described {
			return nil // the description halo add wrote beside the package; not package content
		}
		data, expected := want[rel]
		if !expected || !d.Type().IsRegular() {
			ok = false
			return fs.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			ok = false
			return err
		}
		exec := info.Mode().Perm()&0o100 != 0
		f, isPkgFile := pkg.File(rel)
		if exec != (isPkgFile && f.Executable) || info.Size() != int64(len(data)) {
			ok = false
			return fs.SkipAll
		}
		got, err := fs.ReadFile(fsys, fp)
		if err != nil || !bytes.Equal(got, data) {
			ok = false
			return fs.SkipAll
		}
		found++
		return nil
	})
	return err == nil && ok && found == len(want)
}

// A change is one all-or-nothing update of a project's package state.
type change struct {
	// lock, when not nil, replaces halo.lock.
	lock *Lock
	// trust, when not nil, replaces the user's trust in this project.
	trust *Trust
	// install (re)writes these packages' folders.
	install []*Package
	// remove deletes these packages' folders.
	remove []string
	// keys are publisher keys the user accepted, added to the user's trust file.
	keys []PublisherKey
	// signed are the packages installed signed, by publisher, for noteSigned to record in
	// the user's trust file once the change is made.
	signed map[string]string
}

// apply makes the change or, on any failure, leaves halo.lock, the user's trust file and
// .halo/ exactly as they were. Everything under .halo goes through statedir's roots (no link is followed),
// and a package folder is deleted or replaced only when removable says it may be.
func (p *Project) apply(ch change) (err error) {
	s, err := p.openState(true)
	if err != nil {
		return err
	}
	defer s.Close()
	var undo []func()
	var staging string
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
		// Removed last: on failure it still held the old folders the undo moved back.
		if staging != "" {
			s.st.RemoveAll(staging)
		}
		// Folders this change created are removed again on failure (empty by now).
		if err != nil && s.createdTools {
			s.st.Remove(ToolsDir)
		}
		if err != nil && s.createdSt {
			os.Remove(p.stateDir())
		}
	}()
	incoming := map[string]*Package{}
	for _, pkg := range ch.install {
		incoming[pkg.Manifest.Name] = pkg
	}
	// Move the old folders aside, then the new ones in.
	moving := append([]string(nil), ch.remove...)
	for _, pkg := range ch.install {
		moving = append(moving, pkg.Manifest.Name)
	}
	sort.Strings(moving)
	moving = compactStrings(moving)
	for _, name := range moving {
		if checkFilePath(name) != nil || strings.Contains(name, "/") {
			return fmt.Errorf("bad package folder name %q", name)
		}
		if err = removable(s.tools, name, incoming[name]); err != nil {
			return err
		}
	}
	if staging, err = mkdirStaging(s.st); err != nil {
		return err
	}
	newDir, oldDir := filepath.Join(staging, "new"), filepath.Join(staging, "old")
	if err = s.st.Mkdir(newDir, 0o755); err != nil {
		return err
	}
	if err = s.st.Mkdir(oldDir, 0o755); err != nil {
		return err
	}
	for _, pkg := range ch.install {
		d := filepath.Join(newDir, pkg.Manifest.Name)
		if err = pkg.unpackIn(s.st, d); err != nil {
			return err
		}
		if err = writeNew(s.st, filepath.Join(d, Installed), pkg.Bytes, 0o644); err != nil {
			return err
		}
	}
	var trustData []byte
	if ch.trust != nil || len(ch.keys) > 0 {
		if trustData, err = p.trustChange(ch.trust, ch.keys); err != nil {
			return err
		}
	}
	trustChanged := trustData != nil
	// Snapshots of the two files, restored byte for byte on failure.
	lockPath := filepath.Join(p.Dir, LockFile)
	trustPath := p.TrustFile
	for _, f := range []struct {
		path    string
		mode    os.FileMode
		replace bool
	}{{lockPath, 0o644, ch.lock != nil}, {trustPath, 0o600, trustChanged}} {
		if !f.replace {
			continue
		}
		path, mode := f.path, f.mode
		before, readErr := os.ReadFile(path)
		switch {
		case readErr == nil:
			undo = append(undo, func() { writeAtomic(path, before, mode) })
		case errors.Is(readErr, fs.ErrNotExist):
			undo = append(undo, func() { os.Remove(path) })
		default:
			return readErr
		}
	}
	for _, name := range moving {
		live, aside := filepath.Join(ToolsDir, name), filepath.Join(oldDir, name)
		if _, statErr := s.st.Lstat(live); statErr == nil {
			if err = s.st.Rename(live, aside); err != nil {
				return err
			}
			undo = append(undo, func() { s.st.RemoveAll(live); s.st.Rename(aside, live) })
		}
	}
	for _, pkg := range ch.install {
		live := filepath.Join(ToolsDir, pkg.Manifest.Name)
		if err = s.st.Rename(filepath.Join(newDir, pkg.Manifest.Name), live); err != nil {
			return err
		}
		undo = append(undo, func() { s.st.RemoveAll(live) })
	}
	if ch.lock != nil {
		b, merr := ch.lock.Marshal()
		if merr != nil {
			return merr
		}
		if err = writeAtomic(lockPath, b, 0o644); err != nil {
			return err
		}
	}
	if trustChanged {
		if err = os.MkdirAll(filepath.Dir(trustPath), 0o700); err != nil {
			return fmt.Errorf("record trust: %w", err)
		}
		if err = writeAtomic(trustPath, trustData, 0o600); err != nil {
			return err
		}
	}
	return nil
}
