package check

import (
	"strings"

	"github.com/expr-lang/expr"

	"github.com/halo-lang/halo/host/lang"
)

// scope is what a pipeline value may name: parameters and the `as` names of earlier stages.
type scope struct {
	names  map[string]bool
	agents map[string]bool // agents called by earlier stages, which loop may go back to
}

func (s *scope) list() []string {
	out := make([]string, 0, len(s.names))
	for n := range s.names {
		out = append(out, n)
	}
	return out
}

func (c *checker) checkPipeline(d *lang.PipelineDecl) {
	sc := &scope{names: map[string]bool{}, agents: map[string]bool{}}
	for _, p := range d.Params {
		name := p.Name.Name
		switch {
		case reserved[name]:
			c.errorf(p.Name.Pos, lang.CodeDuplicate, "parameter %s: %s is built in", name, name)
		case sc.names[name]:
			c.errorf(p.Name.Pos, lang.CodeDuplicate, "pipeline %s has two parameters named %s", d.Name.Name, name)
		}
		sc.names[name] = true
		c.checkType(p.Type)
	}
	c.checkType(d.Result)
	if call, ok := d.Start.(*lang.Call); ok {
		c.checkCall(call, sc)
	} else if d.Start != nil {
		c.checkValue(d.Start, sc)
	}
	for i, st := range d.Stages {
		c.checkStage(i, st, sc)
	}
}

func (c *checker) checkStage(i int, st *lang.Stage, sc *scope) {
	if i == 0 && st.Op == lang.OpFallback {
		c.errorf(st.Pos, lang.CodeStage, "|? handles a failure of the stage before it, so it cannot be the first stage")
	}
	switch st.Op {
	case lang.OpLoop:
		c.checkLoop(st.Call, sc)
	case lang.OpYield:
		c.checkYield(st.Call, sc)
	case lang.OpFanOut:
		if len(st.Calls) == 0 {
			c.errorf(st.Pos, lang.CodeStage, "|* { } has no calls")
		}
		for _, call := range st.Calls {
			c.checkStageCall(call, sc)
		}
	default:
		c.checkStageCall(st.Call, sc)
	}
	for _, dir := range st.Directives {
		c.checkDirective(dir)
	}
	if st.As != nil {
		if reserved[st.As.Name] {
			c.errorf(st.As.Pos, lang.CodeDuplicate, "as %s: %s is built in", st.As.Name, st.As.Name)
		}
		sc.names[st.As.Name] = true
	}
}

// checkStageCall checks a |>, |? or fan-out call, which may not be loop or yield.
func (c *checker) checkStageCall(call *lang.Call, sc *scope) {
	if call.Recv == nil && (call.Method.Name == "loop" || call.Method.Name == "yield") {
		op := "|<>"
		if call.Method.Name == "yield" {
			op = "|!"
		}
		c.errorf(call.Pos, lang.CodeStage, "%s(...) is written as its own stage: %s %s(...)", call.Method.Name, op, call.Method.Name)
		return
	}
	c.checkCall(call, sc)
}

func (c *checker) checkLoop(call *lang.Call, sc *scope) {
	if call.Recv != nil || call.Method.Name != "loop" {
		c.errorf(call.Pos, lang.CodeStage, "a |<> stage is loop(Agent, \"condition\", max: n), not %s(...)", call.Target())
		return
	}
	pos := call.Positional()
	if len(pos) != 2 {
		c.errorf(call.Pos, lang.CodeArguments, "loop takes an agent and a condition, as in loop(Fixer, \"context.data.result.exitCode != 0\", max: 3)")
		return
	}
	if id, ok := pos[0].Value.(*lang.Ident); !ok {
		c.errorf(pos[0].Pos, lang.CodeArguments, "loop's first argument is the agent to go back to")
	} else if c.kindOf(id.Name) != "agent" {
		c.undeclared(id.Pos, "agent", id.Name)
	} else if !sc.agents[id.Name] {
		c.errorf(id.Pos, lang.CodeStage, "loop goes back to agent %s's stage, but no stage before it calls %s", id.Name, id.Name)
	}
	if s, ok := pos[1].Value.(*lang.StringLit); !ok || strings.TrimSpace(s.Value) == "" {
		c.errorf(pos[1].Pos, lang.CodeArguments, "loop's condition is a string, such as \"context.data.result.exitCode != 0\"")
	} else if err := c.compileCondition(s.Value); err != nil {
		// Compiled the way host/runtime compiles it. A warning for now: the runtime reports
		// the same condition when the loop is reached.
		c.warn(s.Pos, lang.CodeBadCondition, "loop condition %q is not a valid expression: %s", s.Value, firstLine(err.Error()))
	}
	for _, a := range call.Args {
		if a.Name == nil {
			continue
		}
		if a.Name.Name != "max" {
			c.errorf(a.Pos, lang.CodeArguments, "loop has no option %s; it takes max:", a.Name.Name)
			continue
		}
		if n, ok := a.Value.(*lang.NumberLit); !ok || n.Value < 1 || !n.IsInteger() {
			c.errorf(a.Value.Position(), lang.CodeArguments, "max: must be a whole number, 1 or more")
		}
	}
}

func (c *checker) checkYield(call *lang.Call, sc *scope) {
	if call.Recv != nil || call.Method.Name != "yield" {
		c.errorf(call.Pos, lang.CodeStage, "a |! stage is yield(\"question\"), not %s(...)", call.Target())
		return
	}
	if len(call.Args) != 1 || call.Args[0].Name != nil {
		c.errorf(call.Pos, lang.CodeArguments, "yield takes one argument, the question for a person")
		return
	}
	c.checkValue(call.Args[0].Value, sc)
}

