package store

import (
	"context"
	"hash/fnv"
	"strings"
	"unicode"

	"halolang.dev/halo/host/model"
)

// MockEmbedder is the embedder of halo test and --mock: deterministic vectors made without a
// model, so a test needs no key and gets the same hits every time. Each word (lower-cased,
// letters and digits) adds one to two coordinates picked by its hash, with signs picked by
// the hash too; the vector is then normalised. Texts that share words point the same way, so a
// query still finds the chunks that use its words. It costs nothing.
type MockEmbedder struct {
	// Dimensions is the vectors' length; 0 means DefaultMockDimensions.
	Dimensions int
}

// Embed returns the inputs' mock vectors (req.Dimensions, when set, wins).
func (m MockEmbedder) Embed(ctx context.Context, req model.EmbedRequest) (model.EmbedResponse, error) {
	if err := ctx.Err(); err != nil {
		return model.EmbedResponse{}, err
	}
	dim := req.Dimensions
	if dim <= 0 {
		dim = m.Dimensions
	}
	if dim <= 0 {
		dim = DefaultMockDimensions
	}
	out := make([][]float32, len(req.Inputs))
	for i, text := range req.Inputs {
		out[i] = mockVector(text, dim)
	}
	return model.EmbedResponse{Vectors: out, Usage: model.Usage{InputTokens: model.EstimateEmbedTokens(req.Inputs)},
		Model: "mock", Attempts: 1}, nil
}

func mockVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		h := fnv.New64a()
		h.Write([]byte(w))
		// Two coordinates a word, from different bits of its hash, so two words that
		// meet on one seldom cancel out.
		x := h.Sum64()
		for _, c := range [2]struct{ at, sign uint64 }{{x & 0xffffff, x >> 63}, {(x >> 24) & 0xffffff, (x >> 62) & 1}} {
			i := int(c.at % uint64(dim))
			if c.sign == 1 {
				v[i]--
			} else {
				v[i]++
			}
		}
	}
	if allZero(v) {
		// No words, or words whose signs cancel: a vector still points somewhere.
		v[0] = 1
	}
	return normalized(v)
}

func allZero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}
