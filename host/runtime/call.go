package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/lang/shell"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// callOpts are what a stage hands its call beside the flowing value.
type callOpts struct {
	at       string // where the stage is written
	feedback string // a loop's note for an agent stage it went back to
	correct  int    // @correct(n)
	attempt  int    // @retry attempt, from 1
	// valueNames are the names the flowing value goes by (the start parameter, the `as`
	// name of the stage before): an agent call whose prompt names one already has it.
	valueNames []string
	// retries and timeout are @retry and @timeout, for an agent call's model requests.
	retries int
	timeout time.Duration
}

// directedCall runs a stage's call with its directives: @retry and @timeout apply to the
// whole call of a tool, System or pipeline, and to each model request of an agent call (so a
// retry keeps the conversation, and @timeout does not bound its @correct turns together).
func (rn *run) directedCall(ctx context.Context, st *lang.Stage, c *lang.Call, value any, opts callOpts) (any, error) {
	if c.Recv != nil && rn.r.prog.Agent(c.Recv.Name) != nil {
		opts.retries, opts.timeout = directives(st)
		opts.attempt = 1
		return rn.call(ctx, c, value, opts)
	}
	return rn.directed(ctx, st, func(ctx context.Context, attempt int) (any, error) {
		o := opts
		o.attempt = attempt
		return rn.call(ctx, c, value, o)
	})
}

// atTop reports whether the run goes through its pipeline's own stages (not a branch arm's).
func (rn *run) atTop() bool {
	return len(rn.list) > 0 && len(rn.pd.Stages) > 0 && &rn.list[0] == &rn.pd.Stages[0]
}

// directives reads a stage's @retry(n) and @timeout(ms).
func directives(st *lang.Stage) (retries int, timeout time.Duration) {
	if d := st.Directive("retry"); d != nil {
		retries = directiveInt(d)
	}
	if d := st.Directive("timeout"); d != nil && len(d.Args) == 1 {
		if n, ok := d.Args[0].Value.(*lang.NumberLit); ok {
			timeout = time.Duration(n.Value * float64(time.Millisecond))
		}
	}
	return retries, timeout
}

// flowNames returns the names the value flowing into stage i goes by: the pipeline's start
// when it is a parameter (or context.data/inputs.<name>), else the `as` names of the stages
// whose value can arrive (the stage before, and the stage before a |? handler).
func (rn *run) flowNames(i int) []string {
	stages := rn.list
	var names []string
	for j := i - 1; j >= -1; j-- {
		if j < 0 && !rn.atTop() {
			// The first stage of a branch arm gets the branch's value, which goes by no
			// name here.
			return names
		}
		if j < 0 {
			switch x := rn.pd.Start.(type) {
			case *lang.Ident:
				names = append(names, x.Name)
			case *lang.Path:
				if p := x.Parts; len(p) == 3 && p[0].Name == "context" && (p[1].Name == "data" || p[1].Name == "inputs") {
					names = append(names, p[2].Name)
				}
			}
			return names
		}
		st := stages[j]
		if st.Op == lang.OpLoop {
			continue // a loop passes its value through
		}
		if st.As != nil {
			names = append(names, st.As.Name)
		}
		if st.Op != lang.OpFallback {
			return names
		}
		// A |? handler's value or the value of the stage it handles flows on.
	}
	return names
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
		pos, named, err := rn.argsShell(c.Args, rn.shellMethod(td, c))
		if err != nil {
			return nil, err
		}
		implicit := len(c.Args) == 0 && value != nil
		if implicit {
			// The flowing value is the input when no argument says otherwise.
			pos = []any{value}
		}
		return rn.toolCall(ctx, toolReq{td: td, method: c.Method.Name, pos: pos, implicit: implicit, named: named, input: value, at: o.at})
	}
	return nil, errorf(CodeInternal, "%s: %s is not an agent, a tool or System", c.Pos(), recv)
}

// args evaluates a call's arguments.
func (rn *run) args(args []*lang.Arg) ([]any, map[string]any, error) {
	return rn.argsShell(args, nil)
}