func (c *checker) checkDirective(d *lang.Directive) {
	name := d.Name.Name
	if !directives[name] {
		c.errorf(d.Name.Pos, lang.CodeUndeclared, "unknown directive @%s; directives are @retry, @timeout and @correct%s", name, suggest(name, keys(directives)))
		return
	}
	if len(d.Args) != 1 || d.Args[0].Name != nil {
		c.errorf(d.Pos, lang.CodeArguments, "@%s takes one number", name)
		return
	}
	n, ok := d.Args[0].Value.(*lang.NumberLit)
	switch {
	case !ok:
		c.errorf(d.Args[0].Pos, lang.CodeArguments, "@%s takes a number", name)
	case name == "timeout" && n.Value <= 0:
		c.errorf(n.Pos, lang.CodeArguments, "@timeout takes milliseconds, more than 0")
	case name != "timeout" && (n.Value < 0 || !n.IsInteger()):
		c.errorf(n.Pos, lang.CodeArguments, "@%s takes a whole number, 0 or more", name)
	}
}

func (c *checker) isSystem(name string) bool {
	return name == "Value" || name == "Fail" || c.cfg.IsSystemMethod != nil && c.cfg.IsSystemMethod(name)
}

func (c *checker) checkCall(call *lang.Call, sc *scope) {
	if call.Recv == nil {
		name := call.Method.Name
		if c.kindOf(name) != "pipeline" {
			c.undeclared(call.Method.Pos, "pipeline", name)
		}
		for _, a := range call.Args {
			c.checkValue(a.Value, sc)
		}
		return
	}
	recv := call.Recv.Name
	if recv == "System" {
		if !c.isSystem(call.Method.Name) {
			c.errorf(call.Method.Pos, lang.CodeUndeclared, "System has no method %s%s", call.Method.Name, suggestOr(call.Method.Name, []string{"Value", "Fail"}))
		}
		for _, a := range call.Args {
			c.checkValue(a.Value, sc)
		}
		return
	}
	switch c.kindOf(recv) {
	case "agent":
		agent := c.decls[recv].(*lang.AgentDecl)
		sc.agents[recv] = true
		for _, a := range call.Args {
			if a.Name == nil {
				c.checkValue(a.Value, sc)
				continue
			}
			switch a.Name.Name {
			case "tools", "temp", "temperature", "max_steps", "tool_result_chars", "max_tokens":
				c.checkAgentOption(agent, a)
			case "tool":
				if id, ok := a.Value.(*lang.Ident); !ok {
					c.errorf(a.Value.Position(), lang.CodeToolConfig, "tool: names one declared tool")
				} else if c.kindOf(id.Name) != "tool" {
					c.undeclared(id.Pos, "tool", id.Name)
				} else {
					c.checkToolFirst(agent, id)
				}
			default:
				c.checkValue(a.Value, sc)
			}
		}
	case "tool":
		for _, a := range call.Args {
			c.checkValue(a.Value, sc)
		}
	case "":
		names := append(c.namesOf("agent"), c.namesOf("tool")...)
		c.errorf(call.Recv.Pos, lang.CodeUndeclared, "undeclared agent or tool %s%s", recv, suggest(recv, append(names, "System")))
		for _, a := range call.Args {
			if a.Name == nil || a.Name.Name != "tools" && a.Name.Name != "tool" {
				c.checkValue(a.Value, sc)
			}
		}
	default:
		c.errorf(call.Recv.Pos, lang.CodeUndeclared, "%s is %s; only agents, tools and System have methods", recv, article(c.kindOf(recv)))
	}
}

// checkValue checks a value inside a pipeline: names must be parameters or earlier stages'
// `as` names, and {{templates}} should name one.
func (c *checker) checkValue(v lang.Expr, sc *scope) {
	switch x := v.(type) {
	case *lang.Ident:
		if !sc.names[x.Name] {
			c.undeclaredValue(x.Pos, x.Name, sc)
		}
	case *lang.Path:
		if !x.IsContext() && !sc.names[x.Parts[0].Name] {
			c.undeclaredValue(x.Pos, x.Parts[0].Name, sc)
		}
	case *lang.StringLit:
		for _, t := range x.Templates() {
			root, _, _ := strings.Cut(t, ".")
			if root != "context" && !sc.names[root] {
				c.warn(x.Pos, lang.CodeUndeclared, "template {{%s}} names no parameter or earlier stage result%s", t, suggest(root, sc.list()))
			}
		}
	case *lang.ListLit:
		for _, e := range x.Elems {
			c.checkValue(e, sc)
		}
	case *lang.ObjectLit:
		for _, f := range x.Fields {
			c.checkValue(f.Value, sc)
		}
	case *lang.Call:
		c.checkCall(x, sc)
	}
}

func (c *checker) undeclaredValue(pos lang.Pos, name string, sc *scope) {
	switch {
	case name == "auto" || name == "none":
		c.errorf(pos, lang.CodeArguments, "%s is a value of tools: only", name)
	case c.kindOf(name) != "":
		c.errorf(pos, lang.CodeUndeclared, "%s is %s, not a value; values are parameters, `as` names and context paths", name, article(c.kindOf(name)))
	default:
		c.errorf(pos, lang.CodeUndeclared, "undeclared name %s: not a parameter or an earlier stage's `as` name%s", name, suggest(name, sc.list()))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// compileCondition compiles a loop condition once per distinct text.
func (c *checker) compileCondition(src string) error {
	if err, ok := c.condErrs[src]; ok {
		return err
	}
	_, err := expr.Compile(src, expr.AsBool(), expr.AllowUndefinedVariables())
	if c.condErrs == nil {
		c.condErrs = map[string]error{}
	}
	c.condErrs[src] = err
	return err
}
