package plan

import (
	"encoding/json"
	"math"
	"slices"
)

// A Cost is a worst case: how many model requests, tokens and dollars at most.
//
// Parts of a worst case may be unknown: a model the price table does not list, a reply
// whose size nothing caps, a pipeline that calls itself. Unknown then says why, and the
// numbers that could not be counted are shown as unknown (null in JSON), never as zero: the
// dollars are unknown when any call's are, though KnownUSD still adds up those that are
// known.
type Cost struct {
	// Requests is the number of model requests, @retry attempts included.
	Requests int64
	// InputTokens and OutputTokens are the tokens those requests send and get back.
	InputTokens, OutputTokens int64
	// USD is what they cost at the price table's prices.
	USD float64

	// TokensUnknown and USDUnknown say the tokens or the dollars could not all be counted;
	// RequestsUnknown the requests (a pipeline that calls itself has no bound).
	TokensUnknown, USDUnknown, RequestsUnknown bool
	// Unknown says why, one reason a line, without repeats.
	Unknown []string
}

// Add returns c + d.
func (c Cost) Add(d Cost) Cost {
	return Cost{
		Requests:        satAdd(c.Requests, d.Requests),
		InputTokens:     satAdd(c.InputTokens, d.InputTokens),
		OutputTokens:    satAdd(c.OutputTokens, d.OutputTokens),
		USD:             c.USD + d.USD,
		TokensUnknown:   c.TokensUnknown || d.TokensUnknown,
		USDUnknown:      c.USDUnknown || d.USDUnknown,
		RequestsUnknown: c.RequestsUnknown || d.RequestsUnknown,
		Unknown:         union(c.Unknown, d.Unknown),
	}
}

// Times returns c counted n times.
func (c Cost) Times(n int64) Cost {
	out := c
	out.Requests = satMul(c.Requests, n)
	out.InputTokens = satMul(c.InputTokens, n)
	out.OutputTokens = satMul(c.OutputTokens, n)
	out.USD = c.USD * float64(n)
	out.Unknown = slices.Clone(c.Unknown)
	return out.checked()
}

// checked marks counts too large to hold as unknown.
func (c Cost) checked() Cost {
	const reason = "a count too large to hold (loops, items and steps multiply)"
	if c.Requests == math.MaxInt64 {
		c.RequestsUnknown, c.TokensUnknown, c.USDUnknown = true, true, true
		c.Unknown = union(c.Unknown, []string{reason})
	}
	if c.InputTokens == math.MaxInt64 || c.OutputTokens == math.MaxInt64 || math.IsInf(c.USD, 0) {
		c.TokensUnknown, c.USDUnknown = true, true
		c.Unknown = union(c.Unknown, []string{reason})
	}
	return c
}

// less orders worst cases for a branch: unknown dollars before known, then dollars, then
// requests.
func (c Cost) less(d Cost) bool {
	if c.USDUnknown != d.USDUnknown {
		return d.USDUnknown
	}
	if c.USD != d.USD {
		return c.USD < d.USD
	}
	return c.Requests < d.Requests
}

type costJSON struct {
	Requests     *int64   `json:"requests"`
	InputTokens  *int64   `json:"inputTokens"`
	OutputTokens *int64   `json:"outputTokens"`
	USD          *float64 `json:"usd"`
	KnownUSD     *float64 `json:"knownUsd,omitempty"`
	Unknown      []string `json:"unknown,omitempty"`
}

// MarshalJSON writes unknown numbers as null; usd is rounded to a billionth of a dollar.
func (c Cost) MarshalJSON() ([]byte, error) {
	out := costJSON{Unknown: c.Unknown}
	if !c.RequestsUnknown {
		out.Requests = &c.Requests
	}
	if !c.TokensUnknown {
		out.InputTokens, out.OutputTokens = &c.InputTokens, &c.OutputTokens
	}
	usd := RoundUSD(c.USD)
	if c.USDUnknown {
		if usd > 0 {
			out.KnownUSD = &usd
		}
	} else {
		out.USD = &usd
	}
	return json.Marshal(out)
}

// RoundUSD rounds dollars to a billionth, so sums of prices print as written.
func RoundUSD(f float64) float64 { return math.Round(f*1e9) / 1e9 }

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
