package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicProvider talks to the Messages API through Anthropic's Go SDK (v2, API version
// 2026-10-21), with the SDK's environment defaults, retries and tracing turned off: keys and
// base URL come from Config.Env and the retry policy is ours.
type anthropicProvider struct {
	caller
	client anthropic.Client
}

func newAnthropic(cfg Config) (Provider, error) {
	key := cfg.env("ANTHROPIC_API_KEY")
	if key == "" {
		return nil, missingKey(Anthropic, "ANTHROPIC_API_KEY", "")
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithAPIKey(key),
		option.WithHTTPClient(cfg.httpClient()),
		option.WithMaxRetries(0),
	}
	if u := cfg.env("ANTHROPIC_BASE_URL"); u != "" {
		opts = append(opts, option.WithBaseURL(u))
	}
	return &anthropicProvider{caller: newCaller(Anthropic, cfg, "ANTHROPIC_API_KEY"), client: anthropic.NewClient(opts...)}, nil
}

func (p *anthropicProvider) Complete(ctx context.Context, req Request) (Response, error) {
	req = p.clamped(req)
	params, b, err := p.body(req)
	if err != nil {
		return Response{}, err
	}
	// The SDK sends the body as it is, its pieces read in order (its params give it the model
	// and the token cap, from which it derives its own timeout); it does not encode the
	// conversation again.
	sized := option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		r.ContentLength = b.len()
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(b.reader()), nil }
		return next(r)
	})
	return p.do(ctx, req, func(ctx context.Context) (Response, error) {
		msg, err := p.client.Messages.New(ctx, params, option.WithRequestBody("application/json", b.reader()), sized)
		if err != nil {
			return Response{}, err
		}
		return p.response(msg)
	})
}

// body returns the request's settings as the SDK's params and its body: each message as the
// SDK encodes a MessageParam (kept in req.Wire), the user turns around tool results merged
// as the Messages API wants them, the tools, the settings.
func (p *anthropicProvider) body(req Request) (anthropic.MessageNewParams, body, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(req.Model), MaxTokens: int64(req.MaxTokens)}
	if params.MaxTokens <= 0 {
		params.MaxTokens = DefaultAnthropicMaxTokens
	}
	if req.Temperature != nil {
		// API version 2026-10-21 answers 400 to any temperature, top_p or top_k, and the v2
		// SDK has no field for them: the setting cannot reach Claude.
		p.cfg.logger().Debug("Anthropic's API takes no temperature; not sending it", "model", req.Model)
	}
	i := 0
	parts, err := req.Wire.messages(Anthropic, req.Messages, func(m Message) ([]byte, error) {
		i++
		return p.message(i-1, m)
	})
	if err != nil {
		return params, nil, err
	}
	var b body
	b.str(`{"max_tokens":`)
	b.add(itoa(int(params.MaxTokens)))
	b.str(`,"messages":[`)
	// A user turn is every user and tool message in a row: their blocks are joined into one
	// message. An assistant message's part is the whole message.
	userTurns(&b, parts, req.Messages, `{"role":"user","content":[`, "]}")
	b.str("]")
	b.field("model", quote(req.Model))
	if req.System != "" {
		sys, err := json.Marshal([]anthropic.TextBlockParam{{Text: req.System}})
		if err != nil {
			return params, nil, err
		}
		b.field("system", sys)
	}
	tools, err := req.Wire.toolBytes(req.Tools, p.tools.list("[", "]", func(t ToolDef) ([]byte, error) {
		tp := anthropic.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Params)}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		return json.Marshal(anthropic.ToolUnionParam{OfTool: &tp})
	}))
	if err != nil {
		return params, nil, err
	}
	if tools != nil {
		if toolChoice(req.ToolChoice) == ToolNone {
			b.str(`,"tool_choice":{"type":"none"}`)
		} else {
			b.str(`,"tool_choice":{"type":"auto"}`)
		}
		b.field("tools", tools)
	}
	b.str("}")
	return params, b, nil
}

// message encodes message i: an assistant message as the whole MessageParam (its native form
// as the API returned it, when it has one), a user or tool message as its content blocks
// joined by commas, for the user turn it belongs to.
func (p *anthropicProvider) message(i int, m Message) ([]byte, error) {
	switch m.Role {
	case Assistant:
		if m.Native != nil && m.Native.Provider == Anthropic {
			var native anthropic.Message
			if err := json.Unmarshal(m.Native.Data, &native); err != nil {
				return nil, configError(Anthropic, "message %d: unreadable native message: %v", i, err)
			}
			return encode(native.ToParam())
		}
		var blocks []anthropic.ContentBlockParamUnion
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, argsObject(c.Args), c.Name))
		}
		return encode(anthropic.NewAssistantMessage(blocks...))
	case Tool:
		var blocks []anthropic.ContentBlockParamUnion
		for _, r := range m.ToolResults {
			blocks = append(blocks, anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError))
		}
		if m.Text != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Text))
		}
		return joinEncoded(len(blocks), func(i int) ([]byte, error) { return encode(blocks[i]) })
	default:
		return encode(anthropic.NewTextBlock(m.Text))
	}
}

func (p *anthropicProvider) response(msg *anthropic.Message) (Response, error) {
	resp := Response{
		Model:      string(msg.Model),
		Usage:      Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)},
		NativeStop: string(msg.StopReason),
	}
	if msg.Type != "message" || msg.JSON.Content.Raw() == "" {
		return Response{}, badResponse(Anthropic, errorString("not a message object"))
	}
	var text []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := json.RawMessage(b.Input)
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage(`{}`)
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: args})
		}
	}
	resp.Text = strings.Join(text, "")
	switch msg.StopReason {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		resp.StopReason = StopEnd
	case anthropic.StopReasonToolUse:
		resp.StopReason = StopToolCalls
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		resp.StopReason = StopMaxTokens
	case anthropic.StopReasonRefusal:
		resp.StopReason = StopFiltered
	default:
		resp.StopReason = StopOther
	}
	resp.Message = Message{Role: Assistant, Text: resp.Text, ToolCalls: resp.ToolCalls,
		Native: &Native{Provider: Anthropic, Data: json.RawMessage(msg.RawJSON())}}
	return resp, nil
}

// argsObject decodes tool arguments for SDKs that take them as a Go value; arguments that are
// not a JSON object (a model's malformed text) are sent as an empty object.
func argsObject(args json.RawMessage) map[string]any {
	m := map[string]any{}
	if len(args) > 0 {
		_ = json.Unmarshal(args, &m)
	}
	return m
}

// inputSchema splits a JSON Schema into the SDK's fields (properties, required) and the rest.
func inputSchema(params json.RawMessage) anthropic.ToolInputSchemaParam {
	var s anthropic.ToolInputSchemaParam
	var doc map[string]any
	if json.Unmarshal(params, &doc) != nil || doc == nil {
		s.Properties = map[string]any{}
		return s
	}
	for k, v := range doc {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			if list, ok := v.([]any); ok {
				for _, r := range list {
					if name, ok := r.(string); ok {
						s.Required = append(s.Required, name)
					}
				}
			}
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	return s
}
