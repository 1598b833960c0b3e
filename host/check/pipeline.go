package check

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"

	"halolang.dev/halo/host/lang"
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
			c.errorf(p.Name.Pos(), CodeDuplicate, "parameter %s: %s is built in", name, name)
		case sc.names[name]:
			c.errorf(p.Name.Pos(), CodeDuplicate, "pipeline %s has two parameters named %s", d.Name.Name, name)
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
	c.checkStages(d.Stages, sc)
}

// child returns a scope for a branch arm or an each item: it sees every name sc does, and
// the names it adds stay inside it. A loop inside an arm goes back only within the arm.
func (s *scope) child() *scope {
	names := make(map[string]bool, len(s.names)+1)
	for n := range s.names {
		names[n] = true
	}
	return &scope{names: names, agents: map[string]bool{}}
}

// checkStages checks a list of stages: a pipeline's body or a branch arm's.
func (c *checker) checkStages(stages []*lang.Stage, sc *scope) {
	for i, st := range stages {
		if i > 0 && st.Op == lang.OpFallback && stages[i-1].Op == lang.OpEach {
			// The |? after an each handles each failed item: it sees the item too.
			inner := sc.child()
			inner.names[stages[i-1].ItemName()] = true
			c.checkStage(i, st, inner)
			if st.As != nil {
				sc.names[st.As.Name] = true
			}
			continue
		}
		c.checkStage(i, st, sc)
	}
}

func (c *checker) checkStage(i int, st *lang.Stage, sc *scope) {
	if i == 0 && st.Op == lang.OpFallback {
		c.errorf(st.Pos, CodeStage, "|? handles a failure of the stage before it, so it cannot be the first stage")
	}
	switch st.Op {
	case lang.OpLoop:
		c.checkLoop(st.Call, sc)
	case lang.OpYield:
		c.checkYield(st.Call, sc)
	case lang.OpListen:
		c.checkListen(st.Call)
	case lang.OpFanOut:
		if len(st.Calls) == 0 {
			c.errorf(st.Pos, CodeStage, "|* { } has no calls")
		}
		for _, call := range st.Calls {
			c.checkStageCall(call, sc)
		}
	case lang.OpEach:
		c.checkEach(st, sc)
	case lang.OpBranch:
		c.checkBranch(st, sc)
	default:
		c.checkStageCall(st.Call, sc)
	}
	for _, dir := range st.Directives {
		c.checkDirective(st, dir)
	}
	if st.As != nil {
		if reserved[st.As.Name] {
			c.errorf(st.As.Pos(), CodeDuplicate, "as %s: %s is built in", st.As.Name, st.As.Name)
		}
		sc.names[st.As.Name] = true
	}
}

// checkEach checks `|* each [name:] Call(...)`: the call sees the item by its name beside
// everything the stage before could name.
func (c *checker) checkEach(st *lang.Stage, sc *scope) {
	name := st.ItemName()
	if st.Item != nil {
		switch {
		case reserved[name]:
			c.errorf(st.Item.Pos(), CodeDuplicate, "|* each %s: %s is built in; give the item another name", name, name)
		case sc.names[name]:
			c.warn(st.Item.Pos(), CodeDuplicate, "|* each %s: the item hides the earlier %s inside the call; give it another name", name, name)
		}
	} else if sc.names[name] {
		c.warn(st.Call.Pos(), CodeDuplicate, "inside |* each, %s is the item, which hides the earlier %s; name the item, as in |* each x: %s(...)", name, name, st.Call.Target())
	}
	inner := sc.child()
	inner.names[name] = true
	c.checkStageCall(st.Call, inner)
	for a := range inner.agents {
		sc.agents[a] = true
	}
}

// checkBranch checks `|> branch { "condition": stages, ..., else: stages }`: each condition
// compiles, and each arm's stages are checked in a scope of their own.
func (c *checker) checkBranch(st *lang.Stage, sc *scope) {
	if len(st.Arms) == 0 {
		c.errorf(st.Pos, CodeStage, "branch { } has no arms; write \"condition\": Call(...) or else: Call(...)")
	}
	for _, arm := range st.Arms {
		if arm.Cond != nil {
			c.checkCondition(arm.Cond, "branch condition", sc)
		}
		c.checkStages(arm.Stages, sc.child())
		for _, in := range arm.Stages {
			if in.Op == lang.OpYield || in.Op == lang.OpListen {
				c.warn(in.Pos, CodeStage, "%s %s(...) inside a branch arm cannot pause the run: without an interrupt handler to answer it, it fails with NOT_PAUSABLE", in.Op, in.Call.Method.Name)
			}
		}
	}
}

