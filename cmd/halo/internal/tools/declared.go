package tools

import (
	"context"
	"fmt"
	"time"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/tool"
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
		methods, info, err := listMethods(ctx, f, reg, td, timeout)
		if err != nil {
			d.Error = err.Error()
		} else {
			for i := range methods {
				methods[i].Effect = methods[i].EffectOrDefault()
			}
			d.Methods, d.Pins, d.Warnings, d.Sandbox = methods, info.pins, InjectionWarnings(d.Tool, methods), info.sandbox
		}
		out = append(out, d)
	}
	sortDeclared(out)
	return out
}

func listMethods(ctx context.Context, f *cmdutil.Factory, reg *tool.Registry, td *lang.ToolDecl, timeout time.Duration) ([]tool.Method, serverInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := OpenDeclaration(ctx, f, reg, td)
	if err != nil {
		return nil, serverInfo{}, err
	}
	defer p.Close()
	methods, err := p.Methods(ctx)
	if err != nil && ctx.Err() != nil {
		return nil, serverInfo{}, fmt.Errorf("no answer within %s", timeout)
	}
	return methods, infoOf(p), err
}
