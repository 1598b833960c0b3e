package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/halo-lang/halo/host/lang"
	"github.com/halo-lang/halo/host/model"
	"github.com/halo-lang/halo/host/policy"
)

// agentCall runs Agent.task(prompt parts..., tool: T, tools: [...]): one model request built
// from the agent's system prompt, the call's prompt parts and the flowing value, with the
// agent's input policies on the prompt and output policies on the answer. @correct(n) sends
// a rejected answer back with the reason, in the same conversation, up to n times.
func (rn *run) agentCall(ctx context.Context, a *lang.AgentDecl, c *lang.Call, value any, o callOpts) (any, error) {
	agent, task := a.Name.Name, c.Method.Name
	target := agent + "." + task
	sc := rn.scope()
	set := rn.r.policySet(a)

	var parts []string
	var temp *float64
	maxTokens := 0
	if s := a.Setting("temp"); s != nil {
		temp = number(s.Value)
	}
	if s := a.Setting("temperature"); s != nil {
		temp = number(s.Value)
	}
	if s := a.Setting("max_tokens"); s != nil {
		if n := number(s.Value); n != nil {
			maxTokens = int(*n)
		}
	}
	useTools := wantsTools(a.Setting("tools"))
	var toolFirst *lang.ToolDecl
	for _, arg := range c.Args {
		if arg.Name == nil {
			v, err := sc.eval(arg.Value)
			if err != nil {
				return nil, err
			}
			parts = append(parts, text(v))
			continue
		}
		switch arg.Name.Name {
		case "tools":
			useTools = wantsTools(arg)
		case "tool":
			if id, ok := arg.Value.(*lang.Ident); ok {
				toolFirst = rn.r.prog.Tool(id.Name)
			}
		case "temp", "temperature":
			temp = number(arg.Value)
		case "max_tokens":
			if n := number(arg.Value); n != nil {
				maxTokens = int(*n)
			}
		case "max_steps", "tool_result_chars":
			// Settings of the tool loop (host/agent).
		default:
			v, err := sc.eval(arg.Value)
			if err != nil {
				return nil, err
			}
			parts = append(parts, arg.Name.Name+": "+text(v))
		}
	}
	if toolFirst != nil {
		out, err := rn.toolCall(ctx, toolFirst, "", inputArgs(value), value != nil, nil, value, o.at, agent, set)
		if err != nil {
			return nil, err
		}
		parts = append(parts, "Result of "+toolFirst.Name.Name+":\n"+text(out))
	}
	prompt := buildPrompt(parts, value, o.feedback)
	system, err := sc.fill(stringOf(a.System))
	if err != nil {
		return nil, err
	}

	// Input policies see the prompt before anything leaves the host, mock or not.
	prompt, err = set.Input(prompt)
	if err != nil {
		rn.violation(err, agent, target, o.at)
		return nil, err
	}

	ref := a.Model.String()
	mreq := MockRequest{Target: target, Agent: agent, Task: task, System: system, Prompt: prompt, Input: value, Attempt: o.attempt}
	mocked := rn.r.cfg.Mocks.Has(target) || rn.r.cfg.MockAgents
	if useTools && !mocked {
		return nil, errorf(CodeToolLoop, "%s names tools:, and agents choosing their own tool calls (the tool loop) is not built yet; mock %s or call the tools as pipeline stages", target, target)
	}
	var prov model.Provider
	var modelID string
	if !mocked {
		prov, modelID, err = rn.r.cfg.Models(ref)
		if err != nil {
			return nil, err
		}
	}

	req := model.Request{Model: modelID, System: system, Messages: []model.Message{{Role: model.User, Text: prompt}}, Temperature: temp}
	for k := 0; ; k++ {
		mreq.Attempt = o.attempt + k
		if lim, ok := set.TokenLimit(); ok && (maxTokens == 0 || lim < maxTokens) {
			maxTokens = lim
		}
		resv, err := set.Reserve(rn.budget, rn.estimate(ref, req, maxTokens))
		if err != nil {
			rn.violation(err, agent, target, o.at)
			return nil, err
		}
		req.MaxTokens = resv.MaxTokens
		start := rn.r.cfg.Now()
		resp, mockValue, err := rn.complete(ctx, prov, req, mreq, mocked)
		dur := rn.r.cfg.Now().Sub(start).Milliseconds()
		settleErr := resv.Settle(resp.Cost)
		ci := CallInfo{Kind: "llm", Target: target, Agent: agent, Model: ref, Cost: resp.Cost, DurationMs: dur, Mocked: mocked}
		ev := Event{Type: "llm", At: o.at, Agent: agent, Target: target, Model: ref, Prompt: lastUser(req.Messages), Cost: resp.Cost, DurationMs: dur, Mocked: mocked, Attempt: mreq.Attempt}
		if err == nil {
			u := resp.Usage
			ci.Usage, ev.Usage = &u, &u
		}
		if err != nil {
			ci.Error = codeOf(err)
			ev.Error = infoOf(err, "")
			rn.st.addCall(ci)
			rn.st.emit(ev)
			return nil, err
		}
		res, verr := set.Output(policy.Answer{Text: resp.Text, CompletionTokens: resp.Usage.OutputTokens}, lookup{sc: rn.scope()})
		ev.Answer = res.Text
		var bv *policy.Violation
		if errors.As(verr, &bv) && bv.Rule == "Block" {
			ev.Answer = "[withheld: " + bv.Message + "]"
		}
		rn.st.addCall(ci)
		rn.st.emit(ev)
		if verr == nil && settleErr != nil {
			// The call went over budget: its answer is not used.
			verr = settleErr
		}
		if verr == nil {
			return answerValue(res, mockValue), nil
		}
		rn.violation(verr, agent, target, o.at)
		if k >= o.correct || !errors.As(verr, &bv) || bv.Rule == "MaxSpend" {
			return nil, verr
		}
		req.Messages = append(req.Messages, resp.Message,
			model.Message{Role: model.User, Text: fmt.Sprintf("Your answer was rejected by policy %s (%s): %s. Answer again, fixing that.", bv.Policy, bv.Rule, bv.Message)})
	}
}

