package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// agentCall runs Agent.task(prompt parts..., tool: T, tools: [...]) as one conversation of
// host/agent's tool loop: the agent's system prompt, one user message built from the call's
// prompt parts and the flowing value, and the offered tools (none without tools:, when the
// conversation is one model request). The agent's input policies apply to the prompt and to
// every tool result, its tool policies to every call its model asks for, its output policies
// to the answer; @correct(n) sends a rejected answer back in the same conversation, and
// @retry and @timeout apply to each model request.
func (rn *run) agentCall(ctx context.Context, a *lang.AgentDecl, c *lang.Call, value any, o callOpts) (any, error) {
	agentName, task := a.Name.Name, c.Method.Name
	target := agentName + "." + task
	set := rn.r.policySet(a)
	st := a.SettingsOf(c)

	// A run continued after an approval takes up the conversation this call saved.
	var resumed *AgentPause
	if rs := rn.resume; rs != nil && !rs.taken && rs.pause.Target == target {
		rs.taken, resumed = true, rs.pause
		defer func() { rn.resume = nil }()
	}
	var system, prompt string
	if resumed != nil && resumed.Conversation != nil {
		system = resumed.System
		if msgs := resumed.Conversation.Messages; len(msgs) > 0 {
			prompt = msgs[0].Text
		}
	} else {
		var err error
		system, prompt, err = rn.agentPrompt(ctx, a, c, target, value, o, set)
		if pause := pauseOf(err); pause != nil && pause.agent != nil && pause.agent.Target == "" {
			// Its tool: T waits for approval: the call starts again once answered.
			pause.agent.Target = target
		}
		if err != nil {
			return nil, err
		}
	}

	mocked := rn.mocks().Has(target) || rn.mockAgents()
	ref := a.Model.String()
	st.Tools = rn.r.OfferedTools(st)
	offered, lazy, err := rn.offer(ctx, a, st.Tools, set, mocked)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}

	step := &modelStep{rn: rn, set: set, ref: ref, agent: agentName, target: target, at: o.at,
		retries: o.retries, timeout: o.timeout, mocked: mocked, callCtx: ctx}
	var modelID string
	if rp := rn.tools.replay; rp != nil {
		// A replay asks no model: the recording answers.
		step.replay = &replayModel{rp: rp, target: target, place: rn.place(o.at)}
		step.inner = step.replay
	} else if mocked {
		step.mockModel = mockModel{rn: rn, withTools: len(st.Tools) > 0,
			req: MockRequest{Target: target, Agent: agentName, Task: task, System: system, Prompt: prompt, Input: value}}
		step.mock = &step.mockModel
		step.inner = step.mock
	} else {
		step.inner, modelID, err = rn.r.cfg.Models(ref)
		if err != nil {
			// What is wrong is in the agent's declaration (its model, the key its provider
			// needs), not at the call: the failure points there.
			return nil, &stageError{at: a.Pos.String(), err: fmt.Errorf("agent %s's model %s: %w", agentName, ref, err)}
		}
	}

	cfg := agent.Config{
		Agent:       agentName,
		Model:       step,
		Request:     model.Request{Model: modelID, System: system, Temperature: st.Temp, MaxTokens: st.MaxTokens},
		Prompt:      prompt,
		Tools:       offered,
		Policies:    set,
		MaxSteps:    st.MaxSteps,
		ResultChars: st.ResultChars,
		Corrections: o.correct,
		Now:         rn.r.cfg.Now,
		// The step's methods, not closures: one small allocation each instead of one that
		// holds everything the closure uses.
		Run:         step.runTool,
		Approve:     rn.approver(o.at, set),
		Accept:      step.accept,
		OnTool:      step.onTool,
		OnViolation: step.onViolation,
	}
	cfg.Resolve = lazy
	if rn.hooks() != nil {
		cfg.Hooks = &agentStops{rn: rn, at: o.at, agent: agentName, set: set}
	}
	var conv *agent.Conversation
	if resumed != nil && resumed.Conversation != nil {
		conv, err = agent.Resume(cfg, *resumed.Conversation)
	} else {
		conv, err = agent.New(cfg)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", target, err)
	}
	step.conv = conv
	if step.mock != nil {
		step.mock.tools = conv.Tools
	}
	out, err := conv.Run(ctx)
	if pause := pauseOf(err); pause != nil && pause.agent != nil && pause.agent.Target == "" {
		// A call waits for approval: the conversation so far is saved with the paused run.
		cst := conv.State()
		pause.agent.Target, pause.agent.System, pause.agent.Conversation = target, system, &cst
	}
	return out, err
}

