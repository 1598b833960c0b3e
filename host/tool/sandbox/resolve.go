package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Resolve follows the symbolic links of p, a clean absolute path: what a grant of p reaches.
// On Linux the sandbox grants a path only when no link is on it (so that no link made after
// the host checked a folder can redirect the grant), so whoever grants a folder resolves it
// first. A path that does not exist yet resolves through its longest existing parent (a
// Workspace with write: true creates its root), and a link to something that does not exist
// yet through its target: either would be created where the links lead.
func Resolve(p string) (string, error) {
	rest := ""
	for hops := 0; ; {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A link that leads nowhere yet: follow it by hand.
			if hops++; hops > 40 {
				return "", errors.New("too many symbolic links")
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(p), target)
			}
			p = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
