package model

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Prediction objects in the shape of Replicate's HTTP API reference.
const replicateSucceeded = `{
  "id": "gm3qorzdhgbfurvjtvhg6dckhu",
  "model": "meta/meta-llama-3-8b-instruct",
  "version": "dp-e3c6b4ea0b1d4f9c8f3d2b1a",
  "input": {"prompt": "Say hello"},
  "logs": "",
  "output": ["Hello", "!", " How", " can", " I", " help", "?"],
  "data_removed": false,
  "error": null,
  "status": "succeeded",
  "created_at": "2024-04-18T21:26:38.366Z",
  "started_at": "2024-04-18T21:26:38.380Z",
  "completed_at": "2024-04-18T21:26:39.102Z",
  "urls": {
    "cancel": "https://api.replicate.com/v1/predictions/gm3qorzdhgbfurvjtvhg6dckhu/cancel",
    "get": "https://api.replicate.com/v1/predictions/gm3qorzdhgbfurvjtvhg6dckhu",
    "stream": "https://streaming-api.svc.us.c.replicate.net/v1/streams/abc"
  },
  "metrics": {"predict_time": 0.71, "total_time": 0.73, "input_token_count": 12, "output_token_count": 7, "tokens_per_second": 42.3, "time_to_first_token": 0.12}
}`

