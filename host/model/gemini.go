package model

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// geminiCallPrefix marks call ids the adapter made up for function calls that came without
// one; they are never sent back to Gemini.
const geminiCallPrefix = "halo-gemini-"

// geminiProvider talks to generateContent through Google's genai SDK, Gemini API backend, with
// the key and base URL given explicitly (so the SDK's own environment lookups find nothing to
// add) and the SDK's retries left off (its RetryOptions stay nil).
type geminiProvider struct {
	caller
	client *genai.Client
}

func newGemini(cfg Config) (Provider, error) {
	// GOOGLE_API_KEY wins when both are set, as in Google's own SDKs.
	keyEnv := "GOOGLE_API_KEY"
	key := cfg.env(keyEnv)
	if key == "" {
		keyEnv, key = "GEMINI_API_KEY", cfg.env("GEMINI_API_KEY")
	}
	if key == "" {
		return nil, missingKey(Gemini, "GEMINI_API_KEY", "GOOGLE_API_KEY")
	}
	base := cfg.env("GEMINI_BASE_URL")
	if base == "" {
		base = "https://generativelanguage.googleapis.com/"
	}
	// NewClient only checks its config with an API key; it makes no request.
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  cfg.httpClient(),
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: "v1beta"},
	})
	if err != nil {
		return nil, configError(Gemini, "%v", err)
	}
	return &geminiProvider{caller: newCaller(Gemini, cfg, keyEnv), client: client}, nil
}

func (p *geminiProvider) Complete(ctx context.Context, req Request) (Response, error) {
	req = p.clamped(req)
	contents, config, err := p.request(req)
	if err != nil {
		return Response{}, err
	}
	return p.do(ctx, req, func(ctx context.Context) (Response, error) {
		gresp, err := p.client.Models.GenerateContent(ctx, req.Model, contents, config)
		if err != nil {
			return Response{}, err
		}
		return p.response(gresp)
	})
}

func (p *geminiProvider) request(req Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	config := &genai.GenerateContentConfig{MaxOutputTokens: int32(req.MaxTokens)}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		config.Temperature = &t
	}
	var contents []*genai.Content
	user := func(parts ...*genai.Part) {
		// Function responses and a following note go in one user turn.
		if n := len(contents); n > 0 && contents[n-1].Role == genai.RoleUser {
			contents[n-1].Parts = append(contents[n-1].Parts, parts...)
			return
		}
		contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: parts})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case Assistant:
			if m.Native != nil && m.Native.Provider == Gemini {
				// Parts carry thought signatures the API checks: send them back unchanged.
				var c genai.Content
				if err := json.Unmarshal(m.Native.Data, &c); err != nil {
					return nil, nil, configError(Gemini, "message %d: unreadable native message: %v", i, err)
				}
				c.Role = genai.RoleModel
				contents = append(contents, &c)
				continue
			}
			c := &genai.Content{Role: genai.RoleModel}
			if m.Text != "" {
				c.Parts = append(c.Parts, &genai.Part{Text: m.Text})
			}
			for _, tc := range m.ToolCalls {
				fc := &genai.FunctionCall{Name: tc.Name, Args: argsObject(tc.Args)}
				if !strings.HasPrefix(tc.ID, geminiCallPrefix) {
					fc.ID = tc.ID
				}
				c.Parts = append(c.Parts, &genai.Part{FunctionCall: fc})
			}
			contents = append(contents, c)
		case Tool:
			var parts []*genai.Part
			for _, r := range m.ToolResults {
				// Gemini's convention: the result under "output", a failure under "error".
				key := "output"
				if r.IsError {
					key = "error"
				}
				fr := &genai.FunctionResponse{Name: r.Name, Response: map[string]any{key: r.Content}}
				if !strings.HasPrefix(r.CallID, geminiCallPrefix) {
					fr.ID = r.CallID
				}
				parts = append(parts, &genai.Part{FunctionResponse: fr})
			}
			if m.Text != "" {
				parts = append(parts, &genai.Part{Text: m.Text})
			}
			user(parts...)
		default:
			user(&genai.Part{Text: m.Text})
		}
	}
	if len(req.Tools) > 0 {
		tool := &genai.Tool{}
		for _, t := range req.Tools {
			tool.FunctionDeclarations = append(tool.FunctionDeclarations, &genai.FunctionDeclaration{
				Name: t.Name, Description: t.Description, ParametersJsonSchema: schema(t.Params)})
		}
		config.Tools = []*genai.Tool{tool}
		mode := genai.FunctionCallingConfigModeAuto
		if toolChoice(req.ToolChoice) == ToolNone {
			mode = genai.FunctionCallingConfigModeNone
		}
		config.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: mode}}
	}
	return contents, config, nil
}

func (p *geminiProvider) response(gresp *genai.GenerateContentResponse) (Response, error) {
	resp := Response{Model: gresp.ModelVersion}
	if u := gresp.UsageMetadata; u != nil {
		// Thinking tokens are billed as output.
		resp.Usage = Usage{InputTokens: int(u.PromptTokenCount), OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount)}
	}
	if len(gresp.Candidates) == 0 {
		if pf := gresp.PromptFeedback; pf != nil && pf.BlockReason != "" {
			// The prompt itself was blocked: an answer with nothing in it, not a broken reply.
			resp.StopReason, resp.NativeStop = StopFiltered, string(pf.BlockReason)
			resp.Message = Message{Role: Assistant}
			return resp, nil
		}
		return Response{}, badResponse(Gemini, errorString("no candidates in the response"))
	}
	cand := gresp.Candidates[0]
	resp.NativeStop = string(cand.FinishReason)
	var text []string
	if cand.Content != nil {
		for _, part := range cand.Content.Parts {
			switch {
			case part.FunctionCall != nil:
				fc := part.FunctionCall
				id := fc.ID
				if id == "" {
					id = fmt.Sprintf("%s%d", geminiCallPrefix, len(resp.ToolCalls)+1)
				}
				args, err := json.Marshal(fc.Args)
				if err != nil || fc.Args == nil {
					args = json.RawMessage(`{}`)
				}
				resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: fc.Name, Args: args})
			case part.Thought:
				// A thought summary is not part of the answer.
			case part.Text != "":
				text = append(text, part.Text)
			}
		}
	}
	resp.Text = strings.Join(text, "")
	switch cand.FinishReason {
	case genai.FinishReasonStop, genai.FinishReasonUnspecified, "":
		resp.StopReason = StopEnd
	case genai.FinishReasonMaxTokens:
		resp.StopReason = StopMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII:
		resp.StopReason = StopFiltered
	default:
		resp.StopReason = StopOther
	}
	if len(resp.ToolCalls) > 0 {
		// Gemini says STOP when it asks for function calls.
		resp.StopReason = StopToolCalls
	}
	resp.Message = Message{Role: Assistant, Text: resp.Text, ToolCalls: resp.ToolCalls}
	if cand.Content != nil {
		data, err := json.Marshal(cand.Content)
		if err != nil {
			return Response{}, badResponse(Gemini, err)
		}
		resp.Message.Native = &Native{Provider: Gemini, Data: data}
	}
	return resp, nil
}
