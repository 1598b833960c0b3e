package model

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// Messages API responses in the shape of Anthropic's API reference.
const anthropicText = `{
  "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
  "type": "message",
  "role": "assistant",
  "content": [{"type": "text", "text": "Hello! How can I help?"}],
  "model": "claude-sonnet-4-5-20250929",
  "stop_reason": "end_turn",
  "stop_sequence": null,
  "usage": {"input_tokens": 12, "output_tokens": 8, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "service_tier": "standard"}
}`

const anthropicToolUse = `{
  "id": "msg_01Aq9w938a90dw8q",
  "type": "message",
  "role": "assistant",
  "content": [
    {"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
    {"type": "text", "text": "I'll check the weather."},
    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "San Francisco, CA"}}
  ],
  "model": "claude-sonnet-4-5-20250929",
  "stop_reason": "tool_use",
  "stop_sequence": null,
  "usage": {"input_tokens": 472, "output_tokens": 91}
}`

func openAnthropic(t *testing.T, url string, cfg Config) Provider {
	t.Helper()
	cfg.Env = map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": url}
	p, err := New(Anthropic, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnthropicRequestAndResponse(t *testing.T) {
	f := newFake(t, reply{body: anthropicText})
	resp, err := openAnthropic(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{
		Model:       "claude-sonnet-4-5",
		System:      "You are terse.",
		Messages:    []Message{{Role: User, Text: "Say hello"}},
		Temperature: ptr(0.0),
		MaxTokens:   300,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.only()
	if r.method != "POST" || r.path != "/v1/messages" {
		t.Errorf("request = %s %s", r.method, r.path)
	}
	if got := r.header.Get("Authorization"); got != "Bearer sk-ant-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := r.header.Get("Anthropic-Version"); got == "" {
		t.Error("no anthropic-version header")
	}
	if got := r.header.Get("X-Stainless-Retry-Count"); got != "" && got != "0" {
		t.Errorf("SDK retry count header = %q", got)
	}
	// System is a top-level field; the temperature is not sent (the API refuses it).
	assertJSON(t, r.body, `{
		"model": "claude-sonnet-4-5",
		"max_tokens": 300,
		"system": [{"type": "text", "text": "You are terse."}],
		"messages": [{"role": "user", "content": [{"type": "text", "text": "Say hello"}]}]
	}`)
	if resp.Text != "Hello! How can I help?" || resp.StopReason != StopEnd || resp.NativeStop != "end_turn" {
		t.Errorf("response = %+v", resp)
	}
	if resp.Usage != (Usage{12, 8}) || resp.Model != "claude-sonnet-4-5-20250929" {
		t.Errorf("usage %+v model %q", resp.Usage, resp.Model)
	}
	if want := DefaultPrices()["anthropic/claude-sonnet-4-5"].Cost(resp.Usage); resp.Cost != want || want == 0 || resp.Unpriced {
		t.Errorf("cost = %v, want %v", resp.Cost, want)
	}
}

func TestAnthropicDefaultMaxTokens(t *testing.T) {
	f := newFake(t, reply{body: anthropicText})
	_, err := openAnthropic(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(),
		Request{Model: "claude-haiku-4-5", Messages: []Message{{Role: User, Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		MaxTokens int `json:"max_tokens"`
	}
	json.Unmarshal(f.only().body, &sent)
	if sent.MaxTokens != DefaultAnthropicMaxTokens {
		t.Errorf("max_tokens = %d, want %d", sent.MaxTokens, DefaultAnthropicMaxTokens)
	}
}

func TestAnthropicTools(t *testing.T) {
	f := newFake(t, reply{body: anthropicToolUse}, reply{body: anthropicText})
	p := openAnthropic(t, f.srv.URL, testConfig(nil, &sleeper{}))
	tools := []ToolDef{{Name: "get_weather", Description: "Get the weather",
		Params: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"],"additionalProperties":false}`)}}
	first, err := p.Complete(context.Background(), Request{
		Model: "claude-sonnet-4-5", MaxTokens: 1024, Tools: tools,
		Messages: []Message{{Role: User, Text: "Weather in SF?"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.requests()[0].body, `{
		"model": "claude-sonnet-4-5",
		"max_tokens": 1024,
		"messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]}],
		"tools": [{"name": "get_weather", "description": "Get the weather",
			"input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"], "additionalProperties": false}}],
		"tool_choice": {"type": "auto"}
	}`)
	wantCalls := []ToolCall{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Args: json.RawMessage(`{"location": "San Francisco, CA"}`)}}
	if !reflect.DeepEqual(first.ToolCalls, wantCalls) || first.StopReason != StopToolCalls || first.Text != "I'll check the weather." {
		t.Fatalf("first answer = %+v", first)
	}
	if first.Message.Native == nil || first.Message.Native.Provider != Anthropic {
		t.Fatalf("no native message: %+v", first.Message)
	}

	// The next turn sends the assistant message back as it came (thinking signature included),
	// then the tool result and a note in one user turn.
	_, err = p.Complete(context.Background(), Request{
		Model: "claude-sonnet-4-5", MaxTokens: 1024, Tools: tools, ToolChoice: ToolNone,
		Messages: []Message{
			{Role: User, Text: "Weather in SF?"},
			first.Message,
			{Role: Tool, ToolResults: []ToolResult{{CallID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Content: "15 degrees", IsError: false}}},
			{Role: User, Text: "Answer now."},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.requests()[1].body, `{
		"model": "claude-sonnet-4-5",
		"max_tokens": 1024,
		"messages": [
			{"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]},
			{"role": "assistant", "content": [
				{"type": "thinking", "thinking": "The user wants the weather.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
				{"type": "text", "text": "I'll check the weather."},
				{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather", "input": {"location": "San Francisco, CA"}}
			]},
			{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": [{"type": "text", "text": "15 degrees"}], "is_error": false},
				{"type": "text", "text": "Answer now."}
			]}
		],
		"tools": [{"name": "get_weather", "description": "Get the weather",
			"input_schema": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"], "additionalProperties": false}}],
		"tool_choice": {"type": "none"}
	}`)
}

// Without a native form (a conversation rebuilt from a run record, say), the adapter builds
// tool_use blocks from Text and ToolCalls.
func TestAnthropicRebuiltAssistant(t *testing.T) {
	f := newFake(t, reply{body: anthropicText})
	_, err := openAnthropic(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{
		Model: "claude-sonnet-4-5", MaxTokens: 10,
		Messages: []Message{
			{Role: User, Text: "go"},
			{Role: Assistant, Text: "Listing.", ToolCalls: []ToolCall{{ID: "toolu_1", Name: "Files__list", Args: json.RawMessage(`{"dir":"."}`)}}},
			{Role: Tool, ToolResults: []ToolResult{{CallID: "toolu_1", Name: "Files__list", Content: "denied", IsError: true}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.only().body, `{"max_tokens": 10, "model": "claude-sonnet-4-5", "messages": [
		{"role": "user", "content": [{"type": "text", "text": "go"}]},
		{"role": "assistant", "content": [{"type": "text", "text": "Listing."},
			{"type": "tool_use", "id": "toolu_1", "name": "Files__list", "input": {"dir": "."}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true,
			"content": [{"type": "text", "text": "denied"}]}]}
	]}`)
}

func TestAnthropicNoKey(t *testing.T) {
	if _, err := New(Anthropic, Config{Env: map[string]string{"OPENAI_API_KEY": "x"}}); errCode(err) != CodeConfig {
		t.Fatalf("err = %v, want %s", err, CodeConfig)
	}
}

func TestAnthropicFailures(t *testing.T) {
	testFailures(t, func(url string, cfg Config) Provider { return openAnthropic(t, url, cfg) }, "claude-sonnet-4-5", anthropicText)
}