// agentPrompt builds an agent call's (target's) system prompt and first message: the call's prompt
// parts, the result of its tool: T (a call the pipeline makes for the agent, under the
// agent's policies), the flowing value and a loop's feedback, after the agent's input
// policies.
func (rn *run) agentPrompt(ctx context.Context, a *lang.AgentDecl, c *lang.Call, target string, value any, o callOpts, set policy.Set) (system, prompt string, err error) {
	agentName := a.Name.Name
	sc := rn.scope()
	var parts []string
	var toolFirst *lang.ToolDecl
	for _, arg := range c.Args {
		if arg.Name == nil {
			v, err := sc.eval(arg.Value)
			if err != nil {
				return "", "", err
			}
			parts = append(parts, text(v))
			continue
		}
		switch arg.Name.Name {
		case "tools", "temp", "temperature", "max_tokens", "max_steps", "tool_result_chars":
			// Settings, read by lang.AgentDecl.SettingsOf.
		case "tool":
			if id, ok := arg.Value.(*lang.Ident); ok {
				toolFirst = rn.r.prog.Tool(id.Name)
			}
		default:
			v, err := sc.eval(arg.Value)
			if err != nil {
				return "", "", err
			}
			parts = append(parts, arg.Name.Name+": "+text(v))
		}
	}
	if toolFirst != nil {
		// tool: T is a call the pipeline makes for the agent: its policies apply to it as
		// to any call the agent's model chooses.
		out, err := rn.toolCall(ctx, toolReq{td: toolFirst, pos: inputArgs(value), implicit: value != nil, input: value,
			at: o.at, agent: agentName, set: set, police: true})
		if err != nil {
			return "", "", err
		}
		parts = append(parts, "Result of "+toolFirst.Name.Name+":\n"+text(out))
	}
	prompt = buildPrompt(parts, value, !usesValue(c, o.valueNames), o.feedback)
	system, err = sc.fill(stringOf(a.System))
	if err != nil {
		return "", "", err
	}

	// Input policies see the prompt before anything leaves the host, mock or not.
	prompt, err = set.Input(prompt)
	if err != nil {
		rn.violation(ctx, err, agentName, target, o.at)
		return "", "", err
	}
	// The stores the agent equips add what they hold that answers the prompt.
	if prompt, err = rn.retrieve(ctx, a, prompt, o.at, set); err != nil {
		return "", "", err
	}
	return system, prompt, nil
}

