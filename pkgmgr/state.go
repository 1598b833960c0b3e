package pkgmgr

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"halolang.dev/halo/internal/safefile"
	"halolang.dev/halo/pkgmgr/statedir"
)

// A state is the project's .halo and .halo/tools folders, opened through statedir: neither is
// a symbolic link, and every read, write, rename and delete below goes through these roots,
// which refuse any path that leaves them. tools is nil when the folder does not exist (and
// was not to be created).
type state struct {
	st, tools               *os.Root
	createdSt, createdTools bool
}

// openState opens .halo and .halo/tools; with create, missing ones are made.
func (p *Project) openState(create bool) (*state, error) {
	s := &state{}
	var err error
	s.st, s.createdSt, err = statedir.Open(p.Dir, create)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	s.tools, s.createdTools, err = statedir.OpenIn(s.st, ToolsDir, create)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return s, nil
	}
	if err != nil {
		s.st.Close()
		return nil, err
	}
	return s, nil
}

// checkState refuses an unsafe .halo or .halo/tools before any work (a download) is done.
func (p *Project) checkState() error {
	s, err := p.openState(false)
	if err != nil {
		return err
	}
	s.Close()
	return nil
}

func (s *state) Close() {
	if s.tools != nil {
		s.tools.Close()
	}
	if s.st != nil {
		s.st.Close()
	}
}

// toolsFS is the tools folder as an fs.FS, nil when there is none.
func (s *state) toolsFS() fs.FS {
	if s.tools == nil {
		return nil
	}
	return s.tools.FS()
}

// checkFolder refuses a package folder that is a symbolic link or not a folder; a missing
// one is fs.ErrNotExist.
func checkFolder(tools *os.Root, name string) error {
	if tools == nil {
		return fs.ErrNotExist
	}
	fi, err := tools.Lstat(name)
	if err != nil {
		return err
	}
	shown := statedir.Name + "/" + ToolsDir + "/" + name
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &statedir.Error{Path: shown, Problem: "is a symbolic link"}
	case !fi.IsDir():
		return &statedir.Error{Path: shown, Problem: "is not a folder"}
	}
	return nil
}

// readInstalled reads .halo/tools/name/package.halotool, refusing a package folder that is a
// link and a file larger than any package may be.
func readInstalled(tools *os.Root, name string) ([]byte, error) {
	if err := checkFolder(tools, name); err != nil {
		return nil, err
	}
	b, err := safefile.ReadIn(tools, filepath.Join(name, Installed), MaxFileSize)
	if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
		return nil, errorf(CodeIntegrity, "%s/%s/%s/%s is not a package file", statedir.Name, ToolsDir, name, Installed)
	}
	return b, err
}

// removable reports, as nil, that the folder .halo/tools/name may be deleted or replaced:
// Halo deletes only the folders of packages it installed. A missing folder is fine. Otherwise
// it must be a real folder (never a link) that holds a package.halotool reading as the
// package called name, or, when incoming is the package about to take its place, hold
// nothing but files that package writes (a damaged copy of it being put back).
func removable(tools *os.Root, name string, incoming *Package) error {
	err := checkFolder(tools, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if b, err := readInstalled(tools, name); err == nil {
		if pkg, ok := readListing(b); ok && pkg.Manifest.Name == name {
			return nil
		}
		if pkg, err := ReadPackage(b); err == nil && pkg.Manifest.Name == name {
			return nil
		}
	}
	if incoming != nil && onlyFilesOf(tools.FS(), name, incoming) {
		return nil
	}
	return errorf(CodeConflict, "%s/%s/%s does not hold a package Halo installed, and Halo deletes only the folders of packages it installed: look at what it holds, move it out of the way, and run the command again", statedir.Name, ToolsDir, name)
}

// onlyFilesOf reports whether the folder dir of fsys holds only regular files that unpacking
// pkg writes (contents aside), and folders.
func onlyFilesOf(fsys fs.FS, dir string, pkg *Package) bool {
	want := map[string]bool{ManifestFile: true, Installed: true}
	for _, f := range pkg.Files {
		want[f.Path] = true
	}
	ok := true
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := relSlash(dir, p)
		if !d.Type().IsRegular() || !want[rel] {
			ok = false
			return fs.SkipAll
		}
		return nil
	})
	return err == nil && ok
}

// relSlash returns p relative to dir, both slash paths of an fs.FS.
func relSlash(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := path.Clean(dir) + "/"
	if len(p) <= len(prefix) || p[:len(prefix)] != prefix {
		return "", false
	}
	return p[len(prefix):], true
}

// stagingName returns a fresh name for a staging folder inside .halo.
func stagingName() string {
	var b [8]byte
	rand.Read(b[:])
	return "staging-" + hex.EncodeToString(b[:])
}

// mkdirStaging makes a new staging folder in st, readable only by this user.
func mkdirStaging(st *os.Root) (string, error) {
	for range 10 {
		name := stagingName()
		err := st.Mkdir(name, 0o700)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no free staging folder name in %s", statedir.Name)
}
