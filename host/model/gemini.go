package model

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"google.golang.org/genai"
)

// geminiCallPrefix marks call ids the adapter made up for function calls that came without
// one; they are never sent back to Gemini.
const geminiCallPrefix = "halo-gemini-"

// geminiProvider talks to the Gemini API's generateContent. Google's genai SDK gives the wire
// types (each message is encoded as a genai.Content, the response decoded into the SDK's
// types); the body is made of each message's bytes, encoded once per conversation (Wire), in
// the layout the SDK sends for the Gemini API backend, and sent on net/http with the key in
// x-goog-api-key. Nothing retries on its own.
type geminiProvider struct {
	caller
	rest
	base string
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
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, configError(Gemini, "GEMINI_BASE_URL %q is not a URL", base)
	}
	h := http.Header{}
	h.Set("x-goog-api-key", key)
	return &geminiProvider{caller: newCaller(Gemini, cfg, keyEnv), rest: rest{client: cfg.httpClient(), header: h},
		base: strings.TrimRight(base, "/") + "/v1beta/"}, nil
}

func (p *geminiProvider) Complete(ctx context.Context, req Request) (Response, error) {
	req = p.clamped(req)
	endpoint, err := p.endpoint(req.Model)
	if err != nil {
		return Response{}, err
	}
	b, err := p.body(req)
	if err != nil {
		return Response{}, err
	}
	return p.do(ctx, req, func(ctx context.Context) (Response, error) {
		var gresp genai.GenerateContentResponse
		if err := p.post(ctx, endpoint, b, &gresp); err != nil {
			return Response{}, err
		}
		return p.response(&gresp)
	})
}

// endpoint is generateContent's URL for model, named as the SDK names it: models/ID, unless
// the id already says models/ or tunedModels/.
func (p *geminiProvider) endpoint(model string) (string, error) {
	if strings.ContainsAny(model, "?&#") || strings.Contains(model, "..") {
		return "", configError(Gemini, "model %q: not a model id", model)
	}
	if !strings.HasPrefix(model, "models/") && !strings.HasPrefix(model, "tunedModels/") {
		model = "models/" + model
	}
	return p.base + model + ":generateContent", nil
}

// body is the request body as the SDK lays it out for the Gemini API: the contents (each
// message a genai.Content, kept in req.Wire; function responses and a note after them in one
// user turn), generationConfig, systemInstruction, toolConfig and tools.
func (p *geminiProvider) body(req Request) (body, error) {
	i := 0
	parts, err := req.Wire.messages(Gemini, req.Messages, func(m Message) ([]byte, error) {
		i++
		return p.message(i-1, m)
	})
	if err != nil {
		return nil, err
	}
	var b body
	b.str(`{"contents":[`)
	userTurns(&b, parts, req.Messages, `{"parts":[`, `],"role":"user"}`)
	b.str("]")
	gc := struct {
		MaxOutputTokens int32    `json:"maxOutputTokens,omitempty"`
		Temperature     *float32 `json:"temperature,omitempty"`
	}{MaxOutputTokens: int32(req.MaxTokens)}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		gc.Temperature = &t
	}
	cfg, err := json.Marshal(gc)
	if err != nil {
		return nil, err
	}
	b.field("generationConfig", cfg)
	if req.System != "" {
		sys, err := json.Marshal(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: req.System}}})
		if err != nil {
			return nil, err
		}
		b.field("systemInstruction", sys)
	}
	// One genai.Tool holding every function declaration.
	tools, err := req.Wire.toolBytes(req.Tools, p.tools.list(`[{"functionDeclarations":[`, "]}]", func(t ToolDef) ([]byte, error) {
		return json.Marshal(&genai.FunctionDeclaration{Name: t.Name, Description: t.Description, ParametersJsonSchema: schema(t.Params)})
	}))
	if err != nil {
		return nil, err
	}
	if tools != nil {
		mode := genai.FunctionCallingConfigModeAuto
		if toolChoice(req.ToolChoice) == ToolNone {
			mode = genai.FunctionCallingConfigModeNone
		}
		b.str(`,"toolConfig":{"functionCallingConfig":{"mode":`)
		b.add(quote(string(mode)))
		b.str("}}")
		b.field("tools", tools)
	}
	b.str("}")
	return b, nil
}

// message encodes message i: a model message as the whole Content (its native form, with the
// parts' thought signatures, when it has one), a user or tool message as its parts joined by
// commas, for the user turn it belongs to.
func (p *geminiProvider) message(i int, m Message) ([]byte, error) {
	switch m.Role {
	case Assistant:
		if m.Native != nil && m.Native.Provider == Gemini {
			// Parts carry thought signatures the API checks: send them back unchanged.
			var c genai.Content
			if err := json.Unmarshal(m.Native.Data, &c); err != nil {
				return nil, configError(Gemini, "message %d: unreadable native message: %v", i, err)
			}
			c.Role = genai.RoleModel
			return json.Marshal(&c)
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
		return json.Marshal(c)
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
		return joinEncoded(len(parts), func(i int) ([]byte, error) { return json.Marshal(parts[i]) })
	default:
		return json.Marshal(&genai.Part{Text: m.Text})
	}
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