// checkCondition checks a loop or branch condition: a non-empty expression that compiles
// the way host/runtime compiles it.
func (c *checker) checkCondition(s *lang.StringLit, what string, sc *scope) {
	if strings.TrimSpace(s.Value) == "" {
		c.errorf(s.Pos(), CodeArguments, "a %s is an expression, such as \"context.data.result.exitCode != 0\"", what)
		return
	}
	names, err := c.compileCondition(s.Value)
	if err != nil {
		c.errorf(s.Pos(), CodeBadCondition, "%s %q is not a valid expression: %s", what, s.Value, firstLine(err.Error()))
		return
	}
	for _, n := range names {
		if n != "context" && !sc.names[n] {
			c.warn(s.Pos(), CodeUndeclared, "%s %q reads %s, which is not a parameter or an earlier stage's `as` name, so it is always null%s", what, s.Value, n, suggest(n, sc.list()).textOnly())
		}
	}
}

// checkStageCall checks a |>, |? or fan-out call, which may not be loop or yield.
func (c *checker) checkStageCall(call *lang.Call, sc *scope) {
	if op := stageOnly[call.Method.Name]; call.Recv == nil && op != "" {
		c.errorf(call.Pos(), CodeStage, "%s(...) is written as its own stage: %s %s(...)", call.Method.Name, op, call.Method.Name)
		return
	}
	c.checkCall(call, sc)
}

func (c *checker) checkLoop(call *lang.Call, sc *scope) {
	if call.Recv != nil || call.Method.Name != "loop" {
		c.errorf(call.Pos(), CodeStage, "a |<> stage is loop(Agent, \"condition\", max: n), not %s(...)", call.Target())
		return
	}
	pos := call.Positional()
	if len(pos) != 2 {
		c.errorf(call.Pos(), CodeArguments, "loop takes an agent and a condition, as in loop(Fixer, \"context.data.result.exitCode != 0\", max: 3)")
		return
	}
	if id, ok := pos[0].Value.(*lang.Ident); !ok {
		c.errorf(pos[0].Position(), CodeArguments, "loop's first argument is the agent to go back to")
	} else if c.kindOf(id.Name) != "agent" {
		c.undeclared(id.Pos(), "agent", id.Name)
	} else if !sc.agents[id.Name] {
		c.errorf(id.Pos(), CodeStage, "loop goes back to agent %s's stage, but no stage before it calls %s", id.Name, id.Name)
	}
	if s, ok := pos[1].Value.(*lang.StringLit); !ok || strings.TrimSpace(s.Value) == "" {
		c.errorf(pos[1].Position(), CodeArguments, "loop's condition is a string, such as \"context.data.result.exitCode != 0\"")
	} else {
		c.checkCondition(s, "loop condition", sc)
	}
	for _, a := range call.Args {
		if a.Name == nil {
			continue
		}
		if a.Name.Name != "max" {
			c.errorf(a.Position(), CodeArguments, "loop has no option %s; it takes max:", a.Name.Name)
			continue
		}
		if n, ok := a.Value.(*lang.NumberLit); !ok || n.Value < 1 || !n.IsInteger() {
			c.errorf(a.Value.Position(), CodeArguments, "max: must be a whole number, 1 or more")
		}
	}
}

// stageOnly maps the calls written only as their own stage to that stage's operator.
var stageOnly = map[string]string{"loop": "|<>", "yield": "|!", "listen": "~>"}

// ListenChannel reports whether name can be a ~> listen channel: letters, digits, '_',
// '-', '.' and ':', at most 64, and not a channel the runtime uses itself.
func ListenChannel(name string) error {
	switch {
	case name == "yield" || name == "approval":
		return fmt.Errorf("channel %q is taken: a |! yield waits on \"yield\" and approvals on \"approval\"", name)
	case !channelPattern().MatchString(name):
		return fmt.Errorf("channel %q: a channel name is 1 to 64 letters, digits, '_', '-', '.' or ':', starting with a letter or digit", name)
	}
	return nil
}

var channelPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)
})

// checkListen checks `~> listen("channel")`: one channel name, written as a plain string.
func (c *checker) checkListen(call *lang.Call) {
	if call.Recv != nil || call.Method.Name != "listen" {
		c.errorf(call.Pos(), CodeStage, "a ~> stage is listen(\"channel\"), not %s(...)", call.Target())
		return
	}
	if len(call.Args) != 1 || call.Args[0].Name != nil {
		c.errorf(call.Pos(), CodeArguments, "listen takes one argument, the channel's name, as in listen(\"orders\")")
		return
	}
	s, ok := call.Args[0].Value.(*lang.StringLit)
	if !ok || len(s.Templates()) > 0 {
		c.errorf(call.Args[0].Position(), CodeArguments, "listen's channel is a name written as a plain string, as in listen(\"orders\")")
		return
	}
	if err := ListenChannel(s.Value); err != nil {
		c.errorf(s.Pos(), CodeArguments, "%v", err)
	}
}

func (c *checker) checkYield(call *lang.Call, sc *scope) {
	if call.Recv != nil || call.Method.Name != "yield" {
		c.errorf(call.Pos(), CodeStage, "a |! stage is yield(\"question\"), not %s(...)", call.Target())
		return
	}
	if len(call.Args) != 1 || call.Args[0].Name != nil {
		c.errorf(call.Pos(), CodeArguments, "yield takes one argument, the question for a person")
		return
	}
	c.checkValue(call.Args[0].Value, sc)
}

func (c *checker) checkDirective(st *lang.Stage, d *lang.Directive) {
	name := d.Name.Name
	if !directives[name] {
		c.errorf(d.Name.Pos(), CodeUndeclared, "unknown directive @%s; directives are @retry, @timeout, @correct and @limit%s", name, suggest(name, keys(directives)))
		return
	}
	switch {
	case st.Op == lang.OpBranch:
		c.errorf(d.Pos, CodeStage, "@%s on a branch: directives go on the stages inside its arms", name)
		return
	case name == "limit" && st.Op != lang.OpEach && st.Op != lang.OpFanOut:
		c.errorf(d.Pos, CodeStage, "@limit bounds how many calls of a |* each or |* { } run at once; this stage makes one call")
		return
	}
	if len(d.Args) != 1 || d.Args[0].Name != nil {
		c.errorf(d.Pos, CodeArguments, "@%s takes one number", name)
		return
	}
	n, ok := d.Args[0].Value.(*lang.NumberLit)
	switch {
	case !ok:
		c.errorf(d.Args[0].Position(), CodeArguments, "@%s takes a number", name)
	case name == "timeout" && n.Value <= 0:
		c.errorf(n.Pos, CodeArguments, "@timeout takes milliseconds, more than 0")
	case name == "limit" && (n.Value < 1 || !n.IsInteger()):
		c.errorf(n.Pos, CodeArguments, "@limit takes a whole number, 1 or more")
	case name != "timeout" && (n.Value < 0 || !n.IsInteger()):
		c.errorf(n.Pos, CodeArguments, "@%s takes a whole number, 0 or more", name)
	}
}

func (c *checker) isSystem(name string) bool {
	return name == "Value" || name == "Fail"
}