// offer describes the methods of the named tools and marks Hidden those the agent's
// policies do not let the model see. A tool's methods come from its provider, opened when the call starts. When
// the agent or the tool is mocked they come, without starting anything, from the provider
// type when it declares them (built-ins, http packages), else from the mocks of its methods
// ("Git.list_prs"); a mocked agent's tool described by neither is opened only if the mock
// calls one of its methods: lazy resolves those calls.
func (rn *run) offer(ctx context.Context, a *lang.AgentDecl, names []string, set policy.Set, mocked bool) ([]agent.Tool, func(context.Context, string) (agent.Tool, bool, error), error) {
	if len(names) == 0 {
		return nil, nil, nil
	}
	// Each tool's methods: described without opening anything when that is possible, else
	// by its provider, the providers opened together (toolSet.openTogether).
	type described struct {
		td   *lang.ToolDecl
		ms   []tool.Method
		open bool // ms comes from opening td's provider
	}
	each := make([]described, 0, len(names))
	var opens []*lang.ToolDecl
	var later []*lang.ToolDecl
	for _, name := range names {
		td := rn.r.prog.Tool(name)
		if td == nil || !equips(a, name) {
			return nil, nil, tool.Errorf(tool.CodeToolConfig, "tools: names %s, which agent %s does not equip (it equips %s)", name, a.Name.Name, equipList(a))
		}
		var ms []tool.Method
		ok := false
		if rp := rn.tools.replay; rp != nil {
			// As the recorded run described it, or its type declares it, without starting
			// anything. One it never described (its mocked agent never called it) is
			// described only if the replayed model calls it, and cannot be then.
			if ms, ok = rp.rec.Methods[name]; !ok {
				ms, ok = rn.tools.staticMethods(td)
			}
			if !ok {
				later = append(later, td)
				continue
			}
		}
		if !ok && (mocked || rn.mocks().hasTool(name)) {
			// Described without starting anything: a mocked model or tool may never need
			// the provider.
			if ms, ok = rn.tools.staticMethods(td); !ok {
				ms, ok = rn.mockedMethods(td)
			}
			if !ok && mocked {
				later = append(later, td)
				continue
			}
		}
		if !ok {
			// An opened provider says exactly what this declaration offers (a read-only
			// Workspace has no write).
			opens = append(opens, td)
		}
		each = append(each, described{td: td, ms: ms, open: !ok})
	}
	rn.tools.openTogether(ctx, opens)
	count := 0
	for i := range each {
		e := &each[i]
		if e.open {
			var err error
			if e.ms, err = rn.tools.describe(ctx, e.td); err != nil { // recorded there
				return nil, nil, err
			}
		} else {
			rn.tools.recordMethods(e.td, e.ms)
		}
		n := 0
		for _, m := range e.ms {
			if !m.PipelineOnly {
				n++
			}
		}
		if n == 0 {
			return nil, nil, tool.Errorf(tool.CodeToolConfig, "tool %s describes no methods an agent can call", e.td.Name.Name)
		}
		count += n
	}
	methods := make([]agent.Method, 0, count)
	for _, e := range each {
		for _, m := range e.ms {
			if !m.PipelineOnly {
				methods = append(methods, agent.Method{Tool: e.td.Name.Name, Method: m})
			}
		}
	}
	offered := agent.Offer(methods)
	if err := hide(set, offered); err != nil && len(later) == 0 {
		return nil, nil, err
	}
	var lazy func(context.Context, string) (agent.Tool, bool, error)
	if len(later) > 0 {
		lazy = func(ctx context.Context, fn string) (agent.Tool, bool, error) {
			for _, td := range later {
				ms, err := rn.tools.describe(ctx, td)
				if err != nil {
					return agent.Tool{}, false, err
				}
				for _, m := range ms {
					if m.PipelineOnly || agent.FunctionName(td.Name.Name, m.Name) != fn {
						continue
					}
					one := []agent.Method{{Tool: td.Name.Name, Method: m}}
					t := agent.Offer(one)
					hide(set, t)
					return t[0], true, nil
				}
			}
			return agent.Tool{}, false, nil
		}
	}
	return offered, lazy, nil
}

// hide marks Hidden the offered tools the agent's policies hide (AllowTools, DenyTools,
// AllowEffects): a hidden method is not offered, and a call to it anyway is refused
// (host/agent). When the policies hide every one, all are marked and the error says so.
func hide(set policy.Set, offered []agent.Tool) error {
	tms := make([]policy.ToolMethod, len(offered))
	for i, t := range offered {
		tms[i] = policy.ToolMethod{Target: t.Target, Effect: t.Effect}
	}
	kept, err := set.Offered(tms)
	k := 0
	for i := range offered {
		// Offered keeps the methods in their order.
		if k < len(kept) && kept[k].Target == offered[i].Target {
			k++
			continue
		}
		offered[i].Hidden = true
	}
	return err
}

// mockedMethods describes a tool by the mocks of its methods ("Tool.method" keys), for tools
// whose provider alone knows its methods: a test that mocks them needs no server.
func (rn *run) mockedMethods(td *lang.ToolDecl) ([]tool.Method, bool) {
	if rn.mocks() == nil {
		return nil, false
	}
	var ms []tool.Method
	prefix := td.Name.Name + "."
	for _, k := range rn.mocks().Targets() {
		if m, ok := strings.CutPrefix(k, prefix); ok && m != "" && !strings.HasSuffix(k, "?") {
			ms = append(ms, tool.Method{Name: m, Description: "(mocked) " + k})
		}
	}
	return ms, len(ms) > 0
}

func equips(a *lang.AgentDecl, name string) bool {
	for _, id := range a.Equips {
		if id.Name == name {
			return true
		}
	}
	return false
}

func equipList(a *lang.AgentDecl) string {
	if len(a.Equips) == 0 {
		return "no tools"
	}
	names := make([]string, len(a.Equips))
	for i, id := range a.Equips {
		names[i] = id.Name
	}
	return strings.Join(names, ", ")
}

