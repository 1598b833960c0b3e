package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// ResolveGrant resolves a folder a declaration grants: declared as written, abs the same
// made absolute. Its links are followed (Resolve), and one named relative to the project
// must resolve inside the project folder: a repository someone cloned decides where its
// links lead (docs -> ../../../root), not what the user grants. One named by its absolute
// path is the user's explicit choice and is granted wherever its links lead. A folder in
// one of the project's hidden folders (names relative to it, such as ".halo") is refused
// however it was named. Errors start with declared.
func ResolveGrant(declared, abs, project string, hidden ...string) (string, error) {
	proj, err := filepath.EvalSymlinks(project)
	if err != nil {
		return "", fmt.Errorf("%s: project folder %s: %w", declared, project, err)
	}
	return ResolveGrantIn(declared, abs, project, proj, hidden...)
}

// ResolveGrantIn is ResolveGrant for a project folder whose links its caller resolved
// already (proj is project's filepath.EvalSymlinks, from the same opening): a declaration
// granting several folders resolves its project once, not once a folder, and a folder in the
// project is resolved from proj, its path's part below the project looked at entry by entry
// (no link there: proj joined with it; a link or a missing entry: Resolve, from the top).
func ResolveGrantIn(declared, abs, project, proj string, hidden ...string) (string, error) {
	real, ok := resolveBelow(abs, project, proj)
	if !ok {
		var err error
		if real, err = Resolve(abs); err != nil {
			return "", fmt.Errorf("%s: %w", declared, err)
		}
	}
	for _, h := range hidden {
		if within(real, filepath.Join(proj, h)) {
			return "", fmt.Errorf("%s is in the project's %s folder (its installed packages and run records), which no plugin is granted", declared, h)
		}
	}
	if !filepath.IsAbs(declared) && !within(real, proj) {
		return "", fmt.Errorf("%s resolves to %s, outside the project folder %s (a symbolic link or '..' leads there); name the folder by its absolute path if it is meant to be granted", declared, real, proj)
	}
	return real, nil
}

// resolveBelow resolves abs, a clean absolute path in the folder project whose links resolve
// to proj, as proj joined with abs's part below project, when no entry of that part is a
// link (each is looked at with Lstat); ok is false when one is, or is missing, or abs is not
// in project.
func resolveBelow(abs, project, proj string) (real string, ok bool) {
	project = filepath.Clean(project)
	if abs == project {
		return proj, true
	}
	prefix := strings.TrimSuffix(project, string(filepath.Separator)) + string(filepath.Separator)
	rest, in := strings.CutPrefix(abs, prefix)
	if !in || rest == "" {
		return "", false
	}
	real = proj
	for _, name := range strings.Split(rest, string(filepath.Separator)) {
		if name == "" || name == "." || name == ".." {
			return "", false
		}
		real = filepath.Join(real, name)
		fi, err := os.Lstat(real)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return "", false
		}
	}
	return real, true
}
