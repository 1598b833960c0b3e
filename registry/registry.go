// Package registry is the default tool registry that ships inside the halo binary: index.json
// and packages/ (generated from src/ and committed), plus local/, where set-up builds the
// packages whose plugin executables are compiled for this machine rather than committed
// (world-time), and released/, the latest release's record of those packages by URL.
// Default merges them into one halo-registry/1 registry; Generate and GenerateLocal rebuild
// them from src/ (see gen/, and docs/packages.md).
package registry

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"halolang.dev/halo/pkgmgr"
)

//go:embed index.json packages all:local all:released
var files embed.FS

// Default returns the registry that ships with Halo: the committed index with the module
// packages merged in, those built on this machine (local/index.json, their files under
// local/) before those of the latest release (released/index.json, whose files are URLs in
// the release folder).
func Default() (fs.FS, error) {
	return Merge(files)
}

// Merge builds the default registry's view of a folder laid out like this package.
func Merge(fsys fs.FS) (fs.FS, error) {
	b, err := fs.ReadFile(fsys, "index.json")
	if err != nil {
		return nil, fmt.Errorf("default registry: %w", err)
	}
	idx, err := pkgmgr.ParseIndex(b)
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{"local", "released"} {
		lb, err := fs.ReadFile(fsys, dir+"/index.json")
		if err != nil {
			continue
		}
		more, err := pkgmgr.ParseIndex(lb)
		if err != nil {
			return nil, fmt.Errorf("%s/index.json: %w", dir, err)
		}
		for name, p := range more.Packages {
			if _, clash := idx.Packages[name]; clash {
				continue
			}
			for _, v := range p.Versions {
				if !strings.Contains(v.File, "://") {
					v.File = path.Join(dir, v.File)
				}
			}
			idx.Packages[name] = p
		}
	}
	merged, err := idx.Marshal()
	if err != nil {
		return nil, err
	}
	return overlay{FS: fsys, index: merged}, nil
}

// overlay serves the merged index.json and every other file from FS.
type overlay struct {
	fs.FS
	index []byte
}

func (o overlay) Open(name string) (fs.File, error) {
	if name == "index.json" {
		return &memFile{Reader: bytes.NewReader(o.index), size: int64(len(o.index))}, nil
	}
	return o.FS.Open(name)
}

func (o overlay) ReadFile(name string) ([]byte, error) {
	if name == "index.json" {
		return append([]byte(nil), o.index...), nil
	}
	return fs.ReadFile(o.FS, name)
}

type memFile struct {
	*bytes.Reader
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{f.size}, nil }
func (f *memFile) Close() error               { return nil }

type memInfo struct{ size int64 }

func (i memInfo) Name() string       { return "index.json" }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
