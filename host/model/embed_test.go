package model

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
)

// OpenAI's /embeddings answer, in the shape of its API reference (data out of order: the
// index says where each belongs).
const openAIEmbeddings = `{
  "object": "list",
  "data": [
    {"object": "embedding", "index": 1, "embedding": [0.5, -0.25, 0]},
    {"object": "embedding", "index": 0, "embedding": [1, 0, 0.125]}
  ],
  "model": "text-embedding-3-small",
  "usage": {"prompt_tokens": 8, "total_tokens": 8}
}`

func TestOpenAIEmbed(t *testing.T) {
	f := newFake(t, reply{body: openAIEmbeddings})
	cfg := testConfig(map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f.srv.URL + "/v1"}, &sleeper{})
	e, id, err := OpenEmbedder("openai/text-embedding-3-small", cfg)
	if err != nil || id != "text-embedding-3-small" {
		t.Fatal(id, err)
	}
	resp, err := e.Embed(context.Background(), EmbedRequest{Model: id, Inputs: []string{"first", "second"}, Dimensions: 3})
	if err != nil {
		t.Fatal(err)
	}
	req := f.only()
	if req.path != "/v1/embeddings" || req.header.Get("Authorization") != "Bearer sk-test" {
		t.Errorf("request %s with %q", req.path, req.header.Get("Authorization"))
	}
	assertJSON(t, req.body, `{"input": ["first", "second"], "model": "text-embedding-3-small", "encoding_format": "float", "dimensions": 3}`)
	if len(resp.Vectors) != 2 || resp.Vectors[0][2] != 0.125 || resp.Vectors[1][0] != 0.5 {
		t.Errorf("vectors %v", resp.Vectors)
	}
	if resp.Usage.InputTokens != 8 || resp.Attempts != 1 {
		t.Errorf("usage %+v, attempts %d", resp.Usage, resp.Attempts)
	}
	// $0.02 per million tokens.
	if want := 8 * 0.02 / 1e6; math.Abs(resp.Cost-want) > 1e-15 {
		t.Errorf("cost %v, want %v", resp.Cost, want)
	}
}

