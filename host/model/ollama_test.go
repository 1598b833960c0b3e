package model

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// /api/chat answers in the shape of Ollama's API documentation.
const ollamaText = `{
  "model": "llama3.1:8b",
  "created_at": "2023-12-12T14:13:43.416799Z",
  "message": {"role": "assistant", "content": "Hello! How are you today?"},
  "done": true,
  "done_reason": "stop",
  "total_duration": 5191566416,
  "load_duration": 2154458,
  "prompt_eval_count": 26,
  "prompt_eval_duration": 383809000,
  "eval_count": 298,
  "eval_duration": 4799921000
}`

const ollamaToolCalls = `{
  "model": "llama3.1:8b",
  "created_at": "2024-07-22T20:33:28.123648Z",
  "message": {
    "role": "assistant",
    "content": "",
    "tool_calls": [
      {"function": {"name": "get_current_weather", "arguments": {"format": "celsius", "location": "Paris, FR"}}}
    ]
  },
  "done_reason": "stop",
  "done": true,
  "total_duration": 885095291,
  "prompt_eval_count": 122,
  "eval_count": 23
}`

func openOllama(t *testing.T, url string, cfg Config) Provider {
	t.Helper()
	cfg.Env = map[string]string{"OLLAMA_HOST": url}
	p, err := New(Ollama, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOllamaRequestAndResponse(t *testing.T) {
	f := newFake(t, reply{body: ollamaText})
	resp, err := openOllama(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{
		Model:       "llama3.1:8b",
		System:      "You are terse.",
		Messages:    []Message{{Role: User, Text: "Say hello"}},
		Temperature: ptr(0.0),
		MaxTokens:   128,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.only()
	if r.method != "POST" || r.path != "/api/chat" {
		t.Errorf("request = %s %s", r.method, r.path)
	}
	if got := r.header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none for a local server", got)
	}
	assertJSON(t, r.body, `{
		"model": "llama3.1:8b",
		"messages": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello"}],
		"stream": false,
		"options": {"temperature": 0, "num_predict": 128}
	}`)
	want := Response{Text: "Hello! How are you today?", Message: Message{Role: Assistant, Text: "Hello! How are you today?"},
		Usage: Usage{26, 298}, StopReason: StopEnd, NativeStop: "stop", Model: "llama3.1:8b", Attempts: 1}
	resp.Raw = nil
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}
}

func TestOllamaTools(t *testing.T) {
	f := newFake(t, reply{body: ollamaToolCalls}, reply{body: ollamaText})
	p := openOllama(t, f.srv.URL, testConfig(nil, &sleeper{}))
	tools := []ToolDef{{Name: "get_current_weather", Description: "Get the weather",
		Params: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"},"format":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","format"]}`)}}
	first, err := p.Complete(context.Background(), Request{Model: "llama3.1:8b", Tools: tools,
		Messages: []Message{{Role: User, Text: "Weather in Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []ToolCall{{ID: ollamaCallPrefix + "1", Name: "get_current_weather", Args: json.RawMessage(`{"format": "celsius", "location": "Paris, FR"}`)}}
	if !reflect.DeepEqual(first.ToolCalls, wantCalls) || first.StopReason != StopToolCalls {
		t.Fatalf("first = %+v", first)
	}
	if _, err := p.Complete(context.Background(), Request{Model: "llama3.1:8b", Tools: tools, Messages: []Message{
		{Role: User, Text: "Weather in Paris?"},
		first.Message,
		{Role: Tool, ToolResults: []ToolResult{{CallID: wantCalls[0].ID, Name: "get_current_weather", Content: "22 C"}}},
	}}); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.requests()[1].body, `{
		"model": "llama3.1:8b",
		"messages": [
			{"role": "user", "content": "Weather in Paris?"},
			{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {"index": 0, "name": "get_current_weather", "arguments": {"format": "celsius", "location": "Paris, FR"}}}]},
			{"role": "tool", "content": "22 C", "tool_name": "get_current_weather"}
		],
		"tools": [{"type": "function", "function": {"name": "get_current_weather", "description": "Get the weather",
			"parameters": {"type":"object","properties":{"location":{"type":"string"},"format":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location","format"]}}}],
		"stream": false
	}`)
}

// TestOllamaToolCallIDs: when the reply gives its calls ids, each result is sent back with
// its call's id (tool_call_id) beside tool_name, so two calls of one function in a turn are
// told apart; the calls keep their ids too.
func TestOllamaToolCallIDs(t *testing.T) {
	twoCalls := `{"model": "qwen3", "message": {"role": "assistant", "content": "", "tool_calls": [
		{"id": "call_a1", "function": {"index": 0, "name": "get_current_weather", "arguments": {"location": "Paris, FR"}}},
		{"id": "call_b2", "function": {"index": 1, "name": "get_current_weather", "arguments": {"location": "Oslo, NO"}}}
	]}, "done": true, "done_reason": "stop"}`
	f := newFake(t, reply{body: twoCalls}, reply{body: ollamaText})
	p := openOllama(t, f.srv.URL, testConfig(nil, &sleeper{}))
	first, err := p.Complete(context.Background(), Request{Model: "qwen3", Messages: []Message{{Role: User, Text: "Weather in Paris and Oslo?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.ToolCalls) != 2 || first.ToolCalls[0].ID != "call_a1" || first.ToolCalls[1].ID != "call_b2" {
		t.Fatalf("calls = %+v", first.ToolCalls)
	}
	if _, err := p.Complete(context.Background(), Request{Model: "qwen3", Messages: []Message{
		{Role: User, Text: "Weather in Paris and Oslo?"},
		first.Message,
		{Role: Tool, ToolResults: []ToolResult{
			{CallID: "call_a1", Name: "get_current_weather", Content: "22 C"},
			{CallID: "call_b2", Name: "get_current_weather", Content: "4 C"},
		}},
	}}); err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.requests()[1].body, `{
		"model": "qwen3",
		"messages": [
			{"role": "user", "content": "Weather in Paris and Oslo?"},
			{"role": "assistant", "content": "", "tool_calls": [
				{"id": "call_a1", "type": "function", "function": {"index": 0, "name": "get_current_weather", "arguments": {"location": "Paris, FR"}}},
				{"id": "call_b2", "type": "function", "function": {"index": 1, "name": "get_current_weather", "arguments": {"location": "Oslo, NO"}}}
			]},
			{"role": "tool", "content": "22 C", "tool_name": "get_current_weather", "tool_call_id": "call_a1"},
			{"role": "tool", "content": "4 C", "tool_name": "get_current_weather", "tool_call_id": "call_b2"}
		],
		"stream": false
	}`)
}

func TestOllamaHost(t *testing.T) {
	tests := []struct{ env, want string }{
		{"", "http://127.0.0.1:11434"},
		{"0.0.0.0", "http://0.0.0.0:11434"},
		{"example.com:8080", "http://example.com:8080"},
		{"https://ollama.example.com", "https://ollama.example.com"},
		{"http://[::1]:11434/", "http://[::1]:11434"},
	}
	for _, tt := range tests {
		got, err := ollamaBase(tt.env)
		if err != nil || got != tt.want {
			t.Errorf("ollamaBase(%q) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
	if _, err := New(Ollama, Config{Env: map[string]string{"OLLAMA_HOST": "http://"}}); errCode(err) != CodeConfig {
		t.Errorf("bad OLLAMA_HOST: err = %v", err)
	}
}

func TestOllamaAPIKey(t *testing.T) {
	f := newFake(t, reply{body: ollamaText})
	p, err := New(Ollama, Config{Env: map[string]string{"OLLAMA_HOST": f.srv.URL, "OLLAMA_API_KEY": "ok-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), Request{Model: "m", Messages: []Message{{Role: User, Text: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if got := f.only().header.Get("Authorization"); got != "Bearer ok-1" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestOllamaFailures(t *testing.T) {
	testFailures(t, func(url string, cfg Config) Provider { return openOllama(t, url, cfg) }, "llama3.1:8b", ollamaText)
	// Ollama's own error shape: {"error": "..."}.
	f := newFake(t, reply{status: 404, body: `{"error":"model \"nope\" not found, try pulling it first"}`})
	_, err := openOllama(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(),
		Request{Model: "nope", Messages: []Message{{Role: User, Text: "x"}}})
	if me, ok := err.(*Error); !ok || me.Code != CodeError || me.Message != `HTTP 404: model "nope" not found, try pulling it first` {
		t.Errorf("err = %v", err)
	}
}
