package check

import (
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/lang/shell"
	"halolang.dev/halo/host/tool"
)

// A methodKey names a method of a provider type.
type methodKey struct{ provider, method string }

// checkShellCommand checks the {{templates}} written in a tool call's shell command line
// (Bash's command, where the provider's description names one, as the runtime finds it):
// an error where no quoting keeps a value one word, and a warning at {{raw name}}, whose
// value goes in as written.
func (c *checker) checkShellCommand(call *lang.Call) {
	td, ok := c.decls[call.Recv.Name].(*lang.ToolDecl)
	if !ok || c.cfg.ToolMethods == nil {
		return
	}
	ms, ok := c.cfg.ToolMethods(td.Provider.Name)
	if !ok {
		return
	}
	name := ""
	if call.Method != nil {
		name = call.Method.Name
	}
	m, ok := tool.CalledMethod(ms, name)
	if !ok || m.Shell == "" {
		return
	}
	key := methodKey{td.Provider.Name, m.Name}
	fills, seen := c.shellFirst[key]
	if !seen {
		fills = m.ShellFillsFirst()
		if c.shellFirst == nil {
			c.shellFirst = map[methodKey]bool{}
		}
		c.shellFirst[key] = fills
	}
	s := shell.Command(call.Args, m.Shell, fills)
	if s == nil {
		return
	}
	for _, t := range shell.Parse(s.Value) {
		switch {
		case t.Raw:
			c.warn(s.Pos(), CodeShellTemplate, "{{raw %s}} puts %s into the shell command as written: a value holding ; or $(...) runs as shell; write {{%s}} to have it quoted as one word", t.Name, t.Name, t.Name)
		case t.Problem != "":
			c.errorf(s.Pos(), CodeShellTemplate, "{{%s}} stands %s: no quoting keeps its value one word there; move it, or write {{raw %s}} to put it in as written", t.Name, t.Problem, t.Name)
		}
	}
}