func (c *checker) checkCall(call *lang.Call, sc *scope) {
	if call.Recv == nil {
		name := call.Method.Name
		if c.kindOf(name) != "pipeline" {
			c.undeclared(call.Method.Pos(), "pipeline", name)
		}
		for _, a := range call.Args {
			c.checkValue(a.Value, sc)
		}
		return
	}
	recv := call.Recv.Name
	if recv == "System" {
		if !c.isSystem(call.Method.Name) {
			c.errorf(call.Method.Pos(), CodeUndeclared, "System has no method %s%s", call.Method.Name, suggestOr(call.Method.Name, []string{"Value", "Fail"}))
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
					c.errorf(a.Value.Position(), CodeToolConfig, "tool: names one declared tool")
				} else if c.kindOf(id.Name) != "tool" {
					c.undeclared(id.Pos(), "tool", id.Name)
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
		c.checkShellCommand(call)
	case "":
		names := append(c.namesOf("agent"), c.namesOf("tool")...)
		c.errorf(call.Recv.Pos(), CodeUndeclared, "undeclared agent or tool %s%s", recv, suggest(recv, append(names, "System")))
		for _, a := range call.Args {
			if a.Name == nil || a.Name.Name != "tools" && a.Name.Name != "tool" {
				c.checkValue(a.Value, sc)
			}
		}
	default:
		c.errorf(call.Recv.Pos(), CodeUndeclared, "%s is %s; only agents, tools and System have methods", recv, article(c.kindOf(recv)))
	}
}

// checkValue checks a value inside a pipeline: names must be parameters or earlier stages'
// `as` names, and {{templates}} should name one.
func (c *checker) checkValue(v lang.Expr, sc *scope) {
	switch x := v.(type) {
	case *lang.Ident:
		if !sc.names[x.Name] {
			c.undeclaredValue(x.Pos(), x.Name, sc)
		}
	case *lang.Path:
		if !x.IsContext() && !sc.names[x.Parts[0].Name] {
			c.undeclaredValue(x.Pos, x.Parts[0].Name, sc)
		}
	case *lang.StringLit:
		for _, t := range x.Templates() {
			root, _, _ := strings.Cut(t, ".")
			if root != "context" && !sc.names[root] {
				c.warn(x.Pos(), CodeUndeclared, "template {{%s}} names no parameter or earlier stage result%s", t, suggest(root, sc.list()).textOnly())
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
		c.errorf(pos, CodeArguments, "%s is a value of tools: only", name)
	case c.kindOf(name) != "":
		c.errorf(pos, CodeUndeclared, "%s is %s, not a value; values are parameters, `as` names and context paths", name, article(c.kindOf(name)))
	default:
		c.errorf(pos, CodeUndeclared, "undeclared name %s: not a parameter or an earlier stage's `as` name%s", name, suggest(name, sc.list()))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// compileCondition compiles a condition once per distinct text, and lists the names it
// reads (the roots of its paths: `r` in `r.exitCode != 0`).
func (c *checker) compileCondition(src string) ([]string, error) {
	if cc, ok := c.conds[src]; ok {
		return cc.names, cc.err
	}
	prog, err := expr.Compile(src, expr.AsBool(), expr.AllowUndefinedVariables())
	var names []string
	if err == nil {
		names = conditionNames(prog.Node())
	}
	if c.conds == nil {
		c.conds = map[string]compiledCond{}
	}
	c.conds[src] = compiledCond{names: names, err: err}
	return names, err
}

type compiledCond struct {
	names []string
	err   error
}

// conditionNames lists the identifiers a condition reads, in order, leaving out functions
// it calls and variables it declares with let.
func conditionNames(root ast.Node) []string {
	v := &nameVisitor{skip: map[ast.Node]bool{}, declared: map[string]bool{}, seen: map[string]bool{}}
	ast.Walk(&root, v)
	return v.names
}

type nameVisitor struct {
	skip     map[ast.Node]bool
	declared map[string]bool
	seen     map[string]bool
	names    []string
}

// Visit is called for children before their parent (ast.Walk's order), so a callee or a
// let variable is collected as a name first and dropped when its parent is seen.
func (v *nameVisitor) Visit(n *ast.Node) {
	switch x := (*n).(type) {
	case *ast.CallNode:
		if id, ok := x.Callee.(*ast.IdentifierNode); ok {
			v.drop(id.Value)
		}
	case *ast.VariableDeclaratorNode:
		v.declared[x.Name] = true
		v.drop(x.Name)
	case *ast.IdentifierNode:
		if !v.seen[x.Value] && !v.declared[x.Value] {
			v.seen[x.Value] = true
			v.names = append(v.names, x.Value)
		}
	}
}

// drop removes a name collected before its parent (a callee, a let variable) was seen.
func (v *nameVisitor) drop(name string) {
	for i, n := range v.names {
		if n == name {
			v.names = append(v.names[:i], v.names[i+1:]...)
			break
		}
	}
	v.seen[name] = true
}
