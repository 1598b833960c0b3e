package builtin

import (
	"path/filepath"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/sandbox"
)

// A folder a declaration names is granted to its plugin by the sandbox, which follows
// symbolic links: Workspace("./docs") with docs -> ../../../root would grant /root. So each
// root, cwd, read: and write: folder is resolved here first (its symbolic links followed),
// and one named relative to the project that resolves outside the project folder is
// refused: a repository someone cloned decides what its links point at, not what the user
// grants. A folder the declaration names by its absolute path is the user's explicit choice
// and is granted wherever its links lead. The plugin is then configured with the resolved
// folders, so it works on exactly what the sandbox grants.

// grantedFolder resolves the folder abs (the declared path made absolute), which the
// declaration named as declared. what names it in errors ("Workspace root"). A folder in the
// project's .halo is refused however it was named (see protectProject).
func grantedFolder(what, declared, abs, project string) (string, error) {
	real, err := sandbox.ResolveGrant(declared, abs, project, stateDir)
	if err != nil {
		return "", tool.Errorf(tool.CodeToolConfig, "%s %v", what, err)
	}
	return real, nil
}

// stateDir and lockFile are halo's own files in a project: the installed packages and run
// records, and the lock that pins the packages. A plugin must not change what the next halo
// command loads, nor read the run records.
const (
	stateDir = ".halo"
	lockFile = "halo.lock"
)

// protectProject takes the project's .halo out of every grant of p, and its halo.lock out of
// every read-write grant (read-only instead): a plugin whose folder is the project (Bash's
// default) or holds it gets the project entry by entry (sandbox.Policy.Protect), so it can
// change the files and folders there but create, remove or rename none at the project's top.
func protectProject(p sandbox.Policy, project string) (sandbox.Policy, error) {
	proj, err := filepath.EvalSymlinks(project)
	if err != nil {
		return p, tool.Errorf(tool.CodeToolConfig, "project folder %s: %v", project, err)
	}
	out, err := p.Protect([]string{filepath.Join(proj, stateDir)}, []string{filepath.Join(proj, lockFile)})
	if err != nil {
		return p, tool.Errorf(tool.CodeToolConfig, "%v", err)
	}
	return out, nil
}
