package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/pkgmgr"
	"halolang.dev/halo/pkgmgr/statedir"
)

// A Confinement is what a sandboxed stdio server may reach beyond what every program needs
// to run (the system's programs and libraries, /etc without its secrets, the npm cache,
// devices): its working folder, Paths, the network only when Hosts names a host. It is the
// plugins' confinement (host/tool/sandbox: Landlock, no_new_privs, no capabilities, no /proc
// entries of processes outside it, no socket but Unix sockets without network), applied
// through the sandbox wrapper (`halo __sandbox`) the server starts in.
//
// The working folder is a folder of the server's own, which it may read and write, unless
// the declaration names one (cwd:): that one, like Paths, is read-only unless Write. Whatever
// is granted, the project's halo.lock and .git are never written and its .halo is not
// reached at all (Project): a server that could rewrite halo.lock could drop its own pins.
type Confinement struct {
	// Dir is the working folder, its links resolved; empty means the folder the server
	// starts in, as a folder of its own.
	Dir string
	// Named marks a working folder the declaration named (cwd:), granted as Paths are.
	Named bool
	// Paths are folders or files the server may read (and with Write, change), besides its
	// working folder.
	Paths []string
	// Write lets the server change a named working folder and Paths (write: true).
	Write bool
	// Programs are files the server may read and run whatever Write says: its program, when
	// the declaration names it from the project folder.
	Programs []string
	// Project is the project folder, its links resolved: its .halo is never granted, and
	// its halo.lock and .git never granted to write. Empty protects nothing.
	Project string
	// Hosts are the hosts the server may connect to. Landlock cannot tell hosts apart: any
	// host turns the network on for TCP and UDP; none keeps every socket but Unix sockets
	// closed.
	Hosts []string
	// Executable is the halo binary, which runs the wrapper.
	Executable string
	// Home is the server's HOME, whose npm cache (.npm) it may read.
	Home string
}

// SandboxOptions say how Confined confines servers.
type SandboxOptions struct {
	// Executable is the halo binary (the wrapper). Without it, a declaration asking for a
	// sandbox fails with TOOL_CONFIG rather than run unconfined.
	Executable string
	// Default confines every stdio server whose declaration does not say sandbox: false
	// (halo.json's "sandboxMcp": true).
	Default bool
	// Folders is where each sandboxed server without cwd: gets a folder of its own
	// (ownFolder). Without it, such a server fails with TOOL_CONFIG.
	Folders string
}

// Confined returns t with the stdio servers of declarations that ask for it (sandbox: true,
// or opts.Default) confined. MCP declarations and mcp packages alike; servers over HTTP
// run nothing locally and are left as they are.
func Confined(t tool.Type, opts SandboxOptions) tool.Type {
	open := t.Open
	t.Open = func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
		want, err := sandboxWanted(d, opts.Default)
		if err != nil {
			return nil, err
		}
		p, err := open(ctx, d)
		if err != nil || !want {
			return p, err
		}
		mp, ok := p.(*Provider)
		if !ok || len(mp.cfg.Command) == 0 {
			return p, nil
		}
		if opts.Executable == "" {
			p.Close()
			return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: sandbox: true needs the halo executable to confine the server", d.Name)
		}
		c, err := confinement(d, mp, opts)
		if err != nil {
			p.Close()
			return nil, err
		}
		mp.cfg.Sandbox = c
		return mp, nil
	}
	return t
}

// confinement works out what the server of declaration d (opened as mp, whose working
// folder and program it sets) may reach.
func confinement(d tool.Declaration, mp *Provider, opts SandboxOptions) (*Confinement, error) {
	project := d.Dir
	if project == "" {
		project = "."
	}
	proj, err := filepath.Abs(project)
	if err == nil {
		proj, err = filepath.EvalSymlinks(proj)
	}
	if err != nil {
		return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: project folder %s: %v", d.Name, project, err)
	}
	c := &Confinement{Executable: opts.Executable, Home: mp.cfg.Env["HOME"], Project: proj}
	c.Hosts, _ = stringList(d.Named["hosts"])
	c.Write, _ = d.Named["write"].(bool)
	// As the built-in tools' folders: links followed, one named relative to the project kept
	// in it, none in its .halo.
	grant := func(opt, declared string) (string, error) {
		abs := declared
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(proj, declared)
		}
		real, err := sandbox.ResolveGrant(declared, filepath.Clean(abs), proj, statedir.Name)
		if err != nil {
			return "", tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %s: %v", d.Name, opt, err)
		}
		return real, nil
	}
	paths, _ := stringList(d.Named["paths"])
	for _, pth := range paths {
		real, err := grant("paths", pth)
		if err != nil {
			return nil, err
		}
		c.Paths = append(c.Paths, real)
	}
	if cwd, _ := d.Named["cwd"].(string); cwd != "" {
		if c.Dir, err = grant("cwd", cwd); err != nil {
			return nil, err
		}
		c.Named = true
	} else {
		if opts.Folders == "" {
			return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: a sandboxed server works in a folder of its own, and this environment names no place for one: set HOME (or XDG_STATE_HOME), or give the server a cwd:", d.Name)
		}
		if c.Dir, err = ownFolder(opts.Folders, proj, d.Name); err != nil {
			return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: its own folder: %v", d.Name, err)
		}
		// A program named from the project folder is found there, not in the server's own
		// folder, and may be read: the declaration names it.
		if prog := mp.cfg.Command[0]; strings.ContainsRune(prog, '/') && !filepath.IsAbs(prog) {
			real, err := grant("command", prog)
			if err != nil {
				return nil, err
			}
			mp.cfg.Command[0] = real
			c.Programs = append(c.Programs, real)
		}
	}
	mp.cfg.Dir = c.Dir
	return c, nil
}

