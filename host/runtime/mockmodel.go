package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/model"
)

// A mockModel answers an agent's requests from its mock as a model would: with text (an
// answer) or with tool calls (UseTool values), so the tool loop runs one path for mocked and
// real answers. Without a mock (halo run --mock) it answers with a fixed text.
type mockModel struct {
	rn  *run
	req MockRequest
	// tools returns the conversation's offered tools; withTools says the call has tools:.
	tools     func() []agent.Tool
	withTools bool
	// attempt and step are the request's numbers, set before each Complete.
	attempt, step int
	// last is the answer value of the last text answer (a mock may answer with an object).
	last any
}

func (m *mockModel) Complete(_ context.Context, req model.Request) (model.Response, error) {
	mreq := m.req
	mreq.Attempt, mreq.Step, mreq.Messages = m.attempt, m.step, req.Messages
	var offered []agent.Tool
	if m.tools != nil {
		offered = m.tools()
		for _, t := range offered {
			mreq.Tools = append(mreq.Tools, t.Target)
		}
	}
	v, ok, err := m.rn.mocks().answer(mreq, mreq.Target)
	if err != nil {
		return model.Response{}, err
	}
	if !ok {
		v = "mock answer of " + mreq.Target
	}
	uses, isUse, err := toolUses(v)
	if err != nil {
		return model.Response{}, err
	}
	if isUse && !m.withTools {
		return model.Response{}, errorf(CodeMock, "mock %s asks for a tool call, but the call offers no tools (give it tools:)", mreq.Target)
	}
	if isUse {
		resp := model.Response{StopReason: model.StopToolCalls, Attempts: 1}
		for i, u := range uses {
			name := functionFor(offered, u.Target)
			args, err := json.Marshal(u.Args)
			if err != nil || u.Args == nil {
				args = json.RawMessage(`{}`)
			}
			resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{ID: fmt.Sprintf("mock-%d-%d", m.step, i+1), Name: name, Args: args})
		}
		resp.Message = model.Message{Role: model.Assistant, ToolCalls: resp.ToolCalls}
		return resp, nil
	}
	lm, err := parseLLMMock(v)
	if err != nil {
		return model.Response{}, err
	}
	m.last = lm.answer
	t := text(lm.answer)
	resp := model.Response{Text: t, Message: model.Message{Role: model.Assistant, Text: t}, Cost: lm.cost, StopReason: model.StopEnd, Attempts: 1}
	if lm.usage != nil {
		resp.Usage = model.Usage{InputTokens: lm.usage.InputTokens, OutputTokens: lm.usage.OutputTokens}
	}
	return resp, nil
}

// functionFor is the function name the model would use for target: the offered tool's, else
// the name the tool loop would give it (a method not described yet, or a target that is not
// offered at all, which the loop then refuses as unknown).
func functionFor(offered []agent.Tool, target string) string {
	for _, t := range offered {
		if t.Target == target {
			return t.Name
		}
	}
	toolName, method, ok := strings.Cut(target, ".")
	if !ok {
		return target
	}
	return agent.FunctionName(toolName, method)
}

// toolUses reads a mock answer that asks for tool calls: a ToolUse, a []ToolUse, an object
// {"$useTool": "Tool.method", "args": {...}}, or a non-empty list of such objects. isUse is
// false for anything else, which is an answer.
func toolUses(v any) (uses []ToolUse, isUse bool, err error) {
	switch x := v.(type) {
	case ToolUse:
		return []ToolUse{x}, true, nil
	case []ToolUse:
		if len(x) == 0 {
			return nil, false, errorf(CodeMock, "mock answer: an empty list of tool calls")
		}
		return x, true, nil
	case map[string]any:
		if _, ok := x["$useTool"]; !ok {
			return nil, false, nil
		}
		u, err := parseUseTool(x)
		return []ToolUse{u}, true, err
	case []any:
		if len(x) == 0 {
			return nil, false, nil
		}
		for _, e := range x {
			obj, ok := e.(map[string]any)
			if !ok {
				return nil, false, nil
			}
			if _, ok := obj["$useTool"]; !ok {
				return nil, false, nil
			}
		}
		for _, e := range x {
			u, err := parseUseTool(e.(map[string]any))
			if err != nil {
				return nil, true, err
			}
			uses = append(uses, u)
		}
		return uses, true, nil
	}
	return nil, false, nil
}

func parseUseTool(obj map[string]any) (ToolUse, error) {
	target, ok := obj["$useTool"].(string)
	if !ok || !strings.Contains(target, ".") {
		return ToolUse{}, errorf(CodeMock, `mock answer: $useTool names a "Tool.method" target, such as "Files.read"`)
	}
	u := ToolUse{Target: target}
	for k, v := range obj {
		switch k {
		case "$useTool":
		case "args":
			if v == nil {
				continue
			}
			args, ok := v.(map[string]any)
			if !ok {
				return u, errorf(CodeMock, "mock answer: $useTool %s: args is an object of named arguments", target)
			}
			u.Args = args
		default:
			return u, errorf(CodeMock, "mock answer: $useTool %s: unknown key %s (known: args)", target, k)
		}
	}
	return u, nil
}
