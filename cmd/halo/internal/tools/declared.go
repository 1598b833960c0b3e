package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/halo-lang/halo/cmd/halo/internal/cmdutil"
	"github.com/halo-lang/halo/host/lang"
	"github.com/halo-lang/halo/host/tool"
)

// declaredServers asks the server of each tool declared in the project's .halo files whose
// provider type has no static methods (MCP) for its methods, each within timeout. A server
// that fails or is slow is reported on its line; it never fails the command.
func declaredServers(ctx context.Context, f *cmdutil.Factory, reg *tool.Registry, timeout time.Duration) []Declared {
	prog, _ := lang.Load(f.Dir, []string{"."}) // `halo validate` reports the files' problems
	if prog == nil {
		return nil
	}
	var out []Declared
	for _, decl := range prog.Decls() {
		td, ok := decl.(*lang.ToolDecl)
		if !ok || td.Name == nil || td.Provider == nil {
			continue
		}
		t, ok := reg.Lookup(td.Provider.Name)
		if !ok || t.Methods != nil {
			continue
		}
		d := Declared{Tool: td.Name.Name, Provider: td.Provider.Name, File: td.Pos.String()}
		methods, err := listMethods(ctx, f, reg, td, timeout)
		if err != nil {
			d.Error = err.Error()
		} else {
			for i := range methods {
				methods[i].Effect = methods[i].EffectOrDefault()
			}
			d.Methods = methods
		}
		out = append(out, d)
	}
	sortDeclared(out)
	return out
}

func listMethods(ctx context.Context, f *cmdutil.Factory, reg *tool.Registry, td *lang.ToolDecl, timeout time.Duration) ([]tool.Method, error) {
	d := tool.Declaration{Name: td.Name.Name, Provider: td.Provider.Name, Named: map[string]any{}, Dir: f.Dir, Getenv: f.Env.Lookup}
	// Read as a run reads them, but before any run: a {{template}} is not known yet, and an
	// unset Env.NAME is said so rather than sent as "".
	env := lang.DeclEnv{Getenv: f.Env.Lookup, RequireEnv: true}
	for _, a := range td.Args {
		v, err := lang.DeclValue(a.Value, env)
		if err != nil {
			return nil, err
		}
		if a.Name == nil {
			d.Args = append(d.Args, v)
		} else {
			d.Named[a.Name.Name] = v
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := reg.Open(ctx, d)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	methods, err := p.Methods(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("no answer within %s", timeout)
	}
	return methods, err
}