// ownFolder is the folder of its own a sandboxed server declared as name in the project
// proj works in: <root>/<the project folder's name>-<12 hex digits of its path's sha256>/<name>,
// made (mode 0700) when it is missing, its links resolved.
func ownFolder(root, proj, name string) (string, error) {
	sum := sha256.Sum256([]byte(proj))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(proj))
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", fmt.Errorf("%q is not a tool name", name)
	}
	dir := filepath.Join(root, base+"-"+hex.EncodeToString(sum[:6]), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dir)
}

// sandboxWanted reads a declaration's sandbox: option, def when it has none.
func sandboxWanted(d tool.Declaration, def bool) (bool, error) {
	v, ok := d.Named["sandbox"]
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: sandbox: must be true or false", d.Name)
	}
	return b, nil
}

// checkConfinement checks the sandbox:, paths: and hosts: options.
func checkConfinement(k string, v any) string {
	switch k {
	case "sandbox", "write":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	case "paths":
		list, err := stringList(v)
		if err != nil {
			return "must be a list of folders or files, such as [\"./data\"]"
		}
		for _, p := range list {
			if p == "" || strings.ContainsRune(p, 0) {
				return fmt.Sprintf("%q is not a path", p)
			}
		}
	case "hosts":
		list, err := stringList(v)
		if err != nil {
			return "must be a list of host names, such as [\"api.github.com\"]"
		}
		for _, h := range list {
			if h == "" || strings.ContainsAny(h, "/ :@") {
				return fmt.Sprintf("%q is not a host name", h)
			}
		}
	}
	return ""
}

func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not a list")
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("not a list of strings")
		}
		out = append(out, s)
	}
	return out, nil
}

// wrap returns the path and argv that start program (argv[0] resolved to path) inside c,
// with dir as its working folder.
func (c *Confinement) wrap(path string, argv []string, dir string) (string, []string, error) {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", nil, err
		}
	}
	p, err := c.Policy(dir)
	if err != nil {
		return "", nil, err
	}
	full := append([]string{path}, argv[1:]...)
	return c.Executable, sandbox.Wrap(c.Executable, p, full), nil
}

// resolved is p with its symbolic links followed (the sandbox grants no path with a link on
// it), or p when it cannot be (it does not exist: the sandbox leaves it out).
func resolved(p string) string {
	if real, err := sandbox.Resolve(filepath.Clean(p)); err == nil {
		return real
	}
	return p
}

// Protected are the project's files and folders a sandboxed server never writes: halo.lock
// (its pins) and .git (hooks, config); and the one it never reaches, .halo (installed
// packages, run records).
var (
	protectedReadOnly = []string{pkgmgr.LockFile, ".git"}
	protectedHidden   = []string{statedir.Name}
)

// Policy is the sandbox policy of a server working in dir (c.Dir when set).
func (c *Confinement) Policy(dir string) (sandbox.Policy, error) {
	if c.Dir != "" {
		dir = c.Dir
	}
	ro := append(append([]string{}, sandbox.ShellReadOnly...), sandbox.EtcReadOnly("/etc")...)
	if c.Home != "" && filepath.IsAbs(c.Home) {
		ro = append(ro, resolved(filepath.Join(c.Home, ".npm")))
	}
	ro = append(ro, c.Programs...)
	var rw []string
	shared := c.Paths
	if c.Named {
		shared = append([]string{resolved(dir)}, shared...)
	} else {
		rw = append(rw, resolved(dir))
	}
	if c.Write {
		rw = append(rw, shared...)
	} else {
		ro = append(ro, shared...)
	}
	p := sandbox.Policy{ReadOnly: ro, ReadWrite: rw, Network: len(c.Hosts) > 0}
	if c.Project == "" {
		return p, nil
	}
	var hidden, readOnly []string
	for _, h := range protectedHidden {
		hidden = append(hidden, filepath.Join(c.Project, h))
	}
	for _, r := range protectedReadOnly {
		readOnly = append(readOnly, filepath.Join(c.Project, r))
	}
	return p.Protect(hidden, readOnly)
}

// String says what the confinement allows, for halo tools.
func (c *Confinement) String() string {
	s := "sandboxed: reads the system's programs and libraries"
	if c.Home != "" {
		s += " and the npm cache"
	}
	shared := c.Paths
	switch {
	case c.Named:
		shared = append([]string{c.Dir}, shared...)
	case c.Dir != "":
		s += "; writes its own folder " + c.Dir
	default:
		s += "; writes its working folder"
	}
	if len(shared) > 0 {
		if c.Write {
			s += "; reads and writes " + strings.Join(shared, ", ")
		} else {
			s += "; reads " + strings.Join(shared, ", ")
		}
	}
	if c.Project != "" {
		s += "; never writes halo.lock or .git, nor reaches .halo"
	}
	if len(c.Hosts) > 0 {
		s += "; network on for " + strings.Join(c.Hosts, ", ") + " (any host: the kernel cannot tell hosts apart)"
	} else {
		s += "; no network"
	}
	return s
}

// Confinement returns how the provider's stdio server is confined, nil when it is not.
func (p *Provider) Confinement() *Confinement { return p.cfg.Sandbox }

// Stdio reports whether the provider starts a stdio server (rather than talking HTTP).
func (p *Provider) Stdio() bool { return len(p.cfg.Command) > 0 }
