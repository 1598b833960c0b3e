package model

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults used when a Config field is zero.
const (
	DefaultTimeout     = 120 * time.Second
	DefaultMaxAttempts = 3
	DefaultBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff  = 8 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After we wait for; a provider asking for more
	// gets its error returned at once, with RetryAfter set for the caller to judge.
	DefaultMaxRetryAfter = 60 * time.Second
	// DefaultAnthropicMaxTokens is sent to Anthropic, which requires a cap, when the request
	// has none.
	DefaultAnthropicMaxTokens = 4096
)

// Config is what every adapter is built from. The zero value works for tests that point base
// URLs at a fake server through Env.
type Config struct {
	// Env is the process environment as the CLI read it (API keys, base URLs); this package
	// never reads the real environment.
	Env map[string]string
	// HTTPClient sends the requests; nil means a new client with no overall timeout (each
	// attempt gets its own from Timeout).
	HTTPClient *http.Client
	// Timeout bounds each attempt when the request sets none; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the requests one Complete makes (first try included); zero means
	// DefaultMaxAttempts, 1 turns retries off.
	MaxAttempts int
	// Backoff is the wait before the first retry, doubled before each next one up to
	// MaxBackoff, unless the provider's Retry-After asks for longer. Zero means the defaults.
	Backoff, MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; zero means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Now reads the clock (for Retry-After dates); nil means time.Now.
	Now func() time.Time
	// Sleep waits between attempts; nil means a real timer. Tests pass one that records the
	// wait and returns at once. It must return ctx.Err() when ctx ends first.
	Sleep func(ctx context.Context, d time.Duration) error
	// Prices is the price table; nil means DefaultPrices().
	Prices Prices
	// Logger gets debug lines (retries, unknown prices); nil means none.
	Logger hclog.Logger
}

func (c Config) env(key string) string { return c.Env[key] }

func (c Config) logger() hclog.Logger {
	if c.Logger == nil {
		return hclog.NewNullLogger()
	}
	return c.Logger
}

func (c Config) prices() Prices {
	if c.Prices == nil {
		return DefaultPrices()
	}
	return c.Prices
}

// Provider names, as written before the first '/' of a model reference.
const (
	OpenAI     = "openai"
	Anthropic  = "anthropic"
	Gemini     = "gemini"
	Ollama     = "ollama"
	OpenRouter = "openrouter"
	Together   = "together"
	Replicate  = "replicate"
)

// aliases maps other accepted spellings to provider names: "google/gemini-2.5-flash" is a
// Gemini model, as docs/models.md promises.
var aliases = map[string]string{"google": Gemini}

// Names returns the provider names New accepts, sorted (aliases not included).
func Names() []string {
	names := []string{OpenAI, Anthropic, Gemini, Ollama, OpenRouter, Together, Replicate}
	sort.Strings(names)
	return names
}

// Spellings returns every provider name a model reference may start with: the names and
// their aliases, sorted. host/check takes it for suggestions.
func Spellings() []string {
	out := Names()
	for a := range aliases {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Canonical returns the provider name a model reference's provider part stands for ("google"
// is "gemini"; case does not matter), and false when no provider goes by that name. host/check
// takes it as its lookup, so validation and running accept the same names.
func Canonical(provider string) (string, bool) {
	p := canonical(provider)
	for _, n := range Names() {
		if n == p {
			return p, true
		}
	}
	return "", false
}

// SupportsTools reports whether the named provider (or alias) can offer tools to a model.
// Whether a given model can is up to the model: the provider answers with an error when it
// can't.
func SupportsTools(provider string) bool {
	return canonical(provider) != Replicate
}

// A ToolCapable provider says whether it can offer tools to its models. A Provider that does
// not implement it is taken to be able to; a custom provider whose API has no tool calling
// implements it and returns false, and an agent with tools on it fails with TOOL_CONFIG.
type ToolCapable interface {
	CanCallTools() bool
}

// CanCallTools reports whether p can offer tools (see ToolCapable).
func CanCallTools(p Provider) bool {
	if tc, ok := p.(ToolCapable); ok {
		return tc.CanCallTools()
	}
	return true
}

func canonical(provider string) string {
	p := strings.ToLower(provider)
	if a, ok := aliases[p]; ok {
		return a
	}
	return p
}

// Resolve splits a model reference "provider/model" at its first '/': the model id keeps any
// further '/', '.', ':' or '-' ("openrouter/qwen/qwen3-coder" is provider openrouter, model
// qwen/qwen3-coder; "ollama/llama3.1:8b" is ollama, llama3.1:8b). The provider name is returned
// in its canonical spelling ("google" becomes "gemini"). An unknown provider or an empty half
// is a CodeConfig error.
func Resolve(ref string) (provider, modelID string, err error) {
	p, m, ok := strings.Cut(strings.TrimSpace(ref), "/")
	if !ok || p == "" || m == "" {
		return "", "", configError("", "model %q: want provider/model, e.g. openai/gpt-4o-mini", ref)
	}
	if c, ok := Canonical(p); ok {
		return c, m, nil
	}
	return "", "", configError("", "model %q: unknown provider %q (known: %s)", ref, p, strings.Join(Spellings(), ", "))
}

// New returns the adapter for the named provider. Its key and base URL come from cfg.Env; a
// missing key is reported by New (CodeConfig), not at the first call, except for Ollama, which
// needs none.
func New(provider string, cfg Config) (Provider, error) {
	switch p := canonical(provider); p {
	case OpenAI, OpenRouter, Together:
		return newOpenAI(p, cfg)
	case Anthropic:
		return newAnthropic(cfg)
	case Gemini:
		return newGemini(cfg)
	case Ollama:
		return newOllama(cfg)
	case Replicate:
		return newReplicate(cfg)
	default:
		return nil, configError("", "unknown model provider %q (known: %s)", provider, strings.Join(Names(), ", "))
	}
}

// Open resolves ref and returns its provider's adapter and the model id to put in
// Request.Model.
func Open(ref string, cfg Config) (Provider, string, error) {
	p, m, err := Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	prov, err := New(p, cfg)
	if err != nil {
		return nil, "", err
	}
	return prov, m, nil
}