// shellMethod returns the method a call to td calls when its description names an argument
// that is a shell command line (Bash's run: command), or nil.
func (rn *run) shellMethod(td *lang.ToolDecl, c *lang.Call) *tool.Method {
	ms, ok := rn.tools.staticMethods(td)
	if !ok {
		return nil
	}
	name := ""
	if c.Method != nil {
		name = c.Method.Name
	}
	m, ok := tool.CalledMethod(ms, name)
	if !ok || m.Shell == "" {
		return nil
	}
	return &m
}

// argsShell evaluates a call's arguments to method sm (nil: no argument is a shell command
// line). The string written for sm's shell command line has its templates quoted as shell
// words (shell.Command finds it; scope.fillShell fills it).
func (rn *run) argsShell(args []*lang.Arg, sm *tool.Method) ([]any, map[string]any, error) {
	sc := rn.scope()
	if sm != nil {
		sc.shellLit = shell.Command(args, sm.Shell, sm.ShellFillsFirst())
	}
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
	if rn.dbg != nil {
		sub.frames = rn.nest(Frame{Pipeline: rn.pd.Name.Name, At: c.Pos().String(), Called: pd.Name.Name})
	}
	out, err := sub.body(ctx, 0, nil, false)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", pd.Name.Name, err)
	}
	return out, nil
}

// A toolReq is one tool call: written as a stage, named by an agent call's tool: T, or
// chosen by an agent's model in the tool loop.
type toolReq struct {
	td *lang.ToolDecl
	// method is the method name; "" for tool: T, which calls the tool's only method.
	method string
	// raw is the arguments object an agent's model sent; nil for calls written in the
	// pipeline, whose pos and named arguments are bound instead (implicit: pos holds only
	// the flowing value).
	raw json.RawMessage
	// value is raw decoded, as the tool loop's policies checked it (tool.ParseArgs): what
	// the tool event shows. Nil when there is no raw.
	value    map[string]any
	pos      []any
	implicit bool
	named    map[string]any
	// input is the flowing value (mocks see it).
	input any
	at    string
	// agent is the agent the call is made for, if any; set are its policies, which apply to
	// what the tool event shows of the arguments and the result (Redact replaces, a Block
	// match withholds).
	agent string
	set   policy.Set
	// police checks the call against set before it runs (tool: T). Calls an agent's model
	// chose were checked by the tool loop already.
	police bool
	// answered, when set, is a person's answer that stands in for running the call (a
	// debugger's skip of a call an agent's model chose; see agentStops).
	answered *personAnswer
}

