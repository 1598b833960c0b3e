package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"halolang.dev/halo/sdk/internal/wire"
)

// A Provider is one provider type, as `tool X : Name(...)` declarations name it. One plugin
// executable can serve several.
type Provider struct {
	// Name is what declarations write after the colon: a capital letter, then letters and
	// digits (`WorldTime`).
	Name string
	// Description is one line for people, shown by `halo tools`.
	Description string
	// Methods lists every method the provider can offer.
	Methods []Method
	// Configure, when not nil, checks one declaration's arguments. It runs once per
	// declaration; what it returns is that declaration's Instance. An error is shown to the
	// user as TOOL_CONFIG, so say which argument is wrong and how to fix it. Nil accepts any
	// declaration and offers every method.
	Configure func(ctx context.Context, d Declaration) (Instance, error)
	// PerRun says the provider must not be shared across runs. A host keeps a plugin's
	// process for later runs of the same declaration (halo serve, halo mcp), so what a
	// process keeps in memory, in its own files or in processes it started, a later run of
	// that declaration can meet. A provider that keeps anything one run must not see of
	// another's sets PerRun: each run then gets a process of its own, stopped when the run
	// ends.
	PerRun bool
}

// An Instance is one configured declaration.
type Instance struct {
	// State is what the methods of this declaration read with Call.State or StateOf: the
	// root folder of a workspace, a parsed option.
	State any
	// Methods names the methods this declaration offers; nil offers all of them. A read-only
	// workspace, say, leaves out its writing methods.
	Methods []string
}

// A Declaration is one `tool X : Provider(args...)` after the host evaluated it: Env.NAME
// read, {{templates}} filled. Values are what encoding/json produces (string, float64, bool,
// nil, []any, map[string]any).
type Declaration struct {
	// Tool is the declared tool name (`Clock`).
	Tool string
	// Provider is the provider type (`WorldTime`).
	Provider string
	// Args are the positional arguments.
	Args []any
	// Named are the named arguments; never nil.
	Named map[string]any
	// ProjectDir is the absolute project folder; resolve relative paths against it.
	ProjectDir string
}

// Decode fills the struct v from the declaration: the i-th positional argument is taken as
// the named argument positional[i], then the named arguments are decoded into v as JSON
// (so `json` tags apply). An unknown name, a repeated one or a wrong type is an error that
// says which.
//
//	var cfg struct{ Root string `json:"root"`; Write bool `json:"write"` }
//	err := d.Decode(&cfg, "root") // Workspace("./notes", write: true)
func (d Declaration) Decode(v any, positional ...string) error {
	if len(d.Args) > len(positional) {
		if len(positional) == 0 {
			return fmt.Errorf("%s takes no positional argument; pass arguments by name", d.Provider)
		}
		return fmt.Errorf("%s takes at most %d positional argument(s) (%s), got %d", d.Provider, len(positional), strings.Join(positional, ", "), len(d.Args))
	}
	all := map[string]any{}
	for k, val := range d.Named {
		all[k] = val
	}
	for i, val := range d.Args {
		name := positional[i]
		if _, dup := all[name]; dup {
			return fmt.Errorf("%s: %s is given both by position and by name", d.Provider, name)
		}
		all[name] = val
	}
	b, err := json.Marshal(all)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Provider, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %s", d.Provider, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func (p Provider) toWire() wire.Provider {
	w := wire.Provider{Name: p.Name, Description: p.Description, PerRun: p.PerRun}
	for _, m := range p.Methods {
		w.Methods = append(w.Methods, m.toWire())
	}
	if p.Configure != nil {
		configure := p.Configure
		w.Configure = func(ctx context.Context, d wire.Declaration) (any, []string, error) {
			inst, err := configure(ctx, Declaration(d))
			if err != nil {
				return nil, nil, err
			}
			return inst.State, inst.Methods, nil
		}
	}
	return w
}
