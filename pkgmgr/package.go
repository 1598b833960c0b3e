package pkgmgr

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// Format is the format tag of a .halotool file.
const Format = "halotool/1"

// Size limits. A package of manifests and small files stays under MaxPlainSize; a module's
// plugin executables are large (a stripped Go plugin is about 12 MiB, 5 MiB gzipped), so they
// are stored gzip-compressed and counted separately, which leaves room for several platforms.
const (
	// MaxPlainSize bounds the total size of a package's files other than executables.
	MaxPlainSize = 5 << 20
	// MaxExecutableSize bounds one plugin executable, uncompressed.
	MaxExecutableSize = 64 << 20
	// MaxFileSize bounds a whole .halotool file: up to about eight platforms' executables.
	MaxFileSize = 64 << 20
	// MaxUnpackedSize bounds all of a package's files together, uncompressed. Reading a
	// package counts as it inflates and stops at this limit, so a small file of gzipped
	// zeros cannot make it allocate more.
	MaxUnpackedSize = 256 << 20
	// MaxFiles bounds the number of files in a package.
	MaxFiles = 10000
)

// A File is one file of a package.
type File struct {
	// Path is slash-separated and relative to the package folder.
	Path string
	Data []byte
	// Executable marks a module's plugin executable; it is stored gzip-compressed and
	// unpacked with mode 0755.
	Executable bool
	// SHA256 is the hex checksum of Data, as the package lists it.
	SHA256 string
}

// A Package is a read, checked .halotool file.
type Package struct {
	Manifest *Manifest
	// ManifestJSON is the manifest as the package holds it.
	ManifestJSON json.RawMessage
	// Files are the package's files (the manifest is not among them), sorted by path.
	Files []File
	// Bytes is the .halotool file itself, and SHA256 its hex checksum.
	Bytes  []byte
	SHA256 string
}

// Permissions returns what the package can reach.
func (p *Package) Permissions() Permissions { return p.Manifest.Permissions() }

// FileName is the conventional file name: name-version.halotool.
func (p *Package) FileName() string {
	return p.Manifest.Name + "-" + p.Manifest.Version + ".halotool"
}

// File returns the file at path p.
func (p *Package) File(name string) (File, bool) {
	i := sort.Search(len(p.Files), func(i int) bool { return p.Files[i].Path >= name })
	if i < len(p.Files) && p.Files[i].Path == name {
		return p.Files[i], true
	}
	return File{}, false
}

type wireFile struct {
	Path string `json:"path"`
	// SHA256 is the checksum of the file's contents (uncompressed). Packages made by Encode
	// always list it; it lets an installed folder be checked without decoding the package.
	SHA256     string `json:"sha256,omitempty"`
	Data       string `json:"data"`
	Gzip       bool   `json:"gzip,omitempty"`
	Executable bool   `json:"executable,omitempty"`
}

type wirePackage struct {
	Format   string          `json:"format"`
	Manifest json.RawMessage `json:"manifest"`
	Files    []wireFile      `json:"files"`
}

