package model

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// generateContent responses in the shape of Google's API reference.
const geminiText = `{
  "candidates": [
    {
      "content": {"parts": [{"text": "Hello! How can I "}, {"text": "help you today?"}], "role": "model"},
      "finishReason": "STOP",
      "avgLogprobs": -0.0123
    }
  ],
  "usageMetadata": {
    "promptTokenCount": 5,
    "candidatesTokenCount": 9,
    "totalTokenCount": 34,
    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 5}],
    "thoughtsTokenCount": 20
  },
  "modelVersion": "gemini-2.5-flash",
  "responseId": "mN3aaPnSBbmP2tYP2ffk8QY"
}`

const geminiFunctionCall = `{
  "candidates": [
    {
      "content": {
        "parts": [
          {"text": "Let me check.", "thought": true},
          {"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}, "thoughtSignature": "CiQBcsjafEWHTpFhBH1h5g=="},
          {"functionCall": {"name": "get_time", "args": {"zone": "Europe/Paris"}}}
        ],
        "role": "model"
      },
      "finishReason": "STOP",
      "index": 0
    }
  ],
  "usageMetadata": {"promptTokenCount": 70, "candidatesTokenCount": 30, "totalTokenCount": 100},
  "modelVersion": "gemini-2.5-flash"
}`

func openGemini(t *testing.T, url string, cfg Config) Provider {
	t.Helper()
	cfg.Env = map[string]string{"GEMINI_API_KEY": "gm-test", "GEMINI_BASE_URL": url}
	p, err := New(Gemini, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGeminiRequestAndResponse(t *testing.T) {
	f := newFake(t, reply{body: geminiText})
	resp, err := openGemini(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{
		Model:       "gemini-2.5-flash",
		System:      "You are terse.",
		Messages:    []Message{{Role: User, Text: "Say hello"}},
		Temperature: ptr(0.0),
		MaxTokens:   200,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.only()
	if r.method != "POST" || r.path != "/v1beta/models/gemini-2.5-flash:generateContent" {
		t.Errorf("request = %s %s", r.method, r.path)
	}
	if got := r.header.Get("X-Goog-Api-Key"); got != "gm-test" {
		t.Errorf("x-goog-api-key = %q", got)
	}
	assertJSON(t, r.body, `{
		"contents": [{"role": "user", "parts": [{"text": "Say hello"}]}],
		"systemInstruction": {"role": "user", "parts": [{"text": "You are terse."}]},
		"generationConfig": {"temperature": 0, "maxOutputTokens": 200}
	}`)
	if resp.Text != "Hello! How can I help you today?" || resp.StopReason != StopEnd || resp.NativeStop != "STOP" {
		t.Errorf("response = %+v", resp)
	}
	// Thinking tokens count as output.
	if resp.Usage != (Usage{InputTokens: 5, OutputTokens: 29}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if want := DefaultPrices()["gemini/gemini-2.5-flash"].Cost(resp.Usage); resp.Cost != want || want == 0 {
		t.Errorf("cost = %v, want %v", resp.Cost, want)
	}
}

func TestGeminiFunctionCalls(t *testing.T) {
	f := newFake(t, reply{body: geminiFunctionCall}, reply{body: geminiText})
	p := openGemini(t, f.srv.URL, testConfig(nil, &sleeper{}))
	tools := []ToolDef{{Name: "get_weather", Description: "Weather for a city",
		Params: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)}, {Name: "get_time"}}
	first, err := p.Complete(context.Background(), Request{Model: "gemini-2.5-flash", Tools: tools,
		Messages: []Message{{Role: User, Text: "Weather and time in Paris?"}}})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.requests()[0].body, `{
		"contents": [{"role": "user", "parts": [{"text": "Weather and time in Paris?"}]}],
		"generationConfig": {},
		"tools": [{"functionDeclarations": [
			{"name": "get_weather", "description": "Weather for a city",
				"parametersJsonSchema": {"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}},
			{"name": "get_time", "parametersJsonSchema": {"type":"object","properties":{}}}
		]}],
		"toolConfig": {"functionCallingConfig": {"mode": "AUTO"}}
	}`)
	wantCalls := []ToolCall{
		{ID: geminiCallPrefix + "1", Name: "get_weather", Args: json.RawMessage(`{"location":"Paris"}`)},
		{ID: geminiCallPrefix + "2", Name: "get_time", Args: json.RawMessage(`{"zone":"Europe/Paris"}`)},
	}
	if !reflect.DeepEqual(first.ToolCalls, wantCalls) || first.StopReason != StopToolCalls || first.Text != "" {
		t.Fatalf("first = %+v", first)
	}

	_, err = p.Complete(context.Background(), Request{Model: "gemini-2.5-flash", Tools: tools, ToolChoice: ToolNone,
		Messages: []Message{
			{Role: User, Text: "Weather and time in Paris?"},
			first.Message,
			{Role: Tool, ToolResults: []ToolResult{
				{CallID: wantCalls[0].ID, Name: "get_weather", Content: "12 C"},
				{CallID: wantCalls[1].ID, Name: "get_time", Content: "no such zone", IsError: true},
			}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	// The model's parts go back unchanged, thought signature and all.
	assertJSON(t, f.requests()[1].body, `{
		"contents": [
			{"role": "user", "parts": [{"text": "Weather and time in Paris?"}]},
			{"role": "model", "parts": [
				{"text": "Let me check.", "thought": true},
				{"functionCall": {"name": "get_weather", "args": {"location": "Paris"}}, "thoughtSignature": "CiQBcsjafEWHTpFhBH1h5g=="},
				{"functionCall": {"name": "get_time", "args": {"zone": "Europe/Paris"}}}
			]},
			{"role": "user", "parts": [
				{"functionResponse": {"name": "get_weather", "response": {"output": "12 C"}}},
				{"functionResponse": {"name": "get_time", "response": {"error": "no such zone"}}}
			]}
		],
		"generationConfig": {},
		"tools": [{"functionDeclarations": [
			{"name": "get_weather", "description": "Weather for a city",
				"parametersJsonSchema": {"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}},
			{"name": "get_time", "parametersJsonSchema": {"type":"object","properties":{}}}
		]}],
		"toolConfig": {"functionCallingConfig": {"mode": "NONE"}}
	}`)
}

func TestGeminiBlockedPrompt(t *testing.T) {
	f := newFake(t, reply{body: `{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7}}`})
	resp, err := openGemini(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(),
		Request{Model: "gemini-2.5-flash", Messages: []Message{{Role: User, Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != StopFiltered || resp.NativeStop != "SAFETY" || resp.Usage.InputTokens != 7 {
		t.Errorf("response = %+v", resp)
	}
}

func TestGeminiKeys(t *testing.T) {
	if _, err := New("google", Config{}); errCode(err) != CodeConfig {
		t.Errorf("New without a key = %v, want %s", err, CodeConfig)
	}
	f := newFake(t, reply{body: geminiText})
	p, err := New(Gemini, Config{Env: map[string]string{"GOOGLE_API_KEY": "g1", "GEMINI_API_KEY": "g2", "GEMINI_BASE_URL": f.srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(context.Background(), Request{Model: "gemini-2.5-pro", Messages: []Message{{Role: User, Text: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if got := f.only().header.Get("X-Goog-Api-Key"); got != "g1" {
		t.Errorf("key sent = %q, want GOOGLE_API_KEY's", got)
	}
}

func TestGeminiFailures(t *testing.T) {
	testFailures(t, func(url string, cfg Config) Provider { return openGemini(t, url, cfg) }, "gemini-2.5-flash", geminiText)
}