// complete asks the model, or the mock standing in for it.
func (rn *run) complete(ctx context.Context, prov model.Provider, req model.Request, mreq MockRequest, mocked bool) (model.Response, any, error) {
	if !mocked {
		resp, err := prov.Complete(ctx, req)
		return resp, nil, err
	}
	v, ok, err := rn.r.cfg.Mocks.answer(mreq, mreq.Target)
	if err != nil {
		return model.Response{}, nil, err
	}
	if !ok {
		v = "mock answer of " + mreq.Target
	}
	lm, err := parseLLMMock(v)
	if err != nil {
		return model.Response{}, nil, err
	}
	t := text(lm.answer)
	resp := model.Response{Text: t, Message: model.Message{Role: model.Assistant, Text: t}, Cost: lm.cost, StopReason: model.StopEnd, Attempts: 1}
	if lm.usage != nil {
		resp.Usage = model.Usage{InputTokens: lm.usage.InputTokens, OutputTokens: lm.usage.OutputTokens}
	}
	return resp, lm.answer, nil
}

// estimate prices a request for MaxSpend: the prompt at about four characters a token, and
// each reply token at the model's output price.
func (rn *run) estimate(ref string, req model.Request, maxTokens int) policy.Estimate {
	prov, id, _ := strings.Cut(ref, "/")
	price, ok := rn.r.cfg.Prices.Lookup(prov, id)
	if !ok {
		return policy.Estimate{MaxTokens: maxTokens}
	}
	chars := len(req.System)
	for _, m := range req.Messages {
		chars += len(m.Text)
	}
	in := float64(chars/4+1) * price.Input / 1e6
	return policy.Estimate{InputUSD: in, OutputUSDPerToken: price.Output / 1e6, MaxTokens: maxTokens}
}

// lastUser is the conversation's last user text: what an llm event shows as the prompt. It
// has been through the input policies already, so Redact rules are applied.
func lastUser(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.User {
			return msgs[i].Text
		}
	}
	return ""
}

// violation records a policy violation in context.meta.violations and emits its event.
func (rn *run) violation(err error, agent, target, at string) {
	var v *policy.Violation
	if !errors.As(err, &v) {
		return
	}
	msg := v.Message
	rn.st.addViolation(ViolationInfo{Policy: v.Policy, Rule: v.Rule, Phase: string(v.Phase), Message: msg, Agent: agent, Target: target})
	rn.st.emit(Event{Type: "violation", At: at, Agent: agent, Target: target, Policy: v.Policy, Rule: v.Rule, Phase: string(v.Phase), Message: msg})
	if v.Log {
		rn.r.cfg.Logger.Warn("policy violation", "policy", v.Policy, "rule", v.Rule, "phase", v.Phase, "agent", agent, "message", v.Message)
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

// buildPrompt joins the call's prompt parts, then the flowing value, then a loop's feedback.
func buildPrompt(parts []string, value any, feedback string) string {
	var b strings.Builder
	joined := strings.Join(parts, "\n\n")
	b.WriteString(joined)
	if value != nil {
		// The flowing value is left out when the prompt already holds it (an argument or a
		// {{template}} put it there).
		if v := text(value); v != "" && !strings.Contains(joined, v) {
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

// inputArgs gives tool: T the flowing value as its input.
func inputArgs(value any) []any {
	if value == nil {
		return nil
	}
	return []any{value}
}

func wantsTools(a *lang.Arg) bool {
	if a == nil {
		return false
	}
	switch x := a.Value.(type) {
	case *lang.Ident:
		return x.Name == "auto"
	case *lang.ListLit:
		return len(x.Elems) > 0
	}
	return false
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