// toolCall runs one tool call: a mock's answer when its target is mocked, else the
// provider's, and records it (context.meta.calls, a tool event).
func (rn *run) toolCall(ctx context.Context, q toolReq) (any, error) {
	name := q.td.Name.Name
	method := q.method
	effect := tool.External
	if ms, ok := rn.tools.staticMethods(q.td); ok {
		if method == "" {
			if m, ok := onlyMethod(ms); ok {
				method = m.Name
			}
		}
		if m, ok := tool.FindMethod(ms, method); ok {
			effect = m.EffectOrDefault()
		}
	}
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
	targets := []string{name}
	if method != "" {
		targets = []string{target, name}
	}
	var raw json.RawMessage // the result as the provider (or mock) gave it, for the recording
	rp := rn.tools.replay
	ans := q.answered
	if mockedPath := rn.mocks().Has(targets...) || rp != nil && rp.mocked(targets...); mockedPath || ans != nil {
		// A call a person answered needs no provider either.
		mocked = mockedPath
		args = q.raw
		if args == nil {
			args = mockArgs(q.pos, q.named)
		}
		// Without the provider the method may be unknown: decide on every method of the
		// tool.
		decideOn := target
		if method == "" {
			decideOn = name + ".*"
		}
		if rn.hooks() != nil && ans == nil {
			if ans, err = rn.toolStop(ctx, q, target, decideOn, effect, args); err != nil {
				return nil, err
			}
		}
		if q.police && ans == nil {
			if err := rn.police(ctx, q, decideOn, effect, args); err != nil {
				return nil, err
			}
		}
		if ans != nil {
			out, raw, err = ans.result()
		} else if rp != nil {
			out, err = rn.replayTool(q, target, args)
		} else {
			mreq := MockRequest{Target: target, Agent: q.agent, Input: q.input}
			json.Unmarshal(args, &mreq.Args)
			out, _, err = rn.mocks().answer(mreq, targets...)
			if err == nil && rn.tools.rec != nil {
				if raw, err = json.Marshal(out); err != nil {
					raw, err = nil, fmt.Errorf("the mock's answer is not JSON: %w", err)
				}
			}
		}
	} else {
		var p prepared
		p, err = rn.tools.prepare(ctx, q.td, q.method, q.raw, q.pos, q.implicit, q.named)
		if err == nil {
			target, args = name+"."+p.method.Name, p.args
			if rn.hooks() != nil && ans == nil {
				if ans, err = rn.toolStop(ctx, q, target, target, p.method.EffectOrDefault(), args); err != nil {
					return nil, err
				}
			}
			if q.police && ans == nil {
				if err := rn.police(ctx, q, target, p.method.EffectOrDefault(), args); err != nil {
					return nil, err
				}
			}
			if ans != nil {
				out, raw, err = ans.result()
			} else if rp != nil {
				out, err = rn.replayTool(q, target, args)
			} else {
				progress := func(pr tool.Progress) {
					rn.st.emitLive(Event{Type: "progress", At: q.at, Agent: q.agent, Target: target, Progress: &pr})
				}
				cctx := ctx
				if isStore(q.td) {
					cctx = withStoreCaller(ctx, storeCaller{rn: rn, agent: q.agent, set: q.set, at: q.at})
				}
				if raw, err = p.call(cctx, progress); err == nil {
					out, err = decodeResult(raw)
				}
			}
		}
	}
	if rn.tools.rec != nil && args != nil {
		c := Recorded{Kind: RecordedTool, Target: target, At: q.at, Args: args, Mocked: mocked, SetBy: ans.setBy()}
		switch {
		case err != nil:
			c.Error = recordError(err)
		case len(bytes.TrimSpace(raw)) > 0:
			c.Result = raw
		}
		rn.record(c)
	}
	dur := rn.r.cfg.Now().Sub(start).Milliseconds()
	ci := CallInfo{Kind: "tool", Target: target, Agent: q.agent, DurationMs: dur, Mocked: mocked, SetBy: ans.setBy()}
	ev := Event{Type: "tool", At: q.at, Agent: q.agent, Target: target, Args: agent.Call{Args: args, Value: q.value}.Shown(q.set), DurationMs: dur, Mocked: mocked, SetBy: ans.setBy()}
	if err != nil {
		ci.Error = codeOf(err)
		ev.Error = infoOf(err, "")
	} else {
		ev.Output = out
		if len(q.set) > 0 {
			shown, verr := q.set.InputValue(out)
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

// police checks a call the pipeline makes for an agent (tool: T) against the agent's tool
// policies, as the tool loop checks the calls its model asks for: a refusal fails the call
// and is a violation; a call that needs approval is asked about as the loop's are (approve),
// and a declined one fails the call with APPROVAL_DECLINED.
func (rn *run) police(ctx context.Context, q toolReq, target string, effect tool.Effect, args json.RawMessage) error {
	d := q.set.Decide(target, effect, args)
	switch d.Verdict {
	case policy.Refused:
		v := d.Violation()
		rn.violation(ctx, v, q.agent, target, q.at)
		return v
	case policy.NeedsApproval:
		a, err := rn.approve(ctx, agent.ApprovalRequest{Agent: q.agent, Call: agent.Call{Target: target, Effect: effect, Args: args},
			Policy: d.Policy, Rule: d.Rule, Reason: d.Reason}, q.at, q.set)
		if errors.Is(err, agent.ErrNoOneToAsk) {
			return &Error{Code: agent.CodeApprovalNeeded, Err: err, Message: fmt.Sprintf("tool: %s calls %s, which policy %s sends to a person for approval (%s)%s", q.td.Name.Name, target, d.Policy, d.Reason, agent.NoOneBecause(err))}
		}
		if err != nil {
			return err
		}
		if !a.Approved {
			msg := fmt.Sprintf("a person declined %s", target)
			if a.Reason != "" {
				msg += ": " + a.Reason
			}
			return &Error{Code: CodeDeclined, Message: msg}
		}
	}
	return nil
}

// onlyMethod returns the one method an agent's tool: T can mean.
func onlyMethod(ms []tool.Method) (tool.Method, bool) {
	var found tool.Method
	n := 0
	for _, m := range ms {
		if !m.PipelineOnly {
			found, n = m, n+1
		}
	}
	return found, n == 1
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
