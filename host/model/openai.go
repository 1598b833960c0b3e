package model

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// The OpenAI-compatible services, each with its key variable, base-URL variable and default
// base URL. OpenRouter and Together speak OpenAI's chat completions API.
var openAICompatible = map[string]struct{ keyEnv, urlEnv, url string }{
	OpenAI:     {"OPENAI_API_KEY", "OPENAI_BASE_URL", "https://api.openai.com/v1"},
	OpenRouter: {"OPENROUTER_API_KEY", "OPENROUTER_BASE_URL", "https://openrouter.ai/api/v1"},
	Together:   {"TOGETHER_API_KEY", "TOGETHER_BASE_URL", "https://api.together.xyz/v1"},
}

// openAIProvider talks to /chat/completions. go-openai gives the wire types (each message is
// encoded as go-openai encodes it, the response decoded into its types, its reasoning-model
// checks applied); the body is made of each message's bytes, encoded once per conversation
// (Wire), and sent on net/http. Nothing retries on its own: the caller's policy is the only
// one.
type openAIProvider struct {
	caller
	rest
	url string
}

func newOpenAI(name string, cfg Config) (Provider, error) {
	svc := openAICompatible[name]
	key := cfg.env(svc.keyEnv)
	if key == "" {
		return nil, missingKey(name, svc.keyEnv, "")
	}
	base := strings.TrimRight(svc.url, "/")
	if u := cfg.env(svc.urlEnv); u != "" {
		base = strings.TrimRight(u, "/")
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+key)
	return &openAIProvider{caller: newCaller(name, cfg, svc.keyEnv), rest: rest{client: cfg.httpClient(), header: h},
		url: base + "/chat/completions"}, nil
}

func (p *openAIProvider) Complete(ctx context.Context, req Request) (Response, error) {
	req = p.clamped(req)
	b, err := p.body(req)
	if err != nil {
		return Response{}, err
	}
	return p.do(ctx, req, func(ctx context.Context) (Response, error) {
		var cresp openai.ChatCompletionResponse
		if err := p.post(ctx, p.url, b, &cresp); err != nil {
			return Response{}, err
		}
		return p.response(cresp)
	})
}

// settings is the request without its messages and tools: what go-openai checks for reasoning
// models, and the scalar fields of the body.
func (p *openAIProvider) settings(req Request) openai.ChatCompletionRequest {
	creq := openai.ChatCompletionRequest{Model: req.Model}
	if req.Temperature != nil {
		// go-openai drops a zero temperature (omitempty); its documented way to send 0 is the
		// smallest float32 above it, which every server reads as 0.
		creq.Temperature = float32(*req.Temperature)
		if creq.Temperature == 0 {
			creq.Temperature = math.SmallestNonzeroFloat32
		}
	}
	if req.MaxTokens > 0 {
		// OpenAI deprecated max_tokens (its reasoning models refuse it); OpenRouter and
		// Together document max_tokens.
		if p.name == OpenAI {
			creq.MaxCompletionTokens = req.MaxTokens
		} else {
			creq.MaxTokens = req.MaxTokens
		}
	}
	return creq
}

// body is the request body in go-openai's field order: the system prompt and each message as
// go-openai encodes a ChatCompletionMessage (kept in req.Wire), the tools, the settings.
func (p *openAIProvider) body(req Request) (body, error) {
	creq := p.settings(req)
	if err := openai.NewReasoningValidator().Validate(creq); err != nil {
		return nil, configError(p.name, "%v", err)
	}
	parts, err := req.Wire.messages(p.name, req.Messages, p.message)
	if err != nil {
		return nil, err
	}
	var sys []byte
	if req.System != "" {
		if sys, err = encode(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: req.System}); err != nil {
			return nil, err
		}
	}
	var b body
	b.chatStart(req.Model, sys, parts)
	if creq.MaxTokens > 0 {
		b.field("max_tokens", itoa(creq.MaxTokens))
	}
	if creq.MaxCompletionTokens > 0 {
		b.field("max_completion_tokens", itoa(creq.MaxCompletionTokens))
	}
	if creq.Temperature != 0 {
		t, _ := json.Marshal(creq.Temperature)
		b.field("temperature", t)
	}
	b.str(`,"stream":false`)
	tools, err := req.Wire.toolBytes(req.Tools, p.tools.list("[", "]", func(t ToolDef) ([]byte, error) {
		return json.Marshal(openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: schema(t.Params)}})
	}))
	if err != nil {
		return nil, err
	}
	if tools != nil {
		b.field("tools", tools)
		b.field("tool_choice", quote(string(toolChoice(req.ToolChoice))))
	}
	b.str("}")
	return b, nil
}

