package runtime

import (
	"strings"

	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/lang/shell"
)

// A scope is what values in a pipeline can name: the pipeline's inputs, the `as` names of
// earlier stages, and context.
type scope struct {
	inputs map[string]any
	st     *state
	env    map[string]string
	ctxMap map[string]any // context snapshot, made on first use
	// shellLit, when not nil, is the string written for a tool call's shell command line
	// (shell.Command): its templates are quoted as shell words (fillShell).
	shellLit *lang.StringLit
}

func (sc *scope) context() map[string]any {
	if sc.ctxMap == nil {
		sc.ctxMap = sc.st.snapshot(sc.inputs)
	}
	return sc.ctxMap
}

// name resolves a bare name: an `as` name of an earlier stage, else an input.
func (sc *scope) name(n string) (any, bool) {
	if v, ok := sc.st.get(n); ok {
		return v, true
	}
	v, ok := sc.inputs[n]
	return v, ok
}

// path resolves a dotted path: context.… or a field of a name.
func (sc *scope) path(parts []string) (any, error) {
	var cur any
	if parts[0] == "context" {
		cur = sc.context()
	} else {
		v, ok := sc.name(parts[0])
		if !ok {
			return nil, errorf(CodeInternal, "%s is not a parameter or an earlier stage's `as` name", parts[0])
		}
		cur = v
	}
	for _, p := range parts[1:] {
		m, ok := cur.(map[string]any)
		if !ok {
			// A missing field reads as null, as in JavaScript: conditions and templates on a
			// result that lacks the field see null instead of failing the run.
			return nil, nil
		}
		cur = m[p]
	}
	return cur, nil
}

// eval computes the value of a pipeline expression.
func (sc *scope) eval(e lang.Expr) (any, error) {
	switch x := e.(type) {
	case nil:
		return nil, nil
	case *lang.StringLit:
		if x == sc.shellLit {
			return sc.fillShell(x.Value)
		}
		return sc.fill(x.Value)
	case *lang.NumberLit:
		return x.Value, nil
	case *lang.BoolLit:
		return x.Value, nil
	case *lang.NullLit:
		return nil, nil
	case *lang.Ident:
		v, ok := sc.name(x.Name)
		if !ok {
			return nil, errorf(CodeInternal, "%s: %s is not a parameter or an earlier stage's `as` name", x.Pos(), x.Name)
		}
		return v, nil
	case *lang.EnvRef:
		return sc.env[x.Name.Name], nil
	case *lang.Path:
		names := make([]string, len(x.Parts))
		for i, p := range x.Parts {
			names[i] = p.Name
		}
		return sc.path(names)
	case *lang.ListLit:
		out := make([]any, len(x.Elems))
		for i, el := range x.Elems {
			v, err := sc.eval(el)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case *lang.ObjectLit:
		out := make(map[string]any, len(x.Fields))
		for _, f := range x.Fields {
			v, err := sc.eval(f.Value)
			if err != nil {
				return nil, err
			}
			out[f.Key] = v
		}
		return out, nil
	}
	return nil, errorf(CodeInternal, "%s: a %T cannot be used as a value here", e.Position(), e)
}

// fill replaces each {{name}} or {{a.b.c}} in s with its value: strings as they are, other
// values as JSON. A name that resolves to nothing is left as written.
func (sc *scope) fill(s string) (string, error) {
	if !strings.Contains(s, "{{") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "}}")
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		name, _ := lang.TemplateName(s[i+2 : i+2+j])
		raw := s[i : i+2+j+2]
		s = s[i+2+j+2:]
		if v, ok := sc.template(name); ok {
			b.WriteString(v)
		} else {
			b.WriteString(raw)
		}
	}
	b.WriteString(s)
	return b.String(), nil
}

// fillShell fills the templates of a shell command line (Bash's command): each value goes
// in quoted as one shell word where it stands, a {{raw name}} as written (halo validate
// warns of it), and a template that stands where no quoting is safe fails the call
// (SHELL_TEMPLATE; halo validate reports it first).
func (sc *scope) fillShell(s string) (string, error) {
	ts := shell.Parse(s)
	if len(ts) == 0 {
		return s, nil
	}
	var b strings.Builder
	last := 0
	for _, t := range ts {
		b.WriteString(s[last:t.Start])
		last = t.End
		v, ok := sc.template(t.Name)
		switch {
		case !ok:
			b.WriteString(s[t.Start:t.End])
		case t.Raw:
			b.WriteString(v)
		case t.Problem != "":
			return "", errorf(check.CodeShellTemplate, "{{%s}} stands %s in a shell command: no quoting keeps its value one word there; move it, or write {{raw %s}} to put it in as written", t.Name, t.Problem, t.Name)
		default:
			b.WriteString(shell.Quote(v, t.Context))
		}
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// template resolves a template's name ("name", "name.field", "context.data.x") to the text
// it fills in: strings as they are, other values as JSON.
func (sc *scope) template(name string) (string, bool) {
	v, ok := sc.templateValue(name)
	if !ok {
		return "", false
	}
	return text(v), true
}

// templateValue is the value a template's name stands for. A plain name (the usual
// placeholder) is looked up without splitting it into parts.
func (sc *scope) templateValue(name string) (any, bool) {
	if !strings.Contains(name, ".") {
		return sc.name(name)
	}
	parts := strings.Split(name, ".")
	if _, known := sc.name(parts[0]); !known && parts[0] != "context" {
		return nil, false
	}
	v, err := sc.path(parts)
	return v, err == nil
}