// Sum returns the hex sha256 of data.
func Sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ReadPackage checks a .halotool file completely (size, format, manifest, every file name,
// duplicates, sizes, the module's executables) and returns it. Nothing is written anywhere.
func ReadPackage(data []byte) (*Package, error) {
	invalid := func(format string, args ...any) error {
		return &Error{Code: CodeInvalid, Message: "package file: " + fmt.Sprintf(format, args...)}
	}
	if len(data) > MaxFileSize {
		return nil, invalid("%d bytes is more than the %d MiB limit", len(data), MaxFileSize>>20)
	}
	var w wirePackage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, &Error{Code: CodeInvalid, Message: "package file is not a .halotool", Err: err}
	}
	if dec.More() {
		return nil, invalid("trailing data after the package")
	}
	if w.Format != Format {
		return nil, invalid("format %q: want %q", w.Format, Format)
	}
	if len(w.Manifest) == 0 {
		return nil, invalid("no manifest")
	}
	m, err := ParseManifest(w.Manifest)
	if err != nil {
		return nil, err
	}
	if len(w.Files) > MaxFiles {
		return nil, invalid("%d files is more than %d", len(w.Files), MaxFiles)
	}
	execs := executables(m)
	p := &Package{Manifest: m, ManifestJSON: w.Manifest, Bytes: data, SHA256: Sum(data)}
	var problems []Problem
	bad := func(i int, format string, args ...any) {
		problems = append(problems, Problem{Path: fmt.Sprintf("files[%d]", i), Message: fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
	plain := len(w.Manifest)
	unpacked := int64(len(w.Manifest)) // every file so far, uncompressed: the running count
	for i, f := range w.Files {
		if err := checkFilePath(f.Path); err != nil {
			bad(i, "%v", err)
			continue
		}
		if f.Path == ManifestFile || strings.HasSuffix(f.Path, ".halotool") || hasSegment(f.Path, "node_modules") {
			bad(i, "%q is never packed", f.Path)
			continue
		}
		key := strings.ToLower(f.Path)
		if seen[key] {
			bad(i, "%q appears twice", f.Path)
			continue
		}
		seen[key] = true
		raw, err := base64.StdEncoding.Strict().DecodeString(f.Data)
		if err != nil {
			bad(i, "%q: bad base64: %v", f.Path, err)
			continue
		}
		if f.Executable != execs[f.Path] {
			if f.Executable {
				bad(i, "%q is marked executable but the manifest names no such executable", f.Path)
			} else {
				bad(i, "%q is a module executable but is not marked executable", f.Path)
			}
			continue
		}
		if f.Gzip {
			// Only executables are compressed (Encode does it), so only they may inflate.
			if !f.Executable {
				bad(i, "%q: only a module executable may be gzip-compressed", f.Path)
				continue
			}
			limit := min(int64(MaxExecutableSize), MaxUnpackedSize-unpacked)
			raw, err = gunzip(raw, limit)
			if errors.Is(err, errTooLarge) {
				if limit < MaxExecutableSize {
					problems = append(problems, Problem{Path: "files", Message: fmt.Sprintf("more than the %d MiB limit for all files once uncompressed", MaxUnpackedSize>>20)})
					break // the count is spent: nothing more is inflated
				}
				bad(i, "%q: more than the %d MiB limit for an executable once uncompressed", f.Path, MaxExecutableSize>>20)
				continue
			}
			if err != nil {
				bad(i, "%q: %v", f.Path, err)
				continue
			}
		}
		unpacked += int64(len(raw))
		if unpacked > MaxUnpackedSize {
			problems = append(problems, Problem{Path: "files", Message: fmt.Sprintf("more than the %d MiB limit for all files once uncompressed", MaxUnpackedSize>>20)})
			break
		}
		sum := Sum(raw)
		if f.SHA256 != "" && f.SHA256 != sum {
			bad(i, "%q: its contents do not have the sha256 the package lists", f.Path)
			continue
		}
		if f.Executable {
			if len(raw) > MaxExecutableSize {
				bad(i, "%q: %d bytes is more than the %d MiB limit for an executable", f.Path, len(raw), MaxExecutableSize>>20)
				continue
			}
		} else {
			plain += len(raw)
		}
		p.Files = append(p.Files, File{Path: f.Path, Data: raw, Executable: f.Executable, SHA256: sum})
	}
	if plain > MaxPlainSize {
		problems = append(problems, Problem{Path: "files", Message: fmt.Sprintf("%d bytes of files is more than the %d MiB limit", plain, MaxPlainSize>>20)})
	}
	sort.Slice(p.Files, func(i, j int) bool { return p.Files[i].Path < p.Files[j].Path })
	// A file that is also a folder ("a" and "a/b") cannot be unpacked.
	for _, f := range p.Files {
		for dir := path.Dir(f.Path); dir != "."; dir = path.Dir(dir) {
			if seen[strings.ToLower(dir)] || strings.EqualFold(dir, ManifestFile) {
				problems = append(problems, Problem{Path: "files", Message: fmt.Sprintf("%q is both a file and a folder", dir)})
			}
		}
	}
	for f := range execs {
		if _, ok := seen[strings.ToLower(f)]; !ok {
			problems = append(problems, Problem{Path: "files", Message: fmt.Sprintf("the module executable %q is missing", f)})
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Code: CodeInvalid, Message: fmt.Sprintf("package file has %d problem(s)", len(problems)), Problems: problems}
	}
	return p, nil
}

// parallel calls fn(0) ... fn(n-1) on up to GOMAXPROCS goroutines and returns when all have
// returned.
func parallel(n int, fn func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				fn(i)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

func hasSegment(p, seg string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == seg {
			return true
		}
	}
	return false
}

// executables returns the set of file paths the manifest names as plugin executables.
func executables(m *Manifest) map[string]bool {
	out := map[string]bool{}
	for _, p := range m.Providers {
		for _, f := range p.Executables {
			out[f] = true
		}
	}
	return out
}

// errTooLarge is gunzip's error for data that inflates past its limit.
var errTooLarge = errors.New("too large once uncompressed")

// gunzip inflates data, which must be one gzip member whose trailer states its size (as
// Encode writes it), into exactly that many bytes. A stated size over limit is refused
// before anything is inflated, and data that inflates past its stated size is refused at
// the first byte over, so memory never exceeds min(stated size, limit).
func gunzip(data []byte, limit int64) ([]byte, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("bad gzip data: too short")
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("bad gzip data: %w", err)
	}
	size := int64(binary.LittleEndian.Uint32(data[len(data)-4:]))
	if size > limit {
		return nil, errTooLarge
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("bad gzip data: %w", err)
	}
	// The stream must end here (where the gzip reader also checks the CRC and size).
	var more [1]byte
	n, err := zr.Read(more[:])
	if n > 0 {
		return nil, fmt.Errorf("bad gzip data: it inflates past the size its trailer states")
	}
	if err != io.EOF {
		return nil, fmt.Errorf("bad gzip data: %w", err)
	}
	return out, nil
}

// Encode builds the .halotool bytes of a manifest and files. The output depends only on its
// input (files sorted, gzip without names or times), so packing the same folder twice gives
// the same sha256.
func Encode(manifest json.RawMessage, files []File) ([]byte, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, manifest); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	w := wirePackage{Format: Format, Manifest: compact.Bytes(), Files: make([]wireFile, len(sorted))}
	// Executables are compressed in parallel (gzip's default level: within 0.5% of its best
	// on a Go plugin, in a quarter of the time).
	errs := make([]error, len(sorted))
	parallel(len(sorted), func(i int) {
		f := sorted[i]
		data := f.Data
		wf := wireFile{Path: f.Path, Executable: f.Executable, SHA256: Sum(f.Data)}
		if f.Executable {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
			if _, err := zw.Write(data); err != nil {
				errs[i] = err
				return
			}
			if err := zw.Close(); err != nil {
				errs[i] = err
				return
			}
			data, wf.Gzip = buf.Bytes(), true
		}
		wf.Data = base64.StdEncoding.EncodeToString(data)
		w.Files[i] = wf
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// A BuildFunc builds the Go main package goPkg, from the package folder dir, for one
// platform ("linux/amd64"), and returns the executable.
type BuildFunc func(ctx context.Context, dir, goPkg, platform string) ([]byte, error)

// PackOptions configure PackDir.
type PackOptions struct {
	// Build builds a module's executables when its manifest has a build entry. Nil refuses
	// such manifests unless the executables are already in the folder.
	Build BuildFunc
	// Platforms, when not empty, keeps only these platforms of a module's executables (the
	// manifest in the package says so too): a local build for this machine.
	Platforms []string
	// Progress, when not nil, is called before each executable is built: the i-th of n builds
	// (from 1), for provider and platform.
	Progress func(i, n int, provider, platform string)
}

// restrictPlatforms rewrites a manifest so its modules list only the given platforms.
func restrictPlatforms(mdata []byte, keep []string) ([]byte, error) {
	for _, plat := range keep {
		if !platforms[plat] {
			return nil, errorf(CodeInvalid, "unknown platform %q: want one of %s", plat, strings.Join(sortedKeys(platforms), ", "))
		}
	}
	var tree map[string]any
	if err := json.Unmarshal(mdata, &tree); err != nil {
		return nil, err
	}
	providers, _ := tree["providers"].(map[string]any)
	for name, px := range providers {
		p, _ := px.(map[string]any)
		execs, ok := p["executables"].(map[string]any)
		if !ok {
			continue
		}
		kept := map[string]any{}
		for _, plat := range keep {
			if f, ok := execs[plat]; ok {
				kept[plat] = f
			}
		}
		if len(kept) == 0 {
			return nil, errorf(CodeInvalid, "provider %s has no executable for %s", name, strings.Join(keep, ", "))
		}
		p["executables"] = kept
	}
	return json.MarshalIndent(tree, "", "  ")
}

// PackDir packs a package folder: it checks halo-tool.json, builds a module's executables
// when the manifest says how, and packs the manifest, the module executables and the files
// and folders the manifest's files names (a folder with everything in it but dot-files,
// node_modules and .halotool files), and nothing else of the folder: not its sources, tests,
// go.mod or go.sum. A symlink or other special file among them is refused. The folder is not
// changed.
func PackDir(ctx context.Context, dir string, opts PackOptions) (*Package, error) {
	mdata, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(CodeInvalid, "%s has no %s", dir, ManifestFile)
		}
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	m, err := ParseManifest(mdata)
	if err != nil {
		return nil, err
	}
	if len(opts.Platforms) > 0 {
		if mdata, err = restrictPlatforms(mdata, opts.Platforms); err != nil {
			return nil, err
		}
		if m, err = ParseManifest(mdata); err != nil {
			return nil, err
		}
	}
	type build struct{ provider, platform string }
	var builds []build
	for _, name := range m.ProviderNames() {
		p := m.Providers[name]
		if p.Kind != KindModule || p.Build == nil {
			continue
		}
		if opts.Build == nil {
			return nil, errorf(CodeInvalid, "provider %s has a build entry, but no builder is available", name)
		}
		for _, plat := range sortedKeys(p.Executables) {
			builds = append(builds, build{name, plat})
		}
	}
	built := map[string][]byte{}
	for i, b := range builds {
		p := m.Providers[b.provider]
		if opts.Progress != nil {
			opts.Progress(i+1, len(builds), b.provider, b.platform)
		}
		exe, err := opts.Build(ctx, dir, p.Build.Go, b.platform)
		if err != nil {
			return nil, fmt.Errorf("build %s for %s: %w", p.Build.Go, b.platform, err)
		}
		built[p.Executables[b.platform]] = exe
	}
	root := filepath.Clean(dir)
	var files []File
	var problems []Problem
	seen := map[string]bool{}
	// read packs one regular file of the folder, found at rel; where names it for a problem.
	read := func(rel, where string, d fs.DirEntry, executable bool) error {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		if d.Type()&fs.ModeSymlink != 0 {
			problems = append(problems, Problem{Path: where, Message: rel + ": a symlink cannot be packed"})
			return nil
		}
		if !d.Type().IsRegular() {
			problems = append(problems, Problem{Path: where, Message: rel + ": not a regular file"})
			return nil
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return err
		}
		files = append(files, File{Path: rel, Data: data, Executable: executable})
		return nil
	}
	// lstat is the entry at rel, or a problem when there is none.
	lstat := func(rel, where string) fs.DirEntry {
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			problems = append(problems, Problem{Path: where, Message: rel + ": no such file in " + dir})
			return nil
		}
		return fs.FileInfoToDirEntry(info)
	}
	for rel, data := range built {
		seen[rel] = true
		files = append(files, File{Path: rel, Data: data, Executable: true})
	}
	for _, name := range m.ProviderNames() {
		p := m.Providers[name]
		for _, plat := range sortedKeys(p.Executables) {
			rel := p.Executables[plat]
			where := join(join(join("providers", name), "executables"), plat)
			if seen[rel] {
				continue
			}
			if d := lstat(rel, where); d != nil {
				if err := read(rel, where, d, true); err != nil {
					return nil, fmt.Errorf("read package folder: %w", err)
				}
			}
		}
	}
	execs := executables(m)
	for i, named := range m.Files {
		rel, where := strings.TrimSuffix(named, "/"), index("files", i)
		d := lstat(rel, where)
		if d == nil {
			continue
		}
		if !d.IsDir() {
			if err := read(rel, where, d, execs[rel]); err != nil {
				return nil, fmt.Errorf("read package folder: %w", err)
			}
			continue
		}
		top := filepath.Join(root, filepath.FromSlash(rel))
		err := filepath.WalkDir(top, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if fp == top {
				return nil
			}
			name := d.Name()
			if strings.HasPrefix(name, ".") || name == "node_modules" || strings.HasSuffix(name, ".halotool") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			frel := filepath.ToSlash(strings.TrimPrefix(fp, root+string(filepath.Separator)))
			return read(frel, where, d, execs[frel])
		})
		if err != nil {
			return nil, fmt.Errorf("read package folder: %w", err)
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Code: CodeInvalid, Message: fmt.Sprintf("%s cannot be packed", dir), Problems: problems}
	}
	b, err := Encode(mdata, files)
	if err != nil {
		return nil, err
	}
	// Reading the result back applies every rule of a package file (sizes, names, executables).
	return ReadPackage(b)
}

// Unpack writes the package's files and its manifest into dir, which must not exist yet.
// Names were checked by ReadPackage; everything is written through an os.Root of dir's parent
// and files are created exclusively, so nothing outside dir is touched.
func (p *Package) Unpack(dir string) error {
	parent, err := os.OpenRoot(filepath.Dir(dir))
	if err != nil {
		return fmt.Errorf("unpack %s: %w", p.Manifest.Name, err)
	}
	defer parent.Close()
	return p.unpackIn(parent, filepath.Base(dir))
}

// unpackIn is Unpack into the folder dir (a new name) of root.
func (p *Package) unpackIn(root *os.Root, dir string) error {
	if err := root.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("unpack %s: %w", p.Manifest.Name, err)
	}
	var manifest bytes.Buffer
	if err := json.Indent(&manifest, p.ManifestJSON, "", "  "); err != nil {
		return err
	}
	manifest.WriteByte('\n')
	all := append([]File{{Path: ManifestFile, Data: manifest.Bytes()}}, p.Files...)
	for _, f := range all {
		if err := checkFilePath(f.Path); err != nil {
			return &Error{Code: CodeInvalid, Message: "unpack", Err: err}
		}
		target := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := root.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		if err := writeNew(root, target, f.Data, mode); err != nil {
			return fmt.Errorf("unpack %s: %w", f.Path, err)
		}
	}
	return nil
}

// unpackedFiles lists what Unpack writes, by slash path, for comparing an installed folder.
func (p *Package) unpackedFiles() (map[string][]byte, error) {
	var manifest bytes.Buffer
	if err := json.Indent(&manifest, p.ManifestJSON, "", "  "); err != nil {
		return nil, err
	}
	manifest.WriteByte('\n')
	out := map[string][]byte{ManifestFile: manifest.Bytes()}
	for _, f := range p.Files {
		out[f.Path] = f.Data
	}
	return out, nil
}

// writeNew creates the file target in root, which must not exist yet.
func writeNew(root *os.Root, target string, data []byte, mode os.FileMode) error {
	f, err := root.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
