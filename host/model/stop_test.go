package model

import (
	"context"
	"strings"
	"testing"
)

// Each provider's own stop words map to the same StopReason.
func TestStopReasons(t *testing.T) {
	tests := []struct {
		provider, body, native string
		want                   StopReason
	}{
		{OpenAI, strings.Replace(openAIText, `"finish_reason": "stop"`, `"finish_reason": "length"`, 1), "length", StopMaxTokens},
		{OpenAI, strings.Replace(openAIText, `"finish_reason": "stop"`, `"finish_reason": "content_filter"`, 1), "content_filter", StopFiltered},
		{Anthropic, strings.Replace(anthropicText, `"end_turn"`, `"max_tokens"`, 1), "max_tokens", StopMaxTokens},
		{Anthropic, strings.Replace(anthropicText, `"end_turn"`, `"refusal"`, 1), "refusal", StopFiltered},
		{Anthropic, strings.Replace(anthropicText, `"end_turn"`, `"pause_turn"`, 1), "pause_turn", StopOther},
		{Gemini, strings.Replace(geminiText, `"STOP"`, `"MAX_TOKENS"`, 1), "MAX_TOKENS", StopMaxTokens},
		{Gemini, strings.Replace(geminiText, `"STOP"`, `"SAFETY"`, 1), "SAFETY", StopFiltered},
		{Ollama, strings.Replace(ollamaText, `"done_reason": "stop"`, `"done_reason": "length"`, 1), "length", StopMaxTokens},
	}
	open := map[string]func(t *testing.T, url string, cfg Config) Provider{
		OpenAI:    func(t *testing.T, url string, cfg Config) Provider { return openOpenAI(t, OpenAI, url, cfg) },
		Anthropic: openAnthropic, Gemini: openGemini, Ollama: openOllama,
	}
	for _, tt := range tests {
		f := newFake(t, reply{body: tt.body})
		resp, err := open[tt.provider](t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(),
			Request{Model: "m", Messages: []Message{{Role: User, Text: "x"}}})
		if err != nil {
			t.Errorf("%s %s: %v", tt.provider, tt.native, err)
			continue
		}
		if resp.StopReason != tt.want || resp.NativeStop != tt.native {
			t.Errorf("%s: stop = %s (%s), want %s (%s)", tt.provider, resp.StopReason, resp.NativeStop, tt.want, tt.native)
		}
	}
}