func openReplicate(t *testing.T, url string, cfg Config) Provider {
	t.Helper()
	cfg.Env = map[string]string{"REPLICATE_API_TOKEN": "r8_test", "REPLICATE_BASE_URL": url}
	p, err := New(Replicate, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplicateRequestAndResponse(t *testing.T) {
	f := newFake(t, reply{status: 201, body: replicateSucceeded})
	resp, err := openReplicate(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{
		Model: "meta/meta-llama-3-8b-instruct", System: "You are terse.",
		Messages: []Message{{Role: User, Text: "Say hello"}}, Temperature: ptr(0.2), MaxTokens: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := f.only()
	if r.method != "POST" || r.path != "/v1/models/meta/meta-llama-3-8b-instruct/predictions" {
		t.Errorf("request = %s %s", r.method, r.path)
	}
	if r.header.Get("Authorization") != "Bearer r8_test" || r.header.Get("Prefer") != "wait" {
		t.Errorf("headers = %v", r.header)
	}
	assertJSON(t, r.body, `{"input": {"prompt": "Say hello", "system_prompt": "You are terse.", "max_tokens": 64, "temperature": 0.2}}`)
	if resp.Text != "Hello! How can I help?" || resp.Usage != (Usage{12, 7}) || resp.StopReason != StopEnd {
		t.Errorf("response = %+v", resp)
	}
	if want := DefaultPrices()["replicate/meta/meta-llama-3-8b-instruct"].Cost(resp.Usage); resp.Cost != want || want == 0 {
		t.Errorf("cost = %v, want %v", resp.Cost, want)
	}
}

// A prediction still running when the synchronous wait ends is polled until it finishes.
func TestReplicatePollsAndPinsVersion(t *testing.T) {
	var f *fake
	running := `{"id": "p1", "model": "meta/meta-llama-3-8b-instruct", "status": "processing", "output": null, "urls": {"get": "URL/v1/predictions/p1"}}`
	f = newFake(t, reply{body: running}, reply{body: strings.Replace(running, "processing", "starting", 1)}, reply{body: replicateSucceeded})
	f.replies[0].body = strings.ReplaceAll(running, "URL", f.srv.URL)
	f.replies[1].body = strings.ReplaceAll(f.replies[1].body, "URL", f.srv.URL)
	s := &sleeper{}
	resp, err := openReplicate(t, f.srv.URL, testConfig(nil, s)).Complete(context.Background(), Request{
		Model:    "meta/meta-llama-3-8b-instruct:5a6809ca6288247d06daf6365557e5e429063f32a21146b2a807c682652136b8",
		Messages: []Message{{Role: User, Text: "Say hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if len(reqs) != 3 || reqs[0].path != "/v1/predictions" || reqs[1].method != "GET" || reqs[2].path != "/v1/predictions/p1" {
		t.Fatalf("requests = %+v", reqs)
	}
	assertJSON(t, reqs[0].body, `{"version": "5a6809ca6288247d06daf6365557e5e429063f32a21146b2a807c682652136b8", "input": {"prompt": "Say hello"}}`)
	if want := []time.Duration{replicatePoll, replicatePoll}; !reflect.DeepEqual(s.got(), want) {
		t.Errorf("waits = %v", s.got())
	}
	if resp.Text != "Hello! How can I help?" || resp.Attempts != 1 {
		t.Errorf("response = %+v", resp)
	}
	// The price is found by the model the prediction names, not the pinned reference.
	if resp.Cost == 0 {
		t.Error("no cost for a pinned version")
	}
}

func TestReplicateConversationPrompt(t *testing.T) {
	f := newFake(t, reply{body: replicateSucceeded})
	_, err := openReplicate(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{
		Model: "meta/meta-llama-3-8b-instruct",
		Messages: []Message{{Role: User, Text: "Name a colour."}, {Role: Assistant, Text: "Blue."},
			{Role: User, Text: "Rejected: one word, lowercase. Try again."}}})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, f.only().body, `{"input": {"prompt": "User: Name a colour.\n\nAssistant: Blue.\n\nUser: Rejected: one word, lowercase. Try again.\n\nAssistant:"}}`)
}

func TestReplicateRefusesTools(t *testing.T) {
	f := newFake(t, reply{body: replicateSucceeded})
	p := openReplicate(t, f.srv.URL, testConfig(nil, &sleeper{}))
	for _, req := range []Request{
		{Model: "meta/meta-llama-3-8b-instruct", Messages: []Message{{Role: User, Text: "x"}}, Tools: []ToolDef{{Name: "Files__read"}}},
		{Model: "meta/meta-llama-3-8b-instruct", Messages: []Message{{Role: User, Text: "x"},
			{Role: Assistant, ToolCalls: []ToolCall{{ID: "1", Name: "Files__read"}}}}},
	} {
		_, err := p.Complete(context.Background(), req)
		var me *Error
		if !errors.As(err, &me) || me.Code != CodeConfig || me.Retryable {
			t.Errorf("err = %v, want %s", err, CodeConfig)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestReplicateFailedPrediction(t *testing.T) {
	f := newFake(t, reply{status: 201, body: `{"id": "p", "status": "failed", "error": "CUDA out of memory", "output": null}`})
	_, err := openReplicate(t, f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(),
		Request{Model: "meta/meta-llama-3-8b-instruct", Messages: []Message{{Role: User, Text: "x"}}})
	var me *Error
	if !errors.As(err, &me) || me.Code != CodeError || me.Message != "prediction failed: CUDA out of memory" {
		t.Fatalf("err = %v", err)
	}
}

func TestReplicateBadModel(t *testing.T) {
	p := openReplicate(t, "http://127.0.0.1:1", testConfig(nil, &sleeper{}))
	for _, m := range []string{"llama", "a/b/c", "meta/x:"} {
		if _, err := p.Complete(context.Background(), Request{Model: m, Messages: []Message{{Role: User, Text: "x"}}}); errCode(err) != CodeConfig {
			t.Errorf("model %q: err = %v, want %s", m, err, CodeConfig)
		}
	}
	if _, err := New(Replicate, Config{}); errCode(err) != CodeConfig {
		t.Errorf("no token: err = %v", err)
	}
}

func TestReplicateFailures(t *testing.T) {
	testFailures(t, func(url string, cfg Config) Provider { return openReplicate(t, url, cfg) }, "meta/meta-llama-3-8b-instruct", replicateSucceeded)
}
