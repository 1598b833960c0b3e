package mcpserver

import (
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/tool"
)

// reach is what a pipeline can do, as far as its source says: the effects of every tool
// method it can reach (its own tool stages, the tools its agent calls may use, and those of
// the pipelines it calls), and whether any of them is unknown before a run (an MCP server's
// tools, a method the provider type does not describe).
type reach struct {
	effects map[tool.Effect]bool
	unknown bool
}

// reachOf walks pd. effectsOf returns the methods a provider type describes without opening
// anything (nil when it cannot say).
func reachOf(prog *lang.Program, pd *lang.PipelineDecl, effectsOf func(provider string) []tool.Method) reach {
	r := reach{effects: map[tool.Effect]bool{}}
	seen := map[string]bool{}
	var walk func(pd *lang.PipelineDecl)
	methods := func(td *lang.ToolDecl) []tool.Method {
		if effectsOf == nil {
			return nil
		}
		return effectsOf(td.Provider.Name)
	}
	useTool := func(td *lang.ToolDecl, method string) {
		if td == nil {
			r.unknown = true
			return
		}
		ms := methods(td)
		if ms == nil {
			r.unknown = true
			return
		}
		if method != "" {
			m, ok := tool.FindMethod(ms, method)
			if !ok {
				r.unknown = true
				return
			}
			r.effects[m.EffectOrDefault()] = true
			return
		}
		for _, m := range ms {
			if !m.PipelineOnly {
				r.effects[m.EffectOrDefault()] = true
			}
		}
	}
	var call func(c *lang.Call)
	call = func(c *lang.Call) {
		if c == nil {
			return
		}
		if c.Recv == nil {
			if sub := prog.Pipeline(c.Method.Name); sub != nil {
				walk(sub)
			}
			return
		}
		if c.Recv.Name == "System" {
			return
		}
		if td := prog.Tool(c.Recv.Name); td != nil {
			useTool(td, c.Method.Name)
			return
		}
		a := prog.Agent(c.Recv.Name)
		if a == nil {
			r.unknown = true
			return
		}
		auto := isAuto(a.Setting("tools"))
		for _, arg := range c.Args {
			if arg.Name == nil {
				continue
			}
			switch arg.Name.Name {
			case "tool":
				if id, ok := arg.Value.(*lang.Ident); ok {
					useTool(prog.Tool(id.Name), "")
				}
			case "tools":
				auto = false
				switch x := arg.Value.(type) {
				case *lang.Ident:
					auto = x.Name == "auto"
				case *lang.ListLit:
					for _, el := range x.Elems {
						if id, ok := el.(*lang.Ident); ok {
							useTool(prog.Tool(id.Name), "")
						} else {
							r.unknown = true
						}
					}
				default:
					r.unknown = true
				}
			}
		}
		if auto {
			for _, id := range a.Equips {
				useTool(prog.Tool(id.Name), "")
			}
		}
	}
	walk = func(pd *lang.PipelineDecl) {
		if seen[pd.Name.Name] {
			return
		}
		seen[pd.Name.Name] = true
		// The start and every call of every stage, branch arms and each included; loop(...),
		// yield(...) and listen(...) name no pipeline, so they reach nothing.
		for _, c := range pd.Calls() {
			call(c)
		}
	}
	walk(pd)
	return r
}

func isAuto(a *lang.Arg) bool {
	if a == nil {
		return false
	}
	id, ok := a.Value.(*lang.Ident)
	return ok && id.Name == "auto"
}

// readOnly reports whether every method the pipeline can reach only reads.
func (r reach) readOnly() bool {
	return !r.unknown && !r.effects[tool.Write] && !r.effects[tool.External]
}

// openWorld reports whether the pipeline can act outside this machine: an external method,
// or one whose effect is unknown.
func (r reach) openWorld() bool { return r.unknown || r.effects[tool.External] }
