package model

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// A chat completion as OpenAI's API reference shows it.
const openAIText = `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Hello! How can I assist you today?",
        "refusal": null,
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 19,
    "completion_tokens": 10,
    "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default"
}`

const openAIToolCalls = `{
  "id": "chatcmpl-abc123",
  "object": "chat.completion",
  "created": 1699896916,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": null,
        "tool_calls": [
          {
            "id": "call_abc123",
            "type": "function",
            "function": {"name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}"}
          },
          {
            "id": "call_def456",
            "type": "function",
            "function": {"name": "Files__read", "arguments": "{\"path\": "}
          }
        ]
      },
      "logprobs": null,
      "finish_reason": "tool_calls"
    }
  ],
  "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
}`

func openOpenAI(t *testing.T, name, url string, cfg Config) Provider {
	t.Helper()
	keys := map[string][2]string{OpenAI: {"OPENAI_API_KEY", "OPENAI_BASE_URL"},
		OpenRouter: {"OPENROUTER_API_KEY", "OPENROUTER_BASE_URL"}, Together: {"TOGETHER_API_KEY", "TOGETHER_BASE_URL"}}[name]
	cfg.Env = map[string]string{keys[0]: "sk-test-" + name, keys[1]: url + "/v1/"}
	p, err := New(name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOpenAIRequestAndResponse(t *testing.T) {
	f := newFake(t, reply{body: openAIText})
	p := openOpenAI(t, OpenAI, f.srv.URL, testConfig(nil, &sleeper{}))
	resp, err := p.Complete(context.Background(), Request{
		Model:       "gpt-4o-mini",
		System:      "You are terse.",
		Messages:    []Message{{Role: User, Text: "Say hello"}},
		Temperature: ptr(0.7),
		MaxTokens:   256,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.only()
	if r.method != "POST" || r.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s", r.method, r.path)
	}
	if got := r.header.Get("Authorization"); got != "Bearer sk-test-openai" {
		t.Errorf("Authorization = %q", got)
	}
	assertJSON(t, r.body, `{
		"model": "gpt-4o-mini",
		"messages": [
			{"role": "system", "content": "You are terse."},
			{"role": "user", "content": "Say hello"}
		],
		"temperature": 0.7,
		"max_completion_tokens": 256,
		"stream": false
	}`)
	want := Response{
		Text:       "Hello! How can I assist you today?",
		Message:    Message{Role: Assistant, Text: "Hello! How can I assist you today?"},
		Usage:      Usage{InputTokens: 19, OutputTokens: 10},
		StopReason: StopEnd,
		NativeStop: "stop",
		Model:      "gpt-4o-mini-2024-07-18",
		Attempts:   1,
	}
	want.Cost = DefaultPrices()["openai/gpt-4o-mini"].Cost(want.Usage)
	if want.Cost == 0 {
		t.Fatal("price table has no gpt-4o-mini")
	}
	if string(resp.Raw) != openAIText {
		t.Errorf("Raw = %s, want the body as received", resp.Raw)
	}
	resp.Raw = nil
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}
}

func TestOpenAITools(t *testing.T) {
	f := newFake(t, reply{body: openAIToolCalls})
	p := openOpenAI(t, OpenAI, f.srv.URL, testConfig(nil, &sleeper{}))
	resp, err := p.Complete(context.Background(), Request{
		Model: "gpt-4o-mini",
		Messages: []Message{
			{Role: User, Text: "Weather in Boston?"},
			{Role: Assistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "Files__list", Args: json.RawMessage(`{"dir":"."}`)}}},
			{Role: Tool, ToolResults: []ToolResult{{CallID: "call_1", Name: "Files__list", Content: `["a.txt"]`}}},
		},
		Tools: []ToolDef{
			{Name: "get_current_weather", Description: "Get the weather", Params: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)},
			{Name: "Files__list"},
		},
		Temperature: ptr(0.0),
	})
	if err != nil {
		t.Fatal(err)
	}
	body := f.only().body
	// A zero temperature goes out as go-openai's smallest float32, which servers read as 0.
	var sent map[string]any
	json.Unmarshal(body, &sent)
	if temp, _ := sent["temperature"].(float64); temp <= 0 || temp > 2*math.SmallestNonzeroFloat32 {
		t.Errorf("temperature = %v, want the smallest float32", sent["temperature"])
	}
	delete(sent, "temperature")
	rest, _ := json.Marshal(sent)
	assertJSON(t, rest, `{
		"model": "gpt-4o-mini",
		"messages": [
			{"role": "user", "content": "Weather in Boston?"},
			{"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Files__list", "arguments": "{\"dir\":\".\"}"}}]},
			{"role": "tool", "content": "[\"a.txt\"]", "tool_call_id": "call_1"}
		],
		"tools": [
			{"type": "function", "function": {"name": "get_current_weather", "description": "Get the weather",
				"parameters": {"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}},
			{"type": "function", "function": {"name": "Files__list", "parameters": {"type":"object","properties":{}}}}
		],
		"tool_choice": "auto",
		"stream": false
	}`)
	wantCalls := []ToolCall{
		{ID: "call_abc123", Name: "get_current_weather", Args: json.RawMessage("{\n\"location\": \"Boston, MA\"\n}")},
		{ID: "call_def456", Name: "Files__read", Args: json.RawMessage(`"{\"path\": "`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, wantCalls) || resp.StopReason != StopToolCalls {
		t.Errorf("tool calls = %s %s, want %s", resp.ToolCalls, resp.StopReason, wantCalls)
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, wantCalls) {
		t.Errorf("Message.ToolCalls = %v", resp.Message.ToolCalls)
	}
	// Echoing the malformed call back sends the model's own text.
	if got := argsText(wantCalls[1].Args); got != `{"path": ` {
		t.Errorf("argsText = %q", got)
	}
}

func TestOpenAIToolChoiceNone(t *testing.T) {
	f := newFake(t, reply{body: openAIText})
	p := openOpenAI(t, OpenAI, f.srv.URL, testConfig(nil, &sleeper{}))
	_, err := p.Complete(context.Background(), Request{Model: "gpt-4o", Messages: []Message{{Role: User, Text: "x"}},
		Tools: []ToolDef{{Name: "T__m"}}, ToolChoice: ToolNone})
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		ToolChoice string `json:"tool_choice"`
	}
	json.Unmarshal(f.only().body, &sent)
	if sent.ToolChoice != "none" {
		t.Errorf("tool_choice = %q, want none", sent.ToolChoice)
	}
}

