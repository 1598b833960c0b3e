package model

import (
	"context"
	"errors"
	"strings"
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

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{"google": Gemini, "Google": Gemini, "gemini": Gemini, "openai": OpenAI} {
		if got, ok := Canonical(in); !ok || got != want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := Canonical("mistral"); ok {
		t.Error("Canonical(mistral) is ok")
	}
	spell := Spellings()
	for _, want := range []string{"google", "gemini", "openai", "replicate"} {
		found := false
		for _, s := range spell {
			found = found || s == want
		}
		if !found {
			t.Errorf("Spellings() = %v lacks %s", spell, want)
		}
	}
	// Every spelling opens as the provider it stands for.
	for _, s := range spell {
		if _, _, err := Resolve(s + "/m"); err != nil {
			t.Errorf("Resolve(%s/m): %v", s, err)
		}
	}
}

func TestCanCallTools(t *testing.T) {
	p, err := New(Replicate, Config{Env: map[string]string{"REPLICATE_API_TOKEN": "r8_x"}})
	if err != nil {
		t.Fatal(err)
	}
	if CanCallTools(p) {
		t.Error("Replicate says it can call tools")
	}
	if !CanCallTools(ProviderFunc(func(context.Context, Request) (Response, error) { return Response{}, nil })) {
		t.Error("a provider without CanCallTools is taken as unable to call tools")
	}
}

// TestMissingKeyNamesItsVariable: a provider opened without its API key fails with
// MODEL_CONFIG and says which variable to set (Error.KeyEnv), for the CLI's hint.
func TestMissingKeyNamesItsVariable(t *testing.T) {
	for provider, env := range map[string]string{
		OpenAI: "OPENAI_API_KEY", OpenRouter: "OPENROUTER_API_KEY", Together: "TOGETHER_API_KEY",
		Anthropic: "ANTHROPIC_API_KEY", Gemini: "GEMINI_API_KEY", Replicate: "REPLICATE_API_TOKEN",
	} {
		_, err := New(provider, Config{Env: map[string]string{}})
		var me *Error
		if !errors.As(err, &me) || me.Code != CodeConfig || me.KeyEnv != env || !strings.Contains(me.Message, env+" ") {
			t.Errorf("%s without a key: %#v, want KeyEnv %s", provider, err, env)
		}
	}
	if _, err := New(Ollama, Config{Env: map[string]string{}}); err != nil {
		t.Errorf("a local Ollama needs no key: %v", err)
	}
}