func TestEmbedRetriesAsCompleteDoes(t *testing.T) {
	f := newFake(t, reply{status: 429, header: map[string]string{"Retry-After": "2"}, body: `{"error": {"message": "slow down"}}`},
		reply{status: 503, body: `{"error": {"message": "busy"}}`}, reply{body: openAIEmbeddings})
	s := &sleeper{}
	cfg := testConfig(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": f.srv.URL + "/v1"}, s)
	e, _ := NewEmbedder(OpenAI, cfg)
	resp, err := e.Embed(context.Background(), EmbedRequest{Model: "text-embedding-3-small", Inputs: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 3 || len(f.requests()) != 3 {
		t.Errorf("attempts %d, requests %d", resp.Attempts, len(f.requests()))
	}
	if w := s.got(); len(w) != 2 || w[0].Seconds() != 2 {
		t.Errorf("waits %v: want the Retry-After first", w)
	}
}

func TestEmbedRefusesBadAnswers(t *testing.T) {
	for name, body := range map[string]string{
		"too few vectors":  `{"data": [{"index": 0, "embedding": [1, 2]}], "usage": {"prompt_tokens": 1}}`,
		"ragged":           `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}], "usage": {}}`,
		"empty vector":     `{"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": []}], "usage": {}}`,
		"index twice":      `{"data": [{"index": 0, "embedding": [1]}, {"index": 0, "embedding": [2]}], "usage": {}}`,
		"index out of set": `{"data": [{"index": 0, "embedding": [1]}, {"index": 7, "embedding": [2]}], "usage": {}}`,
		"not json":         `<html>`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, reply{body: body})
			e, _ := NewEmbedder(OpenAI, testConfig(map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": f.srv.URL}, &sleeper{}))
			_, err := e.Embed(context.Background(), EmbedRequest{Model: "m", Inputs: []string{"a", "b"}})
			if errcode.Code(err) != CodeBadResponse {
				t.Fatalf("err = %v (%s), want %s", err, errcode.Code(err), CodeBadResponse)
			}
			if len(f.requests()) != 1 {
				t.Errorf("a bad answer was retried: %d requests", len(f.requests()))
			}
		})
	}
}

func TestGeminiEmbed(t *testing.T) {
	f := newFake(t, reply{body: `{"embeddings": [{"values": [0.1, 0.2]}, {"values": [0.3, 0.4]}]}`})
	cfg := testConfig(map[string]string{"GEMINI_API_KEY": "gm", "GEMINI_BASE_URL": f.srv.URL}, &sleeper{})
	e, id, err := OpenEmbedder("google/gemini-embedding-001", cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.Embed(context.Background(), EmbedRequest{Model: id, Inputs: []string{"twelve chars", "x"}, Task: EmbedQuery, Dimensions: 2})
	if err != nil {
		t.Fatal(err)
	}
	req := f.only()
	if !strings.HasSuffix(req.path, "/models/gemini-embedding-001:batchEmbedContents") {
		t.Errorf("path %s", req.path)
	}
	body := string(req.body)
	for _, want := range []string{`"taskType":"RETRIEVAL_QUERY"`, `"outputDimensionality":2`, `"text":"twelve chars"`} {
		if !strings.Contains(body, want) {
			t.Errorf("request lacks %s: %s", want, body)
		}
	}
	if len(resp.Vectors) != 2 || resp.Vectors[1][1] != float32(0.4) {
		t.Errorf("vectors %v", resp.Vectors)
	}
	// No count in Gemini's answer: four bytes a token, one more per text.
	if resp.Usage.InputTokens != 3+1+1+1 || resp.Cost <= 0 {
		t.Errorf("usage %+v cost %v", resp.Usage, resp.Cost)
	}
}

func TestOllamaEmbed(t *testing.T) {
	f := newFake(t, reply{body: `{"model": "nomic-embed-text", "embeddings": [[0.5, 0.5, 0.5]], "prompt_eval_count": 4}`})
	e, err := NewEmbedder(Ollama, testConfig(map[string]string{"OLLAMA_HOST": f.srv.URL}, &sleeper{}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.Embed(context.Background(), EmbedRequest{Model: "nomic-embed-text", Inputs: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	req := f.only()
	if req.path != "/api/embed" {
		t.Errorf("path %s", req.path)
	}
	assertJSON(t, req.body, `{"model": "nomic-embed-text", "input": ["hello"]}`)
	if len(resp.Vectors) != 1 || resp.Usage.InputTokens != 4 || resp.Cost != 0 {
		t.Errorf("%+v", resp)
	}
}

func TestEmbedderConfig(t *testing.T) {
	for _, ref := range []string{"anthropic/claude-sonnet-4-5", "replicate/x/y"} {
		if _, _, err := OpenEmbedder(ref, Config{Env: map[string]string{"ANTHROPIC_API_KEY": "k", "REPLICATE_API_TOKEN": "k"}}); errcode.Code(err) != CodeConfig || !strings.Contains(err.Error(), "no embedding API") {
			t.Errorf("%s: %v", ref, err)
		}
	}
	if _, _, err := OpenEmbedder("openai/text-embedding-3-small", Config{}); errcode.Code(err) != CodeConfig || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	e, _ := NewEmbedder(Ollama, Config{})
	_, err := e.Embed(context.Background(), EmbedRequest{Model: "m", Inputs: make([]string, MaxEmbedInputs+1)})
	var me *Error
	if !errors.As(err, &me) || me.Code != CodeConfig {
		t.Errorf("too many inputs: %v", err)
	}
	if !SupportsEmbeddings("google") || SupportsEmbeddings("anthropic") {
		t.Error("SupportsEmbeddings")
	}
}