// OpenRouter and Together use the same client with their own key, base URL and max_tokens.
func TestOpenAICompatibleServices(t *testing.T) {
	for _, name := range []string{OpenRouter, Together} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, reply{body: openAIText})
			p := openOpenAI(t, name, f.srv.URL, testConfig(nil, &sleeper{}))
			model := map[string]string{OpenRouter: "qwen/qwen3-coder", Together: "meta-llama/Llama-3.3-70B-Instruct-Turbo"}[name]
			resp, err := p.Complete(context.Background(), Request{Model: model, System: "S",
				Messages: []Message{{Role: User, Text: "hi"}}, MaxTokens: 100, Temperature: ptr(1.0)})
			if err != nil {
				t.Fatal(err)
			}
			r := f.only()
			if r.path != "/v1/chat/completions" || r.header.Get("Authorization") != "Bearer sk-test-"+name {
				t.Errorf("request %s with Authorization %q", r.path, r.header.Get("Authorization"))
			}
			assertJSON(t, r.body, `{"model": "`+model+`", "messages": [{"role":"system","content":"S"},{"role":"user","content":"hi"}],
				"temperature": 1, "max_tokens": 100, "stream": false}`)
			if resp.Usage != (Usage{19, 10}) {
				t.Errorf("usage = %+v", resp.Usage)
			}
		})
	}
}

func TestOpenAIDefaultsAndKeys(t *testing.T) {
	if _, err := New(OpenAI, Config{}); errCode(err) != CodeConfig {
		t.Errorf("New without OPENAI_API_KEY = %v, want %s", err, CodeConfig)
	}
	p, err := New(Together, Config{Env: map[string]string{"TOGETHER_API_KEY": "k"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.(*openAIProvider).client; got == nil {
		t.Fatal("no client")
	}
}

func TestOpenAIEmptyChoices(t *testing.T) {
	f := newFake(t, reply{body: `{"id":"x","object":"chat.completion","choices":[],"usage":{}}`})
	_, err := openOpenAI(t, OpenAI, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(),
		Request{Model: "gpt-4o", Messages: []Message{{Role: User, Text: "x"}}})
	if errCode(err) != CodeBadResponse {
		t.Fatalf("err = %v, want %s", err, CodeBadResponse)
	}
}

func TestOpenAIFailures(t *testing.T) {
	testFailures(t, func(url string, cfg Config) Provider { return openOpenAI(t, OpenAI, url, cfg) }, "gpt-4o", openAIText)
}

// TestMaxTokensClamped: a reply cap above the model's output limit (a MaxSpend cap computed
// from a large budget, say) is sent as the limit, which is all the API accepts.
func TestMaxTokensClamped(t *testing.T) {
	f := newFake(t, reply{body: openAIText})
	p := openOpenAI(t, OpenAI, f.srv.URL, testConfig(nil, &sleeper{}))
	if _, err := p.Complete(context.Background(), Request{Model: "gpt-4o-mini", Messages: []Message{{Role: User, Text: "hi"}}, MaxTokens: 833326}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		MaxCompletionTokens int `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(f.only().body, &body); err != nil {
		t.Fatal(err)
	}
	if body.MaxCompletionTokens != 16384 {
		t.Errorf("max_completion_tokens = %d, want 16384 (gpt-4o-mini's limit)", body.MaxCompletionTokens)
	}
}