// A modelStep makes one model request of a conversation: MaxSpend's check and reservation
// with the conversation's real size, @timeout on each attempt and @retry of failures marked
// retryable, then the llm event and context.meta.calls.
type modelStep struct {
	rn                 *run
	inner              model.Provider
	mock               *mockModel
	replay             *replayModel
	conv               *agent.Conversation
	set                policy.Set
	ref, agent, target string
	at                 string
	retries            int
	timeout            time.Duration
	mocked             bool
	// mockModel is where mock points in a mocked call: made with the step, not apart.
	mockModel mockModel
	// callCtx is the agent call's context, which its violations are reported under.
	callCtx context.Context
}

// runTool runs a tool call the model asked for.
func (s *modelStep) runTool(ctx context.Context, call agent.Call) (any, error) {
	rn := s.rn
	toolName, method, _ := strings.Cut(call.Target, ".")
	out, err := rn.toolCall(ctx, toolReq{td: rn.r.prog.Tool(toolName), method: method, raw: call.Args, value: call.Value, at: s.at, agent: s.agent, set: s.set})
	if code := errcode.Code(err); code == CodeMock || code == CodeReplayDiverged {
		// A scripted mock that ran out is the test's mistake, not the model's; a
		// replay that left its recording stops there.
		return nil, &agent.Fatal{Err: err}
	}
	return out, err
}

// accept applies the agent's output policies to an answer: its value, or a correction to
// ask for, or the violation.
func (s *modelStep) accept(resp model.Response) (any, error) {
	rn := s.rn
	res, verr := s.set.Output(policy.Answer{Text: resp.Text, CompletionTokens: resp.Usage.OutputTokens}, lookup{sc: rn.scope()})
	if verr == nil {
		var mockValue any
		if s.mock != nil {
			mockValue = s.mock.last
		}
		if s.replay != nil {
			mockValue = s.replay.last
		}
		return answerValue(res, mockValue), nil
	}
	rn.violation(s.callCtx, verr, s.agent, s.target, s.at)
	var bv *policy.Violation
	if errors.As(verr, &bv) && bv.Rule != "MaxSpend" && bv.Phase == policy.Output {
		return nil, &agent.Correction{Err: verr,
			Note: fmt.Sprintf("Your answer was rejected by policy %s (%s): %s. Answer again, fixing that.", bv.Policy, bv.Rule, bv.Message)}
	}
	return nil, verr
}

// onTool records the conversation's tool call as an agent_tool event.
func (s *modelStep) onTool(e agent.ToolEvent) {
	ev := Event{Type: "agent_tool", At: s.at, Agent: s.agent, Target: e.Target, Args: e.Args,
		Decision: e.Decision, Detail: e.Detail, Result: e.Result, DurationMs: e.Duration.Milliseconds()}
	if e.Code != "" {
		// A refusal Halo made itself (a key given twice): its code, as errors carry one.
		ev.Error = &ErrorInfo{Code: e.Code, Message: e.Detail}
	}
	s.rn.st.emit(ev)
}

func (s *modelStep) onViolation(v *policy.Violation, tgt string) {
	s.rn.violation(s.callCtx, v, s.agent, tgt, s.at)
}

// CanCallTools passes on what the real provider says.
func (s *modelStep) CanCallTools() bool { return model.CanCallTools(s.inner) }

func (s *modelStep) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	rn := s.rn
	if rn.hooks() != nil {
		if err := s.stop(ctx, req); err != nil {
			return model.Response{}, err
		}
	}
	for retry := 0; ; retry++ {
		resp, err := s.once(ctx, req, retry)
		if err == nil || retry >= s.retries || !retryable(err) || ctx.Err() != nil {
			return resp, err
		}
		wait := rn.r.cfg.RetryBackoff << retry
		if ra := retryAfter(err); ra > wait {
			wait = ra
		}
		wait = min(wait, 30*time.Second)
		rn.r.cfg.Logger.Debug("retrying model request", "at", s.at, "target", s.target, "attempt", retry+2, "wait", wait, "error", err)
		if err := rn.sleep(ctx, wait); err != nil {
			return model.Response{}, err
		}
	}
}

