package model

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strings"
	"sync"
)

// A Price is what a model charges, in US dollars per million tokens, and the most output
// tokens one reply may have.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// MaxOutput is the model's own limit on a reply's tokens (max_tokens above it is refused
	// by the API); 0 means the table does not know it.
	MaxOutput int `json:"maxOutput,omitempty"`
}

// ClampOutput returns n (a reply cap about to be sent) no higher than the model's output
// limit; n itself when the limit is unknown. 0 (no cap) stays 0.
func (p Price) ClampOutput(n int) int {
	if p.MaxOutput > 0 && n > p.MaxOutput {
		return p.MaxOutput
	}
	return n
}

// Cost returns the dollars a call with usage u costs at price p.
func (p Price) Cost(u Usage) float64 {
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output) / 1e6
}

// Prices maps "provider/model" (as written in .halo files) to a price. A "provider/*" key
// prices every model of that provider not listed on its own.
type Prices map[string]Price

//go:embed prices.json
var pricesJSON []byte

var defaultPrices = sync.OnceValues(func() (Prices, error) { return ParsePrices(pricesJSON) })

// DefaultPrices returns a copy of the price table shipped in prices.json.
func DefaultPrices() Prices {
	p, err := defaultPrices()
	if err != nil {
		// prices.json is embedded and checked by a test; this cannot happen in a build that
		// passed its tests.
		panic(err)
	}
	return maps.Clone(p)
}

// ParsePrices reads a price table in the prices.json format:
// {"models": {"openai/gpt-4o": {"input": 2.5, "output": 10, "maxOutput": 16384}}}.
func ParsePrices(data []byte) (Prices, error) {
	var doc struct {
		Models map[string]Price `json:"models"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	out := make(Prices, len(doc.Models))
	for k, v := range doc.Models {
		prov, id, ok := strings.Cut(k, "/")
		if !ok || prov == "" || id == "" {
			return nil, fmt.Errorf("price table: key %q: want provider/model", k)
		}
		if v.Input < 0 || v.Output < 0 {
			return nil, fmt.Errorf("price table: %q: negative price", k)
		}
		if v.MaxOutput < 0 {
			return nil, fmt.Errorf("price table: %q: negative maxOutput", k)
		}
		out[canonical(prov)+"/"+id] = v
	}
	return out, nil
}

// versionSuffix matches the dated or "latest" suffixes providers add to a model id
// ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929", "gemini-2.5-flash-001").
var versionSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{3}|-latest|-preview(-\d{2}-\d{4})?)$`)
})

// Lookup returns the price of model id on provider: an exact entry, else the entry for the id
// without a version suffix, else the provider's "*" entry.
func (p Prices) Lookup(provider, id string) (Price, bool) {
	provider = canonical(provider)
	if pr, ok := p[provider+"/"+id]; ok {
		return pr, true
	}
	if base := versionSuffix().ReplaceAllString(id, ""); base != id {
		if pr, ok := p[provider+"/"+base]; ok {
			return pr, true
		}
	}
	pr, ok := p[provider+"/*"]
	return pr, ok
}

// cost prices a finished call; an unknown model costs 0, is marked Unpriced, and says so in
// the debug log.
func (c caller) cost(resp *Response, requested string) {
	pr, ok := c.prices.Lookup(c.name, requested)
	if !ok && resp.Model != "" && resp.Model != requested {
		pr, ok = c.prices.Lookup(c.name, resp.Model)
	}
	if !ok {
		c.cfg.logger().Debug("no price for model; counting its cost as 0", "provider", c.name, "model", requested)
		resp.Unpriced = true
		return
	}
	resp.Cost = pr.Cost(resp.Usage)
}

// clamped returns req with MaxTokens no higher than the model's output limit, when the price
// table knows it: a cap above it is refused by the API (gpt-4o-mini takes at most 16384).
func (c caller) clamped(req Request) Request {
	if req.MaxTokens <= 0 {
		return req
	}
	if pr, ok := c.prices.Lookup(c.name, req.Model); ok {
		req.MaxTokens = pr.ClampOutput(req.MaxTokens)
	}
	return req
}

// MaxOutputTokens returns how many output tokens a call with inputTokens of input can afford
// within budget dollars: 0 when the input alone uses it up, math.MaxInt when output is free.
// MaxSpend uses it to cap a call's max_tokens so the call fits in what is left.
func (p Price) MaxOutputTokens(budget float64, inputTokens int) int {
	left := budget - float64(inputTokens)*p.Input/1e6
	if left <= 0 {
		return 0
	}
	if p.Output <= 0 {
		return math.MaxInt
	}
	n := math.Floor(left * 1e6 / p.Output)
	if n >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

// EstimateInputTokens guesses the input tokens of req before it is sent, for budgets: about
// four bytes of text per token, rounded up, over the system prompt, messages and tool
// definitions, plus a few tokens per message for the wire format. It is a rough, generous
// guess; the provider's count in Response.Usage is what costs are computed from.
func EstimateInputTokens(req Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Text) + 16
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Args) + 16
		}
		for _, r := range m.ToolResults {
			n += len(r.Content) + len(r.Name) + 16
		}
		if m.Native != nil {
			n += len(m.Native.Data)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Params) + 16
	}
	return (n + 3) / 4
}
