package runtime

import (
	"sync"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// conditions compiles each condition string once per Runtime.
type conditions struct {
	mu    sync.Mutex
	progs map[string]*vm.Program
}

func (c *conditions) compile(src string) (*vm.Program, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.progs[src]; ok {
		return p, nil
	}
	p, err := expr.Compile(src, expr.AsBool(), expr.AllowUndefinedVariables())
	if err != nil {
		return nil, &Error{Code: CodeCondition, Message: "condition " + quote(src) + ": " + err.Error(), Err: err}
	}
	if c.progs == nil {
		c.progs = map[string]*vm.Program{}
	}
	c.progs[src] = p
	return p, nil
}

// eval evaluates a condition such as "context.data.result.exitCode != 0" over the run's
// context (data, meta, inputs). Names other than context are the pipeline's inputs and
// earlier stages' `as` names.
func (c *conditions) eval(src string, sc *scope) (bool, error) {
	p, err := c.compile(src)
	if err != nil {
		return false, err
	}
	out, err := expr.Run(p, condEnv(sc))
	if err != nil {
		return false, &Error{Code: CodeCondition, Message: "condition " + quote(src) + ": " + err.Error(), Err: err}
	}
	b, _ := out.(bool)
	return b, nil
}

// condEnv is what a condition names: context, and the inputs and `as` names by themselves.
func condEnv(sc *scope) map[string]any {
	env := map[string]any{}
	for k, v := range sc.inputs {
		env[k] = v
	}
	ctx := sc.context()
	for k, v := range ctx["data"].(map[string]any) {
		env[k] = v
	}
	env["context"] = ctx
	return env
}

func quote(s string) string { return "\"" + s + "\"" }
