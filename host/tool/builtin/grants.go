package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/pool"
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
// declaration named as declared, in the project folder project, whose links resolve to proj
// (realProject, once an opening). what names it in errors ("Workspace root"). A folder in the project's
// .halo is refused however it was named (see protectProject).
func grantedFolder(what, declared, abs, project, proj string) (string, error) {
	real, err := sandbox.ResolveGrantIn(declared, abs, project, proj, stateDir)
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

// A protectCache remembers protectProject's policies: making one lists the folders from each
// grant that holds the project down to the project, which every declaration's opening did
// again (a few hundred µs for a run's five). A policy is reused while those folders are as
// they were: a folder's entries changing (one created, removed or renamed) changes its
// modification time, and the policy is made again.
type protectCache struct {
	mu sync.Mutex
	m  map[string]protected
}

type protected struct {
	folders []string // what protectProject listed, from the project up
	stamps  []folderStamp
	pol     sandbox.Policy
	digest  string // of pol: what a pool key holds of it
}

// A folderStamp is what a folder looked like when a policy was made from its entries.
type folderStamp struct {
	path string
	mod  time.Time
	ino  any
}

func stampFolder(path string) (folderStamp, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return folderStamp{}, false
	}
	return folderStamp{path: path, mod: st.ModTime(), ino: fileID(st)}, true
}

// protect is protectProject, from the cache when the folders it read are unchanged, with a
// digest of the policy. key names what p was made from (equal keys, equal p): a cheap stand-in
// for p's hundred paths, so that a policy found in the cache is not made (mk is called only
// when it is not, or the folders changed).
// proj is the project folder with its links resolved (realProject).
func (c *protectCache) protect(key string, mk func() sandbox.Policy, proj string) (sandbox.Policy, string, error) {
	key += "\x01" + proj
	c.mu.Lock()
	hit, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		if stamps, ok := stampFolders(hit.folders); ok && slices.Equal(hit.stamps, stamps) {
			return hit.pol, hit.digest, nil
		}
	}
	p := mk()
	// The folders Protect lists: each from a grant that holds the project down to it.
	var folders []string
	for _, list := range [][]string{p.ReadOnly, p.ReadWrite} {
		for _, g := range list {
			for d := proj; within(d, g); d = filepath.Dir(d) {
				folders = append(folders, d)
				if d == g || d == filepath.Dir(d) {
					break
				}
			}
		}
	}
	stamps, ok := stampFolders(folders)
	if !ok {
		pol, err := protectProject(p, proj)
		return pol, digest(pol), err
	}
	pol, err := protectProject(p, proj)
	if err != nil {
		return pol, "", err
	}
	d := digest(pol)
	c.mu.Lock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string]protected{}
	}
	c.m[key] = protected{folders: folders, stamps: stamps, pol: pol, digest: d}
	c.mu.Unlock()
	return pol, d, nil
}

// stampFolders stamps each of folders; ok is false when one cannot be.
func stampFolders(folders []string) ([]folderStamp, bool) {
	stamps := make([]folderStamp, 0, len(folders))
	for _, f := range folders {
		st, ok := stampFolder(f)
		if !ok {
			return nil, false
		}
		stamps = append(stamps, st)
	}
	return stamps, true
}

// projectKey names, in a tool.Batch, a project folder's resolution (realProject).
type projectKey struct{ dir string }

// batchProject is realProject, once for every declaration of batch b (one run's opening of
// its tools, tool.Registry.OpenAll) that names the project folder project: the folders each
// grants are still resolved and checked at its own opening, from this resolution.
func batchProject(b *tool.Batch, project string) (string, error) {
	v, err := b.Do(projectKey{project}, func() (any, error) { return realProject(project) })
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// realProject is the project folder with its links resolved.
func realProject(project string) (string, error) {
	proj, err := filepath.EvalSymlinks(project)
	if err != nil {
		return "", tool.Errorf(tool.CodeToolConfig, "project folder %s: %v", project, err)
	}
	return proj, nil
}

// digest is a policy's sha256, as a pool key part.
func digest(p sandbox.Policy) string {
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// within reports whether path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// A parseCache remembers what declarations' arguments parse to (workspace.ParseOptions,
// bash.ParseOptions: a round trip through JSON each), keyed by the arguments themselves, so
// that a warm server's runs parse each declaration once. Parsing reads no file: what it
// gives depends on the arguments alone, and every folder it names is resolved and checked
// again at each opening.
type parseCache struct {
	mu sync.Mutex
	m  map[string]any
}

// parse is d's options, parsed by p the first time d's provider and arguments are seen. An
// argument that cannot be encoded is parsed every time; so is a declaration that does not parse.
func parse[O any](c *parseCache, d tool.Declaration, p func() (O, error)) (O, error) {
	key, ok := argsKey(d)
	if !ok {
		return p()
	}
	c.mu.Lock()
	hit, found := c.m[key]
	c.mu.Unlock()
	if o, same := hit.(O); found && same {
		return o, nil
	}
	o, err := p()
	if err != nil {
		return o, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) > 1024 {
		c.m = map[string]any{}
	}
	c.m[key] = o
	c.mu.Unlock()
	return o, nil
}

// argsKey encodes d's provider and arguments (pool.Keyer's parts); ok is false when one of
// them cannot be encoded.
func argsKey(d tool.Declaration) (string, bool) {
	key, err := pool.NewKeyer("").String(d.Provider).Value(d.Args).Value(d.Named).Parts()
	return key, err == nil
}
