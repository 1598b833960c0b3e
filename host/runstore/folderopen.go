package runstore

import (
	"io/fs"
	"os"
	"path/filepath"

	"halolang.dev/halo/pkgmgr/statedir"
)

// openRunsFolder opens dir, the store's folder (made when create is set). A dir named
// .halo/runs is opened through pkgmgr/statedir, which refuses a .halo or runs that is a
// symbolic link; any other dir (tests, --dir) must itself not be a link.
func openRunsFolder(dir string, create bool) (*os.Root, error) {
	if filepath.Base(dir) == "runs" && filepath.Base(filepath.Dir(dir)) == statedir.Name {
		return statedir.OpenFolder(filepath.Dir(filepath.Dir(dir)), "runs", create)
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return nil, &statedir.Error{Path: dir, Problem: "is a symbolic link or not a folder"}
	}
	return os.OpenRoot(dir)
}
