package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The /api/chat wire types, as Ollama's API documentation gives them.
type (
	ollamaOptions struct {
		Temperature *float64 `json:"temperature,omitempty"`
		// NumPredict is Ollama's cap on generated tokens.
		NumPredict int `json:"num_predict,omitempty"`
	}
	ollamaMessage struct {
		Role      string           `json:"role"`
		Content   string           `json:"content"`
		Thinking  string           `json:"thinking,omitempty"`
		ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
		// ToolName names the function a "tool" message answers; ToolCallID the call, when
		// the reply gave it an id (two calls of one function in a turn are told apart).
		ToolName   string `json:"tool_name,omitempty"`
		ToolCallID string `json:"tool_call_id,omitempty"`
	}
	ollamaToolCall struct {
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Index     *int            `json:"index,omitempty"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	ollamaTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	ollamaResponse struct {
		Model           string        `json:"model"`
		CreatedAt       string        `json:"created_at"`
		Message         ollamaMessage `json:"message"`
		Done            bool          `json:"done"`
		DoneReason      string        `json:"done_reason"`
		PromptEvalCount int           `json:"prompt_eval_count"`
		EvalCount       int           `json:"eval_count"`
	}
)

// ollamaCallPrefix marks call ids made up for tool calls that came without one.
const ollamaCallPrefix = "halo-ollama-"

// ollamaProvider talks to a local (or remote) Ollama server's /api/chat on net/http.
type ollamaProvider struct {
	caller
	rest
	url string
}

func newOllama(cfg Config) (Provider, error) {
	base, err := ollamaBase(cfg.env("OLLAMA_HOST"))
	if err != nil {
		return nil, configError(Ollama, "OLLAMA_HOST: %v", err)
	}
	h := http.Header{}
	if key := cfg.env("OLLAMA_API_KEY"); key != "" {
		// Needed only by hosted Ollama; a local server takes no key.
		h.Set("Authorization", "Bearer "+key)
	}
	return &ollamaProvider{caller: newCaller(Ollama, cfg, "OLLAMA_API_KEY"), rest: rest{client: cfg.httpClient(), header: h},
		url: base + "/api/chat"}, nil
}

// ollamaBase reads OLLAMA_HOST as Ollama's own client does: a scheme is optional (http), and
// so is the port (11434 when neither scheme nor port is given).
func ollamaBase(host string) (string, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		return "http://127.0.0.1:11434", nil
	}
	withScheme := strings.Contains(host, "://")
	if !withScheme {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a host or URL", host)
	}
	if u.Port() == "" && !withScheme {
		u.Host = net.JoinHostPort(u.Hostname(), "11434")
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.Path, "/"), nil
}

func (p *ollamaProvider) Complete(ctx context.Context, req Request) (Response, error) {
	req = p.clamped(req)
	b, err := p.body(req)
	if err != nil {
		return Response{}, err
	}
	return p.do(ctx, req, func(ctx context.Context) (Response, error) {
		var oresp ollamaResponse
		if err := p.post(ctx, p.url, b, &oresp); err != nil {
			return Response{}, err
		}
		return p.response(oresp)
	})
}

// body is the /api/chat request (model, messages, tools, stream, options) with its messages
// made of each message's bytes, encoded once per conversation (req.Wire).
func (p *ollamaProvider) body(req Request) (body, error) {
	parts, err := req.Wire.messages(Ollama, req.Messages, p.message)
	if err != nil {
		return nil, err
	}
	var sys []byte
	if req.System != "" {
		if sys, err = json.Marshal(ollamaMessage{Role: "system", Content: req.System}); err != nil {
			return nil, err
		}
	}
	var b body
	b.chatStart(req.Model, sys, parts)
	// Ollama has no tool_choice: with ToolNone the tools are still offered, and the caller
	// ignores any calls the model makes anyway.
	tools, err := req.Wire.toolBytes(req.Tools, p.tools.list("[", "]", func(t ToolDef) ([]byte, error) {
		var ot ollamaTool
		ot.Type = "function"
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, schema(t.Params)
		return json.Marshal(ot)
	}))
	if err != nil {
		return nil, err
	}
	if tools != nil {
		b.field("tools", tools)
	}
	b.str(`,"stream":false`)
	if req.Temperature != nil || req.MaxTokens > 0 {
		opts, err := json.Marshal(ollamaOptions{Temperature: req.Temperature, NumPredict: req.MaxTokens})
		if err != nil {
			return nil, err
		}
		b.field("options", opts)
	}
	b.str("}")
	return b, nil
}

// message encodes one message as the /api/chat messages it is, joined by commas (a tool
// message is a "tool" message per result, and its note a user message after them).
func (p *ollamaProvider) message(m Message) ([]byte, error) {
	var oms []ollamaMessage
	switch m.Role {
	case Assistant:
		om := ollamaMessage{Role: "assistant", Content: m.Text}
		for k, c := range m.ToolCalls {
			// As Ollama's API documentation sends a call back: type, and the call's index
			// in its reply.
			tc := ollamaToolCall{Type: "function"}
			if !strings.HasPrefix(c.ID, ollamaCallPrefix) {
				tc.ID = c.ID
			}
			tc.Function.Index = &k
			tc.Function.Name = c.Name
			tc.Function.Arguments = json.RawMessage(mustJSON(argsObject(c.Args)))
			om.ToolCalls = append(om.ToolCalls, tc)
		}
		oms = append(oms, om)
	case Tool:
		for _, r := range m.ToolResults {
			om := ollamaMessage{Role: "tool", Content: r.Content, ToolName: r.Name}
			if !strings.HasPrefix(r.CallID, ollamaCallPrefix) {
				// An id the reply gave, not one made up for a call without one.
				om.ToolCallID = r.CallID
			}
			oms = append(oms, om)
		}
		if m.Text != "" {
			oms = append(oms, ollamaMessage{Role: "user", Content: m.Text})
		}
	default:
		oms = append(oms, ollamaMessage{Role: "user", Content: m.Text})
	}
	return joinEncoded(len(oms), func(i int) ([]byte, error) { return json.Marshal(oms[i]) })
}

func (p *ollamaProvider) response(oresp ollamaResponse) (Response, error) {
	if !oresp.Done || oresp.Message.Role == "" {
		return Response{}, badResponse(Ollama, errorString("not a finished chat message"))
	}
	resp := Response{
		Text:       oresp.Message.Content,
		Model:      oresp.Model,
		Usage:      Usage{InputTokens: oresp.PromptEvalCount, OutputTokens: oresp.EvalCount},
		NativeStop: oresp.DoneReason,
	}
	for i, c := range oresp.Message.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("%s%d", ollamaCallPrefix, i+1)
		}
		args := c.Function.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: c.Function.Name, Args: args})
	}
	switch {
	case len(resp.ToolCalls) > 0:
		resp.StopReason = StopToolCalls
	case oresp.DoneReason == "stop" || oresp.DoneReason == "":
		resp.StopReason = StopEnd
	case oresp.DoneReason == "length":
		resp.StopReason = StopMaxTokens
	default:
		resp.StopReason = StopOther
	}
	resp.Message = Message{Role: Assistant, Text: resp.Text, ToolCalls: resp.ToolCalls}
	return resp, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte("{}")
	}
	return b
}