// message encodes one message: the messages go-openai sends for it, joined by commas (a tool
// message is a "tool" message per result, and its note a user message after them).
func (p *openAIProvider) message(m Message) ([]byte, error) {
	var oms []openai.ChatCompletionMessage
	switch m.Role {
	case Assistant:
		om := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Text}
		for _, c := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: argsText(c.Args)}})
		}
		oms = append(oms, om)
	case Tool:
		for _, r := range m.ToolResults {
			oms = append(oms, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool,
				Content: r.Content, ToolCallID: r.CallID})
		}
		if m.Text != "" {
			// A note after the results (the tool loop's "steps used") is a user message:
			// tool messages carry only results.
			oms = append(oms, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.Text})
		}
	default:
		oms = append(oms, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.Text})
	}
	return joinEncoded(len(oms), func(i int) ([]byte, error) { return encode(oms[i]) })
}

func (p *openAIProvider) response(cresp openai.ChatCompletionResponse) (Response, error) {
	if len(cresp.Choices) == 0 {
		return Response{}, badResponse(p.name, errorString("no choices in the response"))
	}
	choice := cresp.Choices[0]
	resp := Response{
		Text:       choice.Message.Content,
		Model:      cresp.Model,
		Usage:      Usage{InputTokens: cresp.Usage.PromptTokens, OutputTokens: cresp.Usage.CompletionTokens},
		NativeStop: string(choice.FinishReason),
	}
	for _, c := range choice.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: argsJSON(c.Function.Arguments)})
	}
	switch choice.FinishReason {
	case openai.FinishReasonStop:
		resp.StopReason = StopEnd
	case openai.FinishReasonToolCalls, openai.FinishReasonFunctionCall:
		resp.StopReason = StopToolCalls
	case openai.FinishReasonLength:
		resp.StopReason = StopMaxTokens
	case openai.FinishReasonContentFilter:
		resp.StopReason = StopFiltered
	default:
		resp.StopReason = StopOther
	}
	if len(resp.ToolCalls) > 0 {
		// Some OpenAI-compatible servers say "stop" even when they return tool calls.
		resp.StopReason = StopToolCalls
	}
	resp.Message = Message{Role: Assistant, Text: resp.Text, ToolCalls: resp.ToolCalls}
	return resp, nil
}

// toolChoice returns c or its default.
func toolChoice(c ToolChoice) ToolChoice {
	if c == "" {
		return ToolAuto
	}
	return c
}

// schema returns a tool's parameter schema, an open object when it has none.
func schema(params json.RawMessage) json.RawMessage {
	if len(params) == 0 || string(params) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return params
}

// argsJSON turns the arguments text a model wrote into ToolCall.Args: "{}" for none, the text
// itself when it is JSON, else a JSON string holding the text (so the caller can tell the model
// its arguments were not JSON, and argsText can send back exactly what it wrote).
func argsJSON(text string) json.RawMessage {
	t := strings.TrimSpace(text)
	if t == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(text)
	return b
}

// argsText is the reverse of argsJSON, for APIs that carry arguments as text.
func argsText(args json.RawMessage) string {
	if len(args) == 0 {
		return "{}"
	}
	if args[0] == '"' {
		var s string
		if json.Unmarshal(args, &s) == nil {
			return s
		}
	}
	return string(args)
}

type errorString string

func (e errorString) Error() string { return string(e) }
