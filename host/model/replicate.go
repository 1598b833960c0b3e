package model

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// replicatePoll is how long to wait between polls of a prediction still running after the
// synchronous wait ("Prefer: wait") ended.
const replicatePoll = time.Second

// replicatePrediction is the prediction object of Replicate's HTTP API.
type replicatePrediction struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Version string          `json:"version"`
	Status  string          `json:"status"`
	Output  json.RawMessage `json:"output"`
	Error   json.RawMessage `json:"error"`
	URLs    struct {
		Get string `json:"get"`
	} `json:"urls"`
	Metrics struct {
		InputTokenCount  int     `json:"input_token_count"`
		OutputTokenCount int     `json:"output_token_count"`
		PredictTime      float64 `json:"predict_time"`
	} `json:"metrics"`
}

// replicateProvider runs language models through Replicate's predictions API on net/http.
// Replicate has no tool calling: a request with tools fails with TOOL_CONFIG.
type replicateProvider struct {
	caller
	rest
	base string
}

func newReplicate(cfg Config) (Provider, error) {
	token := cfg.env("REPLICATE_API_TOKEN")
	if token == "" {
		return nil, missingKey(Replicate, "REPLICATE_API_TOKEN", "")
	}
	base := strings.TrimRight(cfg.env("REPLICATE_BASE_URL"), "/")
	if base == "" {
		base = "https://api.replicate.com"
	}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	return &replicateProvider{caller: newCaller(Replicate, cfg, "REPLICATE_API_TOKEN"), rest: rest{client: cfg.httpClient(), header: h}, base: base}, nil
}

// CanCallTools is false: Replicate's predictions API has no tool calling.
func (p *replicateProvider) CanCallTools() bool { return false }

func (p *replicateProvider) Complete(ctx context.Context, req Request) (Response, error) {
	req = p.clamped(req)
	url, body, err := p.request(req)
	if err != nil {
		return Response{}, err
	}
	return p.do(ctx, req, func(ctx context.Context) (Response, error) {
		var pred replicatePrediction
		// Ask the API to hold the request until the prediction ends (it gives up after 60s).
		post := p.rest
		post.header = post.header.Clone()
		post.header.Set("Prefer", "wait")
		if err := post.send(ctx, http.MethodPost, url, body, &pred); err != nil {
			return Response{}, err
		}
		for pred.Status == "starting" || pred.Status == "processing" {
			if pred.URLs.Get == "" {
				return Response{}, badResponse(Replicate, errorString("running prediction without a get URL"))
			}
			if err := p.sleep(ctx, replicatePoll); err != nil {
				return Response{}, err
			}
			if err := p.send(ctx, http.MethodGet, pred.URLs.Get, nil, &pred); err != nil {
				return Response{}, err
			}
		}
		return p.response(pred)
	})
}

// request builds the prediction: an "owner/name" model runs its latest version through the
// models endpoint, "owner/name:version" that version through /v1/predictions.
func (p *replicateProvider) request(req Request) (string, map[string]any, error) {
	if len(req.Tools) > 0 {
		return "", nil, &Error{Code: CodeConfig, Provider: Replicate,
			Message: "Replicate models cannot call tools; give this agent a model from another provider"}
	}
	prompt, err := replicatePrompt(req.Messages)
	if err != nil {
		return "", nil, err
	}
	input := map[string]any{"prompt": prompt}
	if req.System != "" {
		input["system_prompt"] = req.System
	}
	if req.MaxTokens > 0 {
		input["max_tokens"] = req.MaxTokens
	}
	if req.Temperature != nil {
		input["temperature"] = *req.Temperature
	}
	name, version, pinned := strings.Cut(req.Model, ":")
	if strings.Count(name, "/") != 1 || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || (pinned && version == "") {
		return "", nil, configError(Replicate, "model %q: want owner/name or owner/name:version", req.Model)
	}
	if pinned {
		return p.base + "/v1/predictions", map[string]any{"version": version, "input": input}, nil
	}
	return p.base + "/v1/models/" + name + "/predictions", map[string]any{"input": input}, nil
}

// replicatePrompt flattens the conversation into the one prompt string Replicate's language
// models take: a lone user message as it is, a longer conversation as a transcript.
func replicatePrompt(msgs []Message) (string, error) {
	if len(msgs) == 1 && msgs[0].Role == User {
		return msgs[0].Text, nil
	}
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == Tool || len(m.ToolCalls) > 0 {
			return "", &Error{Code: CodeConfig, Provider: Replicate, Message: "Replicate models cannot call tools"}
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if m.Role == Assistant {
			b.WriteString("Assistant: ")
		} else {
			b.WriteString("User: ")
		}
		b.WriteString(m.Text)
	}
	b.WriteString("\n\nAssistant:")
	return b.String(), nil
}

func (p *replicateProvider) response(pred replicatePrediction) (Response, error) {
	switch pred.Status {
	case "succeeded":
	case "failed", "canceled", "aborted":
		msg := "prediction " + pred.Status
		var s string
		if json.Unmarshal(pred.Error, &s) == nil && s != "" {
			msg += ": " + s
		}
		return Response{}, &Error{Code: CodeError, Provider: Replicate, Message: msg}
	default:
		return Response{}, badResponse(Replicate, errorString("prediction status "+pred.Status))
	}
	// Language models stream tokens, so output is a list of strings; some return one string.
	var text string
	var parts []string
	switch {
	case json.Unmarshal(pred.Output, &parts) == nil:
		text = strings.Join(parts, "")
	case json.Unmarshal(pred.Output, &text) == nil:
	default:
		return Response{}, badResponse(Replicate, errorString("output is neither text nor a list of text"))
	}
	resp := Response{
		Text:       text,
		Model:      pred.Model,
		Usage:      Usage{InputTokens: pred.Metrics.InputTokenCount, OutputTokens: pred.Metrics.OutputTokenCount},
		StopReason: StopEnd,
		NativeStop: pred.Status,
		Message:    Message{Role: Assistant, Text: text},
	}
	return resp, nil
}
