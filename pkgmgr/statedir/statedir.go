// Package statedir opens a project's state folder, .halo, and the folders Halo keeps in it
// (tools/ for installed packages, runs/ for run records) as os.Root handles that never follow
// a symbolic link out of it.
//
// A repository controls every file of a project it ships, so it can commit `.halo/tools` as
// a link to the user's ~/.ssh: a command that followed it would write into, or delete from,
// that folder. Everything that writes or deletes under .halo (pkgmgr's installs, the run
// store) opens it here: .halo and the folder in it must be real folders, or the command stops
// with STATE_DIR_UNSAFE, and every later operation goes through the returned os.Root, which
// refuses any path that leaves it.
package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Name is the state folder's name inside a project.
const Name = ".halo"

// CodeUnsafe is the stable code of a state folder that is a symbolic link or not a folder.
const CodeUnsafe = "STATE_DIR_UNSAFE"

// An Error says which state folder cannot be used, and why.
type Error struct {
	// Path is the folder as the project names it (".halo/tools").
	Path string
	// Problem says what is wrong with it ("is a symbolic link").
	Problem string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s; Halo never follows a link out of the project's %s folder: remove it (it is Halo's own output: halo install and the next run rebuild it)", e.Path, e.Problem, Name)
}

// ErrorCode returns CodeUnsafe.
func (e *Error) ErrorCode() string { return CodeUnsafe }

// Open opens project/.halo. With create, a missing .halo is made (mode 0755) and created
// says so, for the caller's undo; without it a missing .halo is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func Open(project string, create bool) (st *os.Root, created bool, err error) {
	parent, err := os.OpenRoot(project)
	if err != nil {
		return nil, false, err
	}
	defer parent.Close()
	return openChild(parent, Name, Name, create)
}

// OpenIn opens the folder name (one path element, such as "tools") inside the state folder
// st, creating it when create is set, under the same rules as Open.
func OpenIn(st *os.Root, name string, create bool) (dir *os.Root, created bool, err error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return nil, false, fmt.Errorf("statedir: %q is not a folder name", name)
	}
	return openChild(st, Name+"/"+name, name, create)
}

// OpenFolder opens project/.halo/name, creating both when create is set: the run store opens
// .halo/runs with it.
func OpenFolder(project, name string, create bool) (*os.Root, error) {
	st, _, err := Open(project, create)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	dir, _, err := OpenIn(st, name, create)
	return dir, err
}

// openChild opens parent/name as a root, refusing a symbolic link or anything but a folder.
// The folder is checked with Lstat, then opened, then compared with what was checked, so a
// swap for a link between the two is refused too.
func openChild(parent *os.Root, shown, name string, create bool) (*os.Root, bool, error) {
	created := false
	fi, err := parent.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err = parent.Mkdir(name, 0o755); err == nil {
			created = true
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		fi, err = parent.Lstat(name)
	}
	if err != nil {
		return nil, false, err
	}
	if err := check(shown, fi); err != nil {
		return nil, false, err
	}
	dir, err := parent.OpenRoot(name)
	if err != nil {
		return nil, false, err
	}
	got, err := dir.Stat(".")
	if err != nil {
		dir.Close()
		return nil, false, err
	}
	if !os.SameFile(fi, got) {
		dir.Close()
		return nil, false, &Error{Path: shown, Problem: "changed while it was being opened"}
	}
	return dir, created, nil
}

func check(shown string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &Error{Path: shown, Problem: "is a symbolic link"}
	case !fi.IsDir():
		return &Error{Path: shown, Problem: "is not a folder"}
	}
	return nil
}
