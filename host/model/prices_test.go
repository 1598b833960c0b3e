package model

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestDefaultPricesParse(t *testing.T) {
	p := DefaultPrices()
	if len(p) < 10 {
		t.Fatalf("price table has %d entries", len(p))
	}
	for k := range p {
		prov, _, _ := cutRef(k)
		if _, _, err := Resolve(prov + "/x"); err != nil {
			t.Errorf("price key %q names an unknown provider", k)
		}
	}
}

func cutRef(k string) (string, string, bool) {
	for i := range k {
		if k[i] == '/' {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

func TestPricesLookup(t *testing.T) {
	p := Prices{
		"openai/gpt-4o":               {Input: 2.5, Output: 10},
		"openai/gpt-4o-mini":          {Input: 0.15, Output: 0.6},
		"anthropic/claude-sonnet-4-5": {Input: 3, Output: 15},
		"ollama/*":                    {},
	}
	tests := []struct {
		provider, id string
		want         Price
		ok           bool
	}{
		{"openai", "gpt-4o", Price{Input: 2.5, Output: 10}, true},
		{"openai", "gpt-4o-2024-08-06", Price{Input: 2.5, Output: 10}, true},
		{"openai", "gpt-4o-mini-2024-07-18", Price{Input: 0.15, Output: 0.6}, true},
		{"anthropic", "claude-sonnet-4-5-20250929", Price{Input: 3, Output: 15}, true},
		{"ollama", "llama3.1:8b", Price{}, true},
		{"openai", "gpt-4o-audio-preview", Price{}, false},
		{"gemini", "gemini-2.5-flash", Price{}, false},
	}
	for _, tt := range tests {
		got, ok := p.Lookup(tt.provider, tt.id)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%s, %s) = %v, %v; want %v, %v", tt.provider, tt.id, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPriceCost(t *testing.T) {
	got := Price{Input: 2.5, Output: 10}.Cost(Usage{InputTokens: 1000, OutputTokens: 500})
	if want := 0.0025 + 0.005; math.Abs(got-want) > 1e-12 {
		t.Fatalf("cost = %v, want %v", got, want)
	}
}

func TestParsePricesRejects(t *testing.T) {
	for _, doc := range []string{`{`, `{"models":{"gpt-4o":{"input":1}}}`, `{"models":{"openai/x":{"input":-1}}}`} {
		if _, err := ParsePrices([]byte(doc)); err == nil {
			t.Errorf("ParsePrices(%s) succeeded", doc)
		}
	}
}

func TestMaxOutputTokens(t *testing.T) {
	p := Price{Input: 2.5, Output: 10}
	tests := []struct {
		budget float64
		input  int
		want   int
	}{
		{0.01, 1000, 750}, // 0.01 - 0.0025 = 0.0075 → 750 tokens at $10/M
		{0.0025, 1000, 0}, // the input uses it all
		{0.001, 1000, 0},  // the input alone is over
		{1e9, 0, math.MaxInt32},
	}
	for _, tt := range tests {
		if got := p.MaxOutputTokens(tt.budget, tt.input); got != tt.want {
			t.Errorf("MaxOutputTokens(%v, %d) = %d, want %d", tt.budget, tt.input, got, tt.want)
		}
	}
	if got := (Price{}).MaxOutputTokens(0.01, 10); got != math.MaxInt {
		t.Errorf("free model: %d", got)
	}
}

func TestEstimateInputTokens(t *testing.T) {
	small := EstimateInputTokens(Request{System: "be brief", Messages: []Message{{Role: User, Text: "hi"}}})
	big := EstimateInputTokens(Request{System: "be brief", Messages: []Message{{Role: User, Text: string(make([]byte, 4000))}}})
	if small <= 0 || big < 1000 || big <= small {
		t.Errorf("estimates: small %d, big %d", small, big)
	}
}

// An unpriced model costs 0, is marked Unpriced, and says so in the debug log.
func TestUnknownModelCostsZero(t *testing.T) {
	f := newFake(t, reply{body: ollamaText})
	var logs bytes.Buffer
	cfg := testConfig(nil, &sleeper{})
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
	cfg.Prices = Prices{"openai/gpt-4o": {Input: 1, Output: 1}}
	resp, err := openOllama(t, f.srv.URL, cfg).Complete(context.Background(), Request{Model: "llama3.1:8b", Messages: []Message{{Role: User, Text: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Cost != 0 || resp.Usage.OutputTokens == 0 || !resp.Unpriced {
		t.Errorf("cost = %v (unpriced %v) with usage %+v", resp.Cost, resp.Unpriced, resp.Usage)
	}
	if !strings.Contains(logs.String(), "no price for model") || !strings.Contains(logs.String(), "llama3.1:8b") {
		t.Errorf("debug log = %q", logs.String())
	}
}

func TestOutputLimits(t *testing.T) {
	p := DefaultPrices()
	for ref, want := range map[string]int{"openai/gpt-4o-mini": 16384, "anthropic/claude-sonnet-4-5": 64000, "gemini/gemini-2.5-flash": 65536} {
		prov, id, _ := cutRef(ref)
		pr, ok := p.Lookup(prov, id)
		if !ok || pr.MaxOutput != want {
			t.Errorf("%s: maxOutput %d, want %d", ref, pr.MaxOutput, want)
		}
	}
	if got := (Price{MaxOutput: 100}).ClampOutput(500); got != 100 {
		t.Errorf("ClampOutput(500) = %d", got)
	}
	if got := (Price{}).ClampOutput(500); got != 500 {
		t.Errorf("ClampOutput without a limit = %d", got)
	}
	if _, err := ParsePrices([]byte(`{"models": {"a/b": {"input": 1, "output": 1, "maxOutput": -1}}}`)); err == nil {
		t.Error("a negative maxOutput parses")
	}
}
