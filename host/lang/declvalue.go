package lang

import (
	"errors"
	"fmt"
	"strings"
)

// A DeclEnv is what evaluating a tool declaration's values can read.
type DeclEnv struct {
	// Getenv reads Env.NAME. Nil means the environment is not known: a value that reads it
	// is unknown (ErrUnknown).
	Getenv func(name string) (string, bool)
	// RequireEnv makes an unset Env.NAME an error; otherwise it is "", as a run reads it.
	RequireEnv bool
	// Fill fills a string's {{templates}} (a run fills them from its inputs). Nil means a
	// string with a template is unknown (ErrUnknown).
	Fill func(s string) (string, error)
}

// ErrUnknown is wrapped by DeclValue's error for a value its DeclEnv cannot know: a
// {{template}} before a run, Env.NAME where the environment is not read.
var ErrUnknown = errors.New("known only when a pipeline runs")

// DeclValue evaluates one value of a tool declaration (`tool X : Provider(args)`), the one way
// every part of Halo reads them (the checker before a run, `halo tools`, the runtime when a tool
// opens): strings (their {{templates}} filled by env.Fill), numbers, booleans, null, lists,
// objects and Env.NAME, as JSON-like Go values. A bare name, a path or a call is an error: a
// declaration is outside every pipeline, so there is nothing for it to name.
func DeclValue(e Expr, env DeclEnv) (any, error) {
	return declValue(e, env, false)
}

// StaticValue is a declaration's value as far as it is known before a run, with nothing read:
// nil for a value, or a list element or object field, that DeclValue could not give. Checks
// that judge only what they can know read declarations with it.
func StaticValue(e Expr) any {
	v, _ := declValue(e, DeclEnv{}, true)
	return v
}

// StaticArgs are td's arguments as far as they are known before a run (StaticValue of
// each): the positional ones in order, and the named ones by name.
func (td *ToolDecl) StaticArgs() (args []any, named map[string]any) {
	named = map[string]any{}
	for _, a := range td.Args {
		if a.Name == nil {
			args = append(args, StaticValue(a.Value))
		} else {
			named[a.Name.Name] = StaticValue(a.Value)
		}
	}
	return args, named
}

// declValue is DeclValue, or StaticValue when partial: then a value that cannot be known is
// nil, and no error is made for it (halo validate reads every declaration so).
func declValue(e Expr, env DeclEnv, partial bool) (any, error) {
	switch x := e.(type) {
	case *StringLit:
		if !strings.Contains(x.Value, "{{") {
			return x.Value, nil // no template: the common case, without listing them
		}
		ts := x.Templates()
		switch {
		case len(ts) == 0:
			return x.Value, nil
		case partial && env.Fill == nil:
			return nil, nil
		case env.Fill == nil:
			return nil, fmt.Errorf("%s: {{%s}} is %w", x.Pos(), ts[0], ErrUnknown)
		}
		s, err := env.Fill(x.Value)
		if err != nil {
			if partial {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: %w", x.Pos(), err)
		}
		return s, nil
	case *NumberLit:
		return x.Value, nil
	case *BoolLit:
		return x.Value, nil
	case *NullLit:
		return nil, nil
	case *EnvRef:
		switch {
		case env.Getenv == nil && partial:
			return nil, nil
		case env.Getenv == nil:
			return nil, fmt.Errorf("%s: Env.%s is %w", x.Pos, x.Name.Name, ErrUnknown)
		}
		v, ok := env.Getenv(x.Name.Name)
		if !ok && env.RequireEnv {
			if partial {
				return nil, nil
			}
			return nil, fmt.Errorf("%s: Env.%s is not set", x.Pos, x.Name.Name)
		}
		return v, nil
	case *ListLit:
		out := make([]any, len(x.Elems))
		for i, el := range x.Elems {
			v, err := declValue(el, env, partial)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *ObjectLit:
		out := make(map[string]any, len(x.Fields))
		for _, f := range x.Fields {
			v, err := declValue(f.Value, env, partial)
			if err != nil {
				return nil, err
			}
			out[f.Key] = v
		}
		return out, nil
	case nil:
		return nil, nil
	}
	if partial {
		return nil, nil
	}
	return nil, fmt.Errorf("%s: a tool declaration's values are literals, lists, objects, {{templates}} and Env.NAME; quote text", e.Position())
}
