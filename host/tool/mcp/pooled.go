package mcp

import (
	"context"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/pool"
)

// Pooled returns t with each declaration's connection kept by pl: one connection (a stdio
// server's process, an HTTP session) per declaration and configuration, shared by every
// call and run that uses the declaration, started on first use and again after the server
// exits (Provider does both). Wrap it inside Pinned, so each run's pins are read as before,
// and outside Confined, whose confinement is part of the configuration.
func Pooled(t tool.Type, pl *pool.Pool) tool.Type {
	if pl == nil {
		return t
	}
	open := t.Open
	t.Open = func(ctx context.Context, d tool.Declaration) (tool.Provider, error) {
		p, err := open(ctx, d)
		if err != nil {
			return nil, err
		}
		mp, ok := p.(*Provider)
		if !ok {
			return p, nil
		}
		key, err := mp.key()
		if err != nil {
			mp.Close()
			return nil, tool.Errorf(tool.CodeToolConfig, "MCP tool %s: %v", d.Name, err)
		}
		made := false
		lease, err := pl.Lease(pool.Spec{
			Key: key, Name: "MCP tool " + d.Name, Shared: true, Batch: d.Batch,
			New:      func() (pool.Resource, error) { made = true; return mp, nil },
			Provider: func(r pool.Resource) (tool.Provider, error) { return shared{r.(*Provider)}, nil },
		})
		if !made {
			mp.Close() // never connected: the pool's connection serves instead
		}
		return lease, err
	}
	return t
}

// shared is a run's use of a pooled connection: closing it leaves the connection to the pool.
type shared struct{ *Provider }

func (shared) Close() error { return nil }

// Unwrap returns the provider (halo tools reads its confinement).
func (s shared) Unwrap() tool.Provider { return s.Provider }

// key is what identifies the provider's server and connection: the declared name and every
// option that decides what is started or reached (pool.Key keeps only a digest of them, so
// the key holds no variable's value or key in clear).
func (p *Provider) key() (string, error) {
	c := p.cfg
	return pool.Key("mcp", c.Name, c.Command, c.Env, c.Dir, c.URL, c.APIKey, c.Headers, c.Timeout, c.MaxResultBytes, c.Sandbox)
}
