package pkgmgr

import (
	"net/url"
	"path"
	"sort"
	"strings"
)

// Permissions say what a package can reach. They are computed from the manifest, never taken
// from a registry, and shown by halo search, halo add and halo.lock.
type Permissions struct {
	// Network lists the hosts requests go to; a {{name}} part of a base URL shows as *.
	Network []string `json:"network"`
	// Env lists the variables the package reads (http keys) or may see (mcp commands, modules).
	Env []string `json:"env"`
	// Spawn lists the programs the package starts (mcp commands).
	Spawn []string `json:"spawn"`
	// Code is true when the package runs its own code (module packages).
	Code bool `json:"code"`
}

// NeedsTrust reports whether a package with these permissions runs something on this
// machine (its own code, or a program it starts) and so needs --trust.
func (p Permissions) NeedsTrust() bool { return p.Code || len(p.Spawn) > 0 }

// Permissions computes what the manifest's providers can reach.
func (m *Manifest) Permissions() Permissions {
	net, env, spawn := map[string]bool{}, map[string]bool{}, map[string]bool{}
	code := false
	for _, p := range m.Providers {
		switch p.Kind {
		case KindHTTP:
			if h := urlHost(reTemplate().ReplaceAllString(p.BaseURL, "*")); h != "" {
				net[h] = true
			}
			if p.Auth != nil {
				for _, e := range p.Auth.Env {
					env[e] = true
				}
			}
		case KindMCP:
			if p.URL != "" {
				if h := urlHost(p.URL); h != "" {
					net[h] = true
				}
			}
			if p.Command != "" {
				if args := SplitCommand(p.Command); len(args) > 0 {
					spawn[path.Base(args[0])] = true
				}
			}
			for _, e := range p.Env {
				env[e] = true
			}
		case KindModule:
			code = true
			for _, h := range p.Network {
				net[h] = true
			}
			for _, e := range p.Env {
				env[e] = true
			}
		}
	}
	return Permissions{Network: setList(net), Env: setList(env), Spawn: setList(spawn), Code: code}
}

func urlHost(s string) string {
	// url.Parse rejects '*' in a host only in some positions; cut the host out by hand.
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(s, "http://")
	}
	if !ok {
		if u, err := url.Parse(s); err == nil {
			return u.Hostname()
		}
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = host[i+1:]
	}
	return strings.ToLower(host)
}

func setList(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
