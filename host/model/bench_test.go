package model

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkComplete measures an adapter's own cost (building the request, the SDK, recording,
// decoding, pricing) over a loopback fake; BenchmarkFloor is the same HTTP exchange with
// net/http alone, the floor to compare it with.
func BenchmarkComplete(b *testing.B) {
	bodies := map[string]string{OpenAI: openAIText, Anthropic: anthropicText, Gemini: geminiText, Ollama: ollamaText}
	envs := map[string]func(url string) map[string]string{
		OpenAI: func(u string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": u + "/v1"}
		},
		Anthropic: func(u string) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": u}
		},
		Gemini: func(u string) map[string]string {
			return map[string]string{"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": u}
		},
		Ollama: func(u string) map[string]string { return map[string]string{"OLLAMA_HOST": u} },
	}
	for _, name := range []string{OpenAI, Anthropic, Gemini, Ollama} {
		b.Run(name, func(b *testing.B) {
			body := bodies[name]
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			}))
			defer srv.Close()
			p, err := New(name, Config{Env: envs[name](srv.URL)})
			if err != nil {
				b.Fatal(err)
			}
			req := Request{Model: "m", System: "You are terse.", Messages: []Message{{Role: User, Text: "Say hello"}}, MaxTokens: 100}
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.Complete(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFloor(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, openAIText)
	}))
	defer srv.Close()
	payload := []byte(`{"model":"m","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello"}]}`)
	for b.Loop() {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(payload))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
