package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/sandbox"
)

// A Confinement is what a sandboxed stdio server may reach beyond what every program needs
// to run (the system's programs and libraries, /etc without its secrets, the npm cache,
// devices): its working folder and Paths read-write, the network only when Hosts names a
// host. It is the plugins' confinement (host/tool/sandbox: Landlock, no_new_privs, no
// capabilities, no /proc entries of processes outside it, no socket but Unix sockets without
// network), applied through the sandbox wrapper (`halo __sandbox`) the server starts in.
type Confinement struct {
	// Paths are folders or files the server may read and write, besides its working folder.
	Paths []string
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
		c := &Confinement{Executable: opts.Executable, Home: mp.cfg.Env["HOME"]}
		paths, _ := stringList(d.Named["paths"])
		c.Hosts, _ = stringList(d.Named["hosts"])
		for _, pth := range paths {
			abs := pth
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(d.Dir, pth)
			}
			// As the built-in tools' folders: links followed, a relative one kept in the project.
			real, err := sandbox.ResolveGrant(pth, filepath.Clean(abs), d.Dir)
			if err != nil {
				p.Close()
				return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: paths: %v", d.Name, err)
			}
			c.Paths = append(c.Paths, real)
		}
		mp.cfg.Sandbox = c
		return mp, nil
	}
	return t
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
	case "sandbox":
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
	p := c.Policy(dir)
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

// Policy is the sandbox policy of a server working in dir.
func (c *Confinement) Policy(dir string) sandbox.Policy {
	ro := append(append([]string{}, sandbox.ShellReadOnly...), sandbox.EtcReadOnly("/etc")...)
	if c.Home != "" && filepath.IsAbs(c.Home) {
		ro = append(ro, resolved(filepath.Join(c.Home, ".npm")))
	}
	rw := append([]string{resolved(dir)}, c.Paths...)
	return sandbox.Policy{ReadOnly: ro, ReadWrite: rw, Network: len(c.Hosts) > 0}
}

// String says what the confinement allows, for halo tools.
func (c *Confinement) String() string {
	s := "sandboxed: reads the system's programs and libraries"
	if c.Home != "" {
		s += " and the npm cache"
	}
	s += "; writes only its working folder"
	if len(c.Paths) > 0 {
		s += " and " + strings.Join(c.Paths, ", ")
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
