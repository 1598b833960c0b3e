package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/halo-lang/halo/host/lang"
	"github.com/halo-lang/halo/host/policy"
	"github.com/halo-lang/halo/host/tool"
)

// callOpts are what a stage hands its call beside the flowing value.
type callOpts struct {
	at       string // where the stage is written
	feedback string // a loop's note for an agent stage it went back to
	correct  int    // @correct(n)
	attempt  int    // @retry attempt, from 1
}

func (rn *run) call(ctx context.Context, c *lang.Call, value any, o callOpts) (any, error) {
	if c.Recv == nil {
		return rn.callPipeline(ctx, c, value)
	}
	recv := c.Recv.Name
	if recv == "System" {
		return rn.system(ctx, c, value)
	}
	if a := rn.r.prog.Agent(recv); a != nil {
		return rn.agentCall(ctx, a, c, value, o)
	}
	if td := rn.r.prog.Tool(recv); td != nil {
		pos, named, err := rn.args(c.Args)
		if err != nil {
			return nil, err
		}
		implicit := len(c.Args) == 0 && value != nil
		if implicit {
			// The flowing value is the input when no argument says otherwise.
			pos = []any{value}
		}
		return rn.toolCall(ctx, td, c.Method.Name, pos, implicit, named, value, o.at, "", nil)
	}
	return nil, errorf(CodeInternal, "%s: %s is not an agent, a tool or System", c.Pos, recv)
}

// args evaluates a call's arguments.
func (rn *run) args(args []*lang.Arg) ([]any, map[string]any, error) {
	sc := rn.scope()
	var pos []any
	named := map[string]any{}
	for _, a := range args {
		v, err := sc.eval(a.Value)
		if err != nil {
			return nil, nil, err
		}
		if a.Name == nil {
			pos = append(pos, v)
		} else {
			named[a.Name.Name] = v
		}
	}
	return pos, named, nil
}

// system runs System.Value(x) (x, or the flowing value without an argument),
// System.Fail("why"), and host-registered System methods.
func (rn *run) system(ctx context.Context, c *lang.Call, value any) (any, error) {
	pos, named, err := rn.args(c.Args)
	if err != nil {
		return nil, err
	}
	switch c.Method.Name {
	case "Value":
		if len(pos) == 0 {
			if len(named) > 0 {
				return named, nil
			}
			return value, nil
		}
		return pos[0], nil
	case "Fail":
		msg := "the pipeline failed"
		if len(pos) > 0 {
			msg = text(pos[0])
		}
		return nil, &Error{Code: CodeFail, Message: msg}
	}
	if fn := rn.r.sysExtra[c.Method.Name]; fn != nil {
		return fn(ctx, value, pos, named)
	}
	return nil, errorf(CodeInternal, "System has no method %s", c.Method.Name)
}

// callPipeline runs another pipeline: positional arguments fill its parameters in order,
// named ones by name, and with no arguments the flowing value fills the first parameter.
func (rn *run) callPipeline(ctx context.Context, c *lang.Call, value any) (any, error) {
	pd := rn.r.prog.Pipeline(c.Method.Name)
	if pd == nil {
		return nil, errorf(CodeInternal, "no pipeline %s", c.Method.Name)
	}
	pos, named, err := rn.args(c.Args)
	if err != nil {
		return nil, err
	}
	if len(c.Args) == 0 && len(pd.Params) > 0 {
		pos = []any{value}
	}
	if len(pos) > len(pd.Params) {
		return nil, errorf(CodeInput, "pipeline %s takes %d parameters, got %d values", pd.Name.Name, len(pd.Params), len(pos))
	}
	in := map[string]any{}
	for i, v := range pos {
		in[pd.Params[i].Name.Name] = v
	}
	for k, v := range named {
		in[k] = v
	}
	bound, err := bindInputs(pd, in)
	if err != nil {
		return nil, err
	}
	sub := rn.sub(pd, bound)
	out, err := sub.body(ctx, 0, nil, false)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", pd.Name.Name, err)
	}
	return out, nil
}

// toolCall calls Tool.method (method "" for an agent's tool: T, which calls T's only
// method). agent names the agent it runs for, if any; its policies, when given, apply to
// what the tool event shows of the result (Redact replaces, a Block match withholds it).
// implicit says pos holds only the flowing value, not arguments written in the call.
func (rn *run) toolCall(ctx context.Context, td *lang.ToolDecl, method string, pos []any, implicit bool, named map[string]any, input any, at, agent string, set policy.Set) (any, error) {
	name := td.Name.Name
	target := name
	if method != "" {
		target = name + "." + method
	}
	start := rn.r.cfg.Now()
	var (
		out    any
		args   json.RawMessage
		mocked bool
		err    error
	)
	mreq := MockRequest{Target: target, Input: input, Args: named}
	targets := []string{name}
	if method != "" {
		targets = []string{target, name}
	}
	if rn.r.cfg.Mocks.Has(targets...) {
		mocked = true
		args = mockArgs(pos, named)
		json.Unmarshal(args, &mreq.Args)
		out, _, err = rn.r.cfg.Mocks.answer(mreq, targets...)
	} else {
		out, args, err = rn.tools.call(ctx, td, method, pos, implicit, named)
	}
	dur := rn.r.cfg.Now().Sub(start).Milliseconds()
	ci := CallInfo{Kind: "tool", Target: target, Agent: agent, DurationMs: dur, Mocked: mocked}
	ev := Event{Type: "tool", At: at, Agent: agent, Target: target, Args: args, DurationMs: dur, Mocked: mocked}
	if err != nil {
		ci.Error = codeOf(err)
		ev.Error = infoOf(err, "")
	} else {
		ev.Output = out
		if len(set) > 0 {
			shown, verr := set.InputValue(out)
			ev.Output = shown
			var v *policy.Violation
			if errors.As(verr, &v) {
				ev.Output = "[withheld: " + v.Message + "]"
			}
		}
	}
	rn.st.addCall(ci)
	rn.st.emit(ev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	return out, nil
}

func mockArgs(pos []any, named map[string]any) json.RawMessage {
	args := map[string]any{}
	if len(pos) == 1 {
		if obj, ok := pos[0].(map[string]any); ok {
			for k, v := range obj {
				args[k] = v
			}
		} else {
			args["input"] = pos[0]
		}
	} else if len(pos) > 1 {
		args["input"] = pos
	}
	for k, v := range named {
		args[k] = v
	}
	b, _ := json.Marshal(args)
	return b
}

// decodeResult turns a provider's JSON result into a value.
func decodeResult(raw json.RawMessage) (any, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &tool.Error{Code: tool.CodeToolError, Message: "the tool's result is not JSON: " + err.Error(), Err: err}
	}
	return v, nil
}
