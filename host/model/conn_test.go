package model

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Adapters reuse connections: the SDKs stop reading at the end of the JSON value, and the
// recorder drains the rest so the transport can keep the connection.
func TestConnectionReuse(t *testing.T) {
	bodies := map[string]string{OpenAI: openAIText + "\n", Anthropic: anthropicText + "\n", Gemini: geminiText + "\n", Ollama: ollamaText + "\n"}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			var conns atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			env := map[string]map[string]string{
				OpenAI:    {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": srv.URL + "/v1"},
				Anthropic: {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.URL},
				Gemini:    {"GEMINI_API_KEY": "k", "GEMINI_BASE_URL": srv.URL},
				Ollama:    {"OLLAMA_HOST": srv.URL},
			}[name]
			p, err := New(name, Config{Env: env, HTTPClient: &http.Client{Transport: &http.Transport{}}})
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if _, err := p.Complete(context.Background(), Request{Model: "m", Messages: []Message{{Role: User, Text: "x"}}}); err != nil {
					t.Fatal(err)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections for 5 calls, want 1", n)
			}
		})
	}
}