func (s *modelStep) once(ctx context.Context, req model.Request, retry int) (model.Response, error) {
	rn := s.rn
	st := s.conv.State()
	attempt := 1 + st.Corrections + retry
	if lim, ok := s.set.TokenLimit(); ok && (req.MaxTokens == 0 || lim < req.MaxTokens) {
		req.MaxTokens = lim
	}
	var resv *policy.Reservation
	err := rn.shares.reserve(func(idle int) error {
		var err error
		resv, err = s.set.Reserve(rn.budget, rn.estimate(s.set, s.ref, req, req.MaxTokens, idle))
		return err
	})
	if err != nil {
		rn.violation(ctx, err, s.agent, s.target, s.at)
		return model.Response{}, err
	}
	req.MaxTokens = resv.MaxTokens
	actx, cancel := ctx, context.CancelFunc(func() {})
	if s.timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, s.timeout)
	}
	if s.mock != nil {
		s.mock.attempt, s.mock.step = attempt, st.Requests+1
	}
	if s.replay != nil {
		s.replay.step = st.Requests + 1
	}
	start := rn.r.cfg.Now()
	resp, err := s.inner.Complete(actx, req)
	if rn.tools.rec != nil {
		c := Recorded{Kind: RecordedLLM, Target: s.target, At: s.at, Step: st.Requests + 1}
		if err != nil {
			c.Error = recordError(err)
		} else {
			r := resp
			c.Response = &r
			if s.mock != nil && len(resp.ToolCalls) == 0 {
				if _, isText := s.mock.last.(string); !isText {
					c.Value = s.mock.last
				}
			}
		}
		rn.record(c)
	}
	timedOut := s.timeout > 0 && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	dur := rn.r.cfg.Now().Sub(start).Milliseconds()
	if err != nil {
		resp = model.Response{}
		if timedOut {
			err = &Error{Code: CodeTimeout, Err: err,
				Message: fmt.Sprintf("the model request took longer than @timeout(%d)", s.timeout.Milliseconds())}
		}
	}
	settleErr := resv.Settle(resp.Cost)
	rn.shares.release()
	ci := CallInfo{Kind: "llm", Target: s.target, Agent: s.agent, Model: s.ref, Cost: resp.Cost, DurationMs: dur, Mocked: s.mocked}
	ev := Event{Type: "llm", At: s.at, Agent: s.agent, Target: s.target, Model: s.ref, Prompt: lastUser(req.Messages),
		Cost: resp.Cost, DurationMs: dur, Mocked: s.mocked, Attempt: attempt, Step: st.Requests + 1}
	if ev.Step == 1 && req.System != "" {
		ev.System = shownText(s.set, req.System)
	}
	if err != nil {
		ci.Error = codeOf(err)
		ev.Error = infoOf(err, "")
		rn.st.addCall(ci)
		rn.st.emit(ev)
		return model.Response{}, err
	}
	u := resp.Usage
	ci.Usage, ev.Usage = &u, &u
	ci.Unpriced, ev.Unpriced = resp.Unpriced, resp.Unpriced
	ev.Answer = shownText(s.set, resp.Text)
	for _, tc := range resp.ToolCalls {
		ev.ToolCalls = append(ev.ToolCalls, tc.Name)
	}
	rn.st.addCall(ci)
	rn.st.emit(ev)
	if settleErr != nil {
		// The request went over budget: its answer is not used.
		rn.violation(ctx, settleErr, s.agent, s.target, s.at)
		return model.Response{}, settleErr
	}
	return resp, nil
}

// shownText is what events show of a model's text: Redact applied, withheld on a Block match.
func shownText(set policy.Set, s string) string {
	shown, err := set.Input(s)
	if err != nil {
		// Only here: the variable errors.As fills escapes, once an event.
		var v *policy.Violation
		if errors.As(err, &v) {
			return "[withheld: " + v.Message + "]"
		}
	}
	return shown
}

// estimate prices a request for MaxSpend: its input tokens at the model's input price (the
// whole conversation, tool definitions and results included), and each reply token at its
// output price. Under a spend limit the reply cap is the model's own output limit at most,
// and, while idle other lines (branches of a fan-out) may still need the budget, this
// request's share of what is left.
func (rn *run) estimate(set policy.Set, ref string, req model.Request, maxTokens, idle int) policy.Estimate {
	prov, id, _ := strings.Cut(ref, "/")
	price, ok := rn.r.cfg.Prices.Lookup(prov, id)
	if !ok {
		return policy.Estimate{MaxTokens: maxTokens}
	}
	in := float64(model.EstimateInputTokens(req)) * price.Input / 1e6
	out := price.Output / 1e6
	if limit, limited := set.SpendLimit(); limited {
		maxTokens = price.ClampOutput(maxTokens)
		if maxTokens == 0 {
			maxTokens = price.MaxOutput
		}
		if idle > 1 && out > 0 {
			left := limit - rn.budget.Spent() - rn.budget.InFlight()
			fit := math.Floor((left/float64(idle) - in) / out)
			if fit >= 1 && (maxTokens == 0 || fit < float64(maxTokens)) {
				maxTokens = int(fit)
			}
		}
	}
	return policy.Estimate{InputUSD: in, OutputUSDPerToken: out, MaxTokens: maxTokens}
}

