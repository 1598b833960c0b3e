package lang

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Dump writes f's syntax tree as indented text, one node a line with its line:col. The
// format is for people and golden tests; it may change between releases.
func Dump(w io.Writer, f *File) error {
	d := &dumper{w: w}
	d.line(0, Pos{}, "file %s", f.Name)
	for _, decl := range f.Decls {
		d.decl(1, decl)
	}
	return d.err
}

type dumper struct {
	w   io.Writer
	err error
}

func (d *dumper) line(depth int, pos Pos, format string, args ...any) {
	if d.err != nil {
		return
	}
	at := ""
	if pos.IsValid() {
		at = fmt.Sprintf("%d:%d ", pos.Line, pos.Col)
	}
	_, d.err = fmt.Fprintf(d.w, "%s%s%s\n", strings.Repeat("  ", depth), at, fmt.Sprintf(format, args...))
}

func (d *dumper) decl(n int, decl Decl) {
	switch x := decl.(type) {
	case *PolicyDecl:
		d.line(n, x.Pos, "policy %s", x.Name.Name)
		for _, r := range x.Rules {
			d.line(n+1, r.Pos, "rule %s parens=%v", r.Name.Name, r.Parens)
			d.args(n+2, r.Args)
		}
	case *ToolDecl:
		d.line(n, x.Pos, "tool %s : %s", x.Name.Name, x.Provider.Name)
		d.args(n+1, x.Args)
	case *AgentDecl:
		d.line(n, x.Pos, "agent %s", x.Name.Name)
		d.line(n+1, x.Model.Pos, "model provider=%q name=%q", x.Model.Provider, x.Model.Name)
		d.args(n+1, x.Settings)
		if x.System != nil {
			d.line(n+1, x.System.Pos(), "system %s", strconv.Quote(x.System.Value))
		}
		for _, id := range x.Equips {
			d.line(n+1, id.Pos(), "equips %s", id.Name)
		}
		for _, id := range x.Requires {
			d.line(n+1, id.Pos(), "requires %s", id.Name)
		}
	case *SchemaDecl:
		d.line(n, x.Pos, "schema %s", x.Name.Name)
		for _, f := range x.Fields {
			d.line(n+1, f.Name.Pos(), "field %s %s", f.Name.Name, f.Type)
		}
	case *PipelineDecl:
		d.line(n, x.Pos, "pipeline %s -> %s", x.Name.Name, x.Result)
		for _, pa := range x.Params {
			d.line(n+1, pa.Name.Pos(), "param %s %s", pa.Name.Name, pa.Type)
		}
		d.line(n+1, x.Start.Position(), "start")
		d.expr(n+2, x.Start)
		d.stages(n+1, x.Stages)
	}
}

func (d *dumper) stages(n int, stages []*Stage) {
	for _, st := range stages {
		as := ""
		if st.As != nil {
			as = " as " + st.As.Name
		}
		item := ""
		if st.Item != nil {
			item = " item=" + st.Item.Name
		}
		d.line(n, st.Pos, "stage %s%s%s", st.Op, item, as)
		if st.Call != nil {
			d.expr(n+1, st.Call)
		}
		for _, c := range st.Calls {
			d.expr(n+1, c)
		}
		for _, arm := range st.Arms {
			if arm.Cond == nil {
				d.line(n+1, arm.Pos, "arm else")
			} else {
				d.line(n+1, arm.Pos, "arm %s", strconv.Quote(arm.Cond.Value))
			}
			d.stages(n+2, arm.Stages)
		}
		for _, dir := range st.Directives {
			d.line(n+1, dir.Pos, "@%s", dir.Name.Name)
			d.args(n+2, dir.Args)
		}
	}
}

func (d *dumper) args(n int, args []*Arg) {
	for _, a := range args {
		if a.Name != nil {
			d.line(n, a.Position(), "%s:", a.Name.Name)
			d.expr(n+1, a.Value)
		} else {
			d.expr(n, a.Value)
		}
	}
}

func (d *dumper) expr(n int, e Expr) {
	switch x := e.(type) {
	case *StringLit:
		d.line(n, x.Pos(), "string %s", strconv.Quote(x.Value))
	case *NumberLit:
		d.line(n, x.Pos, "number %s", x.Raw)
	case *BoolLit:
		d.line(n, x.Pos, "bool %v", x.Value)
	case *NullLit:
		d.line(n, x.Pos, "null")
	case *Ident:
		d.line(n, x.Pos(), "ident %s", x.Name)
	case *EnvRef:
		d.line(n, x.Pos, "env %s", x.Name.Name)
	case *Path:
		d.line(n, x.Pos, "path %s", x)
	case *ListLit:
		d.line(n, x.Pos, "list")
		for _, el := range x.Elems {
			d.expr(n+1, el)
		}
	case *ObjectLit:
		d.line(n, x.Pos, "object")
		for _, f := range x.Fields {
			d.line(n+1, f.Pos, "key %s quoted=%v", strconv.Quote(f.Key), f.Quoted)
			d.expr(n+2, f.Value)
		}
	case *Call:
		target := x.Target()
		if x.Quoted {
			target = x.Recv.Name + ".`" + x.Method.Name + "`"
		}
		d.line(n, x.Pos(), "call %s", target)
		d.args(n+1, x.Args)
	default:
		d.line(n, Pos{}, "?%T", e)
	}
}
