package plan

import (
	"strconv"
	"strings"

	"halolang.dev/halo/host/lang"
)

// directives reads a stage's @retry(n) and @correct(n); st is nil for a start value.
func directives(st *lang.Stage) (retry, correct int) {
	if st == nil {
		return 0, 0
	}
	return directiveInt(st.Directive("retry")), directiveInt(st.Directive("correct"))
}

func directiveInt(d *lang.Directive) int {
	if d != nil && len(d.Args) == 1 {
		if n, ok := d.Args[0].Value.(*lang.NumberLit); ok && n.Value > 0 {
			return int(n.Value)
		}
	}
	return 0
}

// loopArgs reads loop(Agent, "condition", max: n); max is 3 when not written.
func loopArgs(st *lang.Stage) (string, int) {
	agent, max := "", 3
	if pos := st.Call.Positional(); len(pos) > 0 {
		if id, ok := pos[0].Value.(*lang.Ident); ok {
			agent = id.Name
		}
	}
	if a := st.Call.Named("max"); a != nil {
		if n, ok := a.Value.(*lang.NumberLit); ok {
			max = int(n.Value)
		}
	}
	return agent, max
}

// callsAgent reports whether a loop for agent goes back to st, as the runtime decides it.
func callsAgent(st *lang.Stage, agent string) bool {
	if st.Call != nil && st.Call.Recv != nil && st.Call.Recv.Name == agent {
		return true
	}
	for _, c := range st.Calls {
		if c.Recv != nil && c.Recv.Name == agent {
			return true
		}
	}
	return false
}

// callText is a short form of a call: its target, and for loop, yield and listen their
// arguments.
func callText(c *lang.Call) string {
	if c == nil {
		return ""
	}
	switch {
	case c.Recv == nil && (c.Method.Name == "loop" || c.Method.Name == "yield" || c.Method.Name == "listen"):
		var args []string
		for _, a := range c.Args {
			t, _ := exprText(a.Value)
			switch x := a.Value.(type) {
			case *lang.StringLit:
				t = strconv.Quote(t)
			case *lang.Ident:
				t = x.Name
			case *lang.Path:
				t = x.String()
			}
			if a.Name != nil {
				t = a.Name.Name + ": " + t
			}
			args = append(args, t)
		}
		return c.Method.Name + "(" + strings.Join(args, ", ") + ")"
	case c.Recv == nil:
		return c.Method.Name + "(...)"
	}
	return c.Target()
}

// exprText is how an argument reads in a prompt before the run fills it in, and how many
// values known only at run time it holds (names, paths, {{templates}}).
func exprText(e lang.Expr) (string, int64) {
	switch x := e.(type) {
	case *lang.StringLit:
		return x.Value, int64(len(x.Templates()))
	case *lang.NumberLit:
		return x.Raw, 0
	case *lang.BoolLit:
		return strconv.FormatBool(x.Value), 0
	case *lang.NullLit:
		return "null", 0
	case *lang.Ident:
		return "", 1
	case *lang.Path:
		return "", 1
	case *lang.EnvRef:
		return "", 1
	case *lang.ListLit:
		var parts []string
		var n int64
		for _, el := range x.Elems {
			t, v := exprText(el)
			parts = append(parts, t)
			n += v
		}
		return "[" + strings.Join(parts, ",") + "]", n
	case *lang.ObjectLit:
		var parts []string
		var n int64
		for _, f := range x.Fields {
			t, v := exprText(f.Value)
			parts = append(parts, strconv.Quote(f.Key)+":"+t)
			n += v
		}
		return "{" + strings.Join(parts, ",") + "}", n
	}
	return "", 1
}