// lastUser is what an llm event shows as the prompt: the last message when it is the user's
// (the prompt, a @correct note), after the input policies.
func lastUser(msgs []model.Message) string {
	if n := len(msgs); n > 0 && msgs[n-1].Role == model.User {
		return msgs[n-1].Text
	}
	return ""
}

// violation records a policy violation in context.meta.violations and emits its event.
func (rn *run) violation(ctx context.Context, err error, agentName, target, at string) {
	var v *policy.Violation
	if !errors.As(err, &v) {
		return
	}
	msg := v.Message
	rn.st.addViolation(ViolationInfo{Policy: v.Policy, Rule: v.Rule, Phase: string(v.Phase), Message: msg, Agent: agentName, Target: target})
	rn.st.emit(Event{Type: "violation", At: at, Agent: agentName, Target: target, Policy: v.Policy, Rule: v.Rule, Phase: string(v.Phase), Message: msg})
	if v.Log {
		rn.r.cfg.Logger.Warn("policy violation", "policy", v.Policy, "rule", v.Rule, "phase", v.Phase, "agent", agentName, "message", v.Message)
	}
	if rn.hooks() != nil {
		rn.violationStop(ctx, ViolationInfo{Policy: v.Policy, Rule: v.Rule, Phase: string(v.Phase), Message: msg, Agent: agentName, Target: target}, at)
	}
}

// answerValue is what an agent stage returns: the JSON a Require(JSON) rule took out of the
// answer, the value a mock gave when it was not text, else the (redacted) text.
func answerValue(res policy.Result, mockValue any) any {
	if res.IsJSON {
		return numbers(res.JSON)
	}
	if _, isText := mockValue.(string); mockValue != nil && !isText {
		var v any
		if json.Unmarshal([]byte(res.Text), &v) == nil {
			return v
		}
	}
	return res.Text
}

// buildPrompt joins the call's prompt parts, then the flowing value as "Input:" unless the
// call already put it in the prompt (withValue false), then a loop's feedback.
func buildPrompt(parts []string, value any, withValue bool, feedback string) string {
	var b strings.Builder
	b.WriteString(strings.Join(parts, "\n\n"))
	if value != nil && withValue {
		if v := text(value); v != "" {
			if b.Len() > 0 {
				b.WriteString("\n\nInput:\n")
			}
			b.WriteString(v)
		}
	}
	if feedback != "" {
		b.WriteString("\n\n")
		b.WriteString(feedback)
	}
	return b.String()
}

// usesValue reports whether the call's prompt names the flowing value itself: an argument
// that is one of its names (a parameter or an earlier stage's `as` name, or
// context.data.<name>), or a {{name}} template in a string argument.
func usesValue(c *lang.Call, names []string) bool {
	if len(names) == 0 {
		return false
	}
	is := func(n string) bool {
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	for _, arg := range c.Args {
		if arg.Name != nil && (arg.Name.Name == "tool" || arg.Name.Name == "tools") {
			continue
		}
		switch x := arg.Value.(type) {
		case *lang.Ident:
			if is(x.Name) {
				return true
			}
		case *lang.Path:
			if p := x.Parts; len(p) == 3 && p[0].Name == "context" && (p[1].Name == "data" || p[1].Name == "inputs") && is(p[2].Name) {
				return true
			}
		case *lang.StringLit:
			for _, t := range x.Templates() {
				t = strings.TrimSpace(t)
				if is(t) || is(strings.TrimPrefix(strings.TrimPrefix(t, "context.data."), "context.inputs.")) && strings.Count(t, ".") == 2 {
					return true
				}
			}
		}
	}
	return false
}

// inputArgs gives tool: T the flowing value as its input.
func inputArgs(value any) []any {
	if value == nil {
		return nil
	}
	return []any{value}
}

func number(e lang.Expr) *float64 {
	if n, ok := e.(*lang.NumberLit); ok {
		v := n.Value
		return &v
	}
	return nil
}

func stringOf(s *lang.StringLit) string {
	if s == nil {
		return ""
	}
	return s.Value
}
