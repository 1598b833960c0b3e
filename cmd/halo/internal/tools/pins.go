package tools

import (
	"context"
	"fmt"
	"io"
	"strings"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/policy/detect"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/mcp"
)

// PinReport is what pinning found for a declared MCP tool (see host/tool/mcp's Pinned).
type PinReport struct {
	// Pinned lists the tools pinned in halo.lock by this listing (the first).
	Pinned []string `json:"pinned,omitempty"`
	// Held are the tools neither offered to agents nor callable until halo lock --update.
	Held []HeldTool `json:"held,omitempty"`
	// Gone lists pinned tools the server no longer offers.
	Gone []string `json:"gone,omitempty"`
}

// A HeldTool is a tool held back: new, or changed since it was pinned (Diff).
type HeldTool struct {
	Name string `json:"name"`
	New  bool   `json:"new,omitempty"`
	Diff string `json:"diff,omitempty"`
}

// serverInfo is what halo tools learns about a declared tool's server besides its methods.
type serverInfo struct {
	pins    *PinReport
	sandbox string
}

func infoOf(p tool.Provider) serverInfo {
	info := serverInfo{pins: pinReport(p)}
	if pp, ok := p.(*mcp.PinnedProvider); ok {
		p = pp.Inner()
	}
	if mp, ok := p.(*mcp.Provider); ok {
		if c := mp.Confinement(); c != nil {
			info.sandbox = c.String()
		} else if mp.Stdio() {
			info.sandbox = "not sandboxed: runs as your user, with your files and network (sandbox: true confines it)"
		}
	}
	return info
}

// pinReport returns what p's last listing found, when p is held to pins.
func pinReport(p tool.Provider) *PinReport {
	pp, ok := p.(*mcp.PinnedProvider)
	if !ok {
		return nil
	}
	st := pp.Status()
	r := &PinReport{Pinned: st.Pinned, Gone: st.Gone}
	for _, c := range st.Changed {
		r.Held = append(r.Held, HeldTool{Name: c.Name, New: c.New, Diff: c.Diff})
	}
	return r
}

// InjectionWarnings runs each method's description through the PromptInjection detector:
// a server's descriptions are read by models, and one that gives them orders is a warning.
func InjectionWarnings(toolName string, methods []tool.Method) []string {
	var out []string
	for _, m := range methods {
		if mcp.IsBuiltin(m.Name) {
			continue
		}
		if match, ok := detect.First(m.Description, detect.PromptInjection); ok {
			out = append(out, fmt.Sprintf("%s.%s: its description reads like a prompt injection (%q); read it before letting an agent use it", toolName, m.Name, excerpt(m.Description, match.Start, match.End)))
		}
	}
	return out
}

func excerpt(s string, start, end int) string {
	if end-start > 80 {
		end = start + 80
	}
	return strings.TrimSpace(s[start:end])
}

// OpenDeclaration opens the provider of a tool declared in a .halo file, from its literal
// arguments (halo tools, halo lock). The caller closes it.
func OpenDeclaration(ctx context.Context, f *cmdutil.Factory, reg *tool.Registry, td *lang.ToolDecl) (tool.Provider, error) {
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
	return reg.Open(ctx, d)
}

// printPins writes what pinning found for one declared tool.
func printPins(w io.Writer, d Declared, paint func(code, s string) string) {
	clean := termsafe.String
	if d.Sandbox != "" {
		fmt.Fprintf(w, "  %s\n", clean(d.Sandbox))
	}
	if d.Pins != nil {
		if len(d.Pins.Pinned) > 0 {
			fmt.Fprintf(w, "  pinned in halo.lock now: %d tools (trust on first use)\n", len(d.Pins.Pinned))
		}
		for _, h := range d.Pins.Held {
			what := "changed since it was pinned"
			if h.New {
				what = "new, not pinned"
			}
			fmt.Fprintf(w, "  %s %s is %s: not offered or callable until halo lock --update %s [%s]\n", paint(effectColor[tool.External], "!"), clean(h.Name), what, clean(d.Tool), mcp.CodeToolsChanged)
			for _, line := range strings.Split(h.Diff, "\n") {
				if line != "" {
					fmt.Fprintf(w, "      %s\n", clean(line))
				}
			}
		}
		if len(d.Pins.Gone) > 0 {
			fmt.Fprintf(w, "  pinned but no longer offered: %s\n", clean(strings.Join(d.Pins.Gone, ", ")))
		}
	}
	for _, warn := range d.Warnings {
		fmt.Fprintf(w, "  %s warning: %s\n", paint(effectColor[tool.External], "!"), clean(warn))
	}
}
