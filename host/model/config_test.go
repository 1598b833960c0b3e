package model

import (
	"testing"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		ref, provider, model string
		code                 string
	}{
		{"openai/gpt-4o-mini", "openai", "gpt-4o-mini", ""},
		{"openrouter/qwen/qwen3-coder", "openrouter", "qwen/qwen3-coder", ""},
		{"ollama/llama3.1:8b", "ollama", "llama3.1:8b", ""},
		{"together/meta-llama/Llama-3.3-70B-Instruct-Turbo", "together", "meta-llama/Llama-3.3-70B-Instruct-Turbo", ""},
		{"anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", ""},
		{"google/gemini-2.5-flash", "gemini", "gemini-2.5-flash", ""},
		{"Gemini/gemini-2.5-flash", "gemini", "gemini-2.5-flash", ""},
		{"replicate/meta/meta-llama-3-8b-instruct", "replicate", "meta/meta-llama-3-8b-instruct", ""},
		{"gpt-4o", "", "", CodeConfig},
		{"openai/", "", "", CodeConfig},
		{"/gpt-4o", "", "", CodeConfig},
		{"mistral/large", "", "", CodeConfig},
	}
	for _, tt := range tests {
		p, m, err := Resolve(tt.ref)
		if tt.code != "" {
			if code := errCode(err); code != tt.code {
				t.Errorf("Resolve(%q) error code = %q (%v), want %q", tt.ref, code, err, tt.code)
			}
			continue
		}
		if err != nil || p != tt.provider || m != tt.model {
			t.Errorf("Resolve(%q) = %q, %q, %v; want %q, %q", tt.ref, p, m, err, tt.provider, tt.model)
		}
	}
}

func TestNewUnknownProvider(t *testing.T) {
	if _, err := New("mistral", Config{}); errCode(err) != CodeConfig {
		t.Fatalf("New(mistral) = %v, want %s", err, CodeConfig)
	}
}

func TestSupportsTools(t *testing.T) {
	for _, n := range Names() {
		if got, want := SupportsTools(n), n != Replicate; got != want {
			t.Errorf("SupportsTools(%s) = %v", n, got)
		}
	}
}

func errCode(err error) string {
	if c, ok := err.(interface{ ErrorCode() string }); ok {
		return c.ErrorCode()
	}
	return ""
}
