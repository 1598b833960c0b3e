package model

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"google.golang.org/genai"
)

// An EmbedTask says what the vectors are for, for the providers that embed a document and a
// query differently (Gemini's task types); the others ignore it.
type EmbedTask string

const (
	// EmbedDocument vectors are stored and searched.
	EmbedDocument EmbedTask = "document"
	// EmbedQuery vectors are what a search looks for.
	EmbedQuery EmbedTask = "query"
)

// An EmbedRequest asks a provider's embedding API for the vectors of some texts.
type EmbedRequest struct {
	// Model is the provider's model id, without the provider prefix
	// ("text-embedding-3-small").
	Model string
	// Inputs are the texts, one vector each, in order.
	Inputs []string
	// Dimensions asks a model that can shorten its vectors (OpenAI's text-embedding-3,
	// Gemini's, Ollama's newer models) for this many; 0 means the model's own length.
	Dimensions int
	// Task says whether the texts are stored documents or a query.
	Task EmbedTask
	// Timeout bounds each attempt; zero means Config.Timeout.
	Timeout time.Duration
}

// An EmbedResponse is the vectors of an EmbedRequest's inputs.
type EmbedResponse struct {
	// Vectors has one vector per input, in the inputs' order, all of one length.
	Vectors [][]float32 `json:"-"`
	// Usage.InputTokens is what the provider counted, or, for a provider that reports no
	// count (Gemini's API), an estimate of four bytes a token. Embeddings have no output.
	Usage Usage `json:"usage"`
	// Cost is in US dollars, from the price table; 0 for a model the table doesn't know.
	Cost float64 `json:"cost"`
	// Model is the model the provider says answered.
	Model string `json:"model,omitempty"`
	// Attempts is how many HTTP requests the call took.
	Attempts int `json:"attempts"`
}

// An Embedder turns texts into vectors through one provider's embedding API. Embed retries
// what may pass (429, 408, 5xx, network errors) as Complete does, and returns an *Error for
// every failure. It is safe for concurrent use.
type Embedder interface {
	Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error)
}

// EmbedderFunc adapts a function to the Embedder interface (mocks, tests).
type EmbedderFunc func(ctx context.Context, req EmbedRequest) (EmbedResponse, error)

// Embed calls f.
func (f EmbedderFunc) Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error) {
	return f(ctx, req)
}

// MaxEmbedInputs is the most texts one EmbedRequest may hold: the lowest of the providers'
// own batch limits (Gemini's batchEmbedContents takes 100; OpenAI's 2048).
const MaxEmbedInputs = 100

// SupportsEmbeddings reports whether the named provider (or alias) has an embedding API
// NewEmbedder can call: OpenAI and the OpenAI-compatible services, Gemini and Ollama.
// Anthropic and Replicate have none.
func SupportsEmbeddings(provider string) bool {
	switch canonical(provider) {
	case OpenAI, OpenRouter, Together, Gemini, Ollama:
		return true
	}
	return false
}

// NewEmbedder returns the embedding adapter of the named provider, with its key and base
// URL from cfg.Env as New reads them: OpenAI's /embeddings (also OpenRouter's and
// Together's), Gemini's batchEmbedContents, Ollama's /api/embed.
func NewEmbedder(provider string, cfg Config) (Embedder, error) {
	switch p := canonical(provider); p {
	case OpenAI, OpenRouter, Together:
		prov, err := newOpenAI(p, cfg)
		if err != nil {
			return nil, err
		}
		return prov.(*openAIProvider), nil
	case Gemini:
		prov, err := newGemini(cfg)
		if err != nil {
			return nil, err
		}
		return prov.(*geminiProvider), nil
	case Ollama:
		prov, err := newOllama(cfg)
		if err != nil {
			return nil, err
		}
		return prov.(*ollamaProvider), nil
	case Anthropic, Replicate:
		return nil, configError(p, "%s has no embedding API: use an openai, gemini or ollama embedding model", p)
	default:
		return nil, configError("", "unknown model provider %q (known: %s)", provider, strings.Join(Names(), ", "))
	}
}

// OpenEmbedder resolves ref ("openai/text-embedding-3-small") and returns its provider's
// embedding adapter and the model id to put in EmbedRequest.Model.
func OpenEmbedder(ref string, cfg Config) (Embedder, string, error) {
	p, m, err := Resolve(ref)
	if err != nil {
		return nil, "", err
	}
	e, err := NewEmbedder(p, cfg)
	if err != nil {
		return nil, "", err
	}
	return e, m, nil
}

// EstimateEmbedTokens guesses the input tokens of texts before they are sent, as
// EstimateInputTokens does: four bytes a token, rounded up, and one more per text.
func EstimateEmbedTokens(texts []string) int {
	n := 0
	for _, t := range texts {
		n += (len(t)+3)/4 + 1
	}
	return n
}

// embed runs one embedding call under the caller's retries and prices: attempt fills the
// vectors and returns the usage the provider reported.
func (c caller) embed(ctx context.Context, req EmbedRequest, attempt func(ctx context.Context) ([][]float32, Usage, string, error)) (EmbedResponse, error) {
	if len(req.Inputs) == 0 {
		return EmbedResponse{Model: req.Model}, nil
	}
	if len(req.Inputs) > MaxEmbedInputs {
		return EmbedResponse{}, configError(c.name, "%d texts in one embedding request; at most %d", len(req.Inputs), MaxEmbedInputs)
	}
	var vecs [][]float32
	resp, err := c.do(ctx, Request{Model: req.Model, Timeout: req.Timeout}, func(ctx context.Context) (Response, error) {
		v, u, m, err := attempt(ctx)
		if err != nil {
			return Response{}, err
		}
		if err := checkVectors(v, len(req.Inputs)); err != nil {
			return Response{}, badResponse(c.name, err)
		}
		vecs = v
		// The body is the vectors as JSON: nothing worth keeping as Raw.
		return Response{Usage: u, Model: m, Raw: []byte{}}, nil
	})
	if err != nil {
		return EmbedResponse{}, err
	}
	return EmbedResponse{Vectors: vecs, Usage: resp.Usage, Cost: resp.Cost, Model: resp.Model, Attempts: resp.Attempts}, nil
}

// checkVectors refuses an answer that does not have one vector per input, all of one
// non-zero length, every number finite.
func checkVectors(v [][]float32, n int) error {
	if len(v) != n {
		return fmt.Errorf("%d vectors for %d texts", len(v), n)
	}
	for i, x := range v {
		if len(x) == 0 || len(x) != len(v[0]) {
			return fmt.Errorf("vector %d has %d dimensions, vector 0 has %d", i, len(x), len(v[0]))
		}
		for _, f := range x {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return fmt.Errorf("vector %d holds %v", i, f)
			}
		}
	}
	return nil
}

// Embed calls /embeddings (OpenAI, OpenRouter, Together).
func (p *openAIProvider) Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error) {
	ereq := openai.EmbeddingRequest{Input: req.Inputs, Model: openai.EmbeddingModel(req.Model),
		EncodingFormat: openai.EmbeddingEncodingFormatFloat, Dimensions: req.Dimensions}
	return p.embed(ctx, req, func(ctx context.Context) ([][]float32, Usage, string, error) {
		var eresp openai.EmbeddingResponse
		if err := p.send(ctx, http.MethodPost, strings.TrimSuffix(p.url, "/chat/completions")+"/embeddings", ereq, &eresp); err != nil {
			return nil, Usage{}, "", err
		}
		out := make([][]float32, len(eresp.Data))
		for _, d := range eresp.Data {
			if d.Index < 0 || d.Index >= len(out) || out[d.Index] != nil {
				return nil, Usage{}, "", badResponse(p.name, fmt.Errorf("embedding index %d out of place", d.Index))
			}
			out[d.Index] = d.Embedding
		}
		return out, Usage{InputTokens: eresp.Usage.PromptTokens}, string(eresp.Model), nil
	})
}

// Embed calls batchEmbedContents, with the genai SDK's types laid out as its API documents
// them. Gemini's API reports no token count: the usage is estimated.
func (p *geminiProvider) Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error) {
	endpoint, err := p.endpoint(req.Model)
	if err != nil {
		return EmbedResponse{}, err
	}
	endpoint = strings.TrimSuffix(endpoint, ":generateContent") + ":batchEmbedContents"
	model := strings.TrimPrefix(strings.TrimSuffix(endpoint, ":batchEmbedContents"), p.base)
	task := "RETRIEVAL_DOCUMENT"
	if req.Task == EmbedQuery {
		task = "RETRIEVAL_QUERY"
	}
	type embedContent struct {
		Model                string         `json:"model"`
		Content              *genai.Content `json:"content"`
		TaskType             string         `json:"taskType,omitempty"`
		OutputDimensionality *int32         `json:"outputDimensionality,omitempty"`
	}
	var dims *int32
	if req.Dimensions > 0 {
		d := int32(req.Dimensions)
		dims = &d
	}
	breq := struct {
		Requests []embedContent `json:"requests"`
	}{Requests: make([]embedContent, len(req.Inputs))}
	for i, t := range req.Inputs {
		breq.Requests[i] = embedContent{Model: model, Content: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: t}}},
			TaskType: task, OutputDimensionality: dims}
	}
	return p.embed(ctx, req, func(ctx context.Context) ([][]float32, Usage, string, error) {
		var gresp genai.EmbedContentResponse
		if err := p.send(ctx, http.MethodPost, endpoint, breq, &gresp); err != nil {
			return nil, Usage{}, "", err
		}
		out := make([][]float32, 0, len(gresp.Embeddings))
		for _, e := range gresp.Embeddings {
			if e == nil {
				return nil, Usage{}, "", badResponse(Gemini, errorString("an empty embedding"))
			}
			out = append(out, e.Values)
		}
		return out, Usage{InputTokens: EstimateEmbedTokens(req.Inputs)}, req.Model, nil
	})
}

// The /api/embed wire types, as Ollama's API documentation gives them.
type (
	ollamaEmbedRequest struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions,omitempty"`
	}
	ollamaEmbedResponse struct {
		Model           string      `json:"model"`
		Embeddings      [][]float32 `json:"embeddings"`
		PromptEvalCount int         `json:"prompt_eval_count"`
	}
)

// Embed calls Ollama's /api/embed.
func (p *ollamaProvider) Embed(ctx context.Context, req EmbedRequest) (EmbedResponse, error) {
	oreq := ollamaEmbedRequest{Model: req.Model, Input: req.Inputs, Dimensions: req.Dimensions}
	url := strings.TrimSuffix(p.url, "/api/chat") + "/api/embed"
	return p.embed(ctx, req, func(ctx context.Context) ([][]float32, Usage, string, error) {
		var oresp ollamaEmbedResponse
		if err := p.send(ctx, http.MethodPost, url, oreq, &oresp); err != nil {
			return nil, Usage{}, "", err
		}
		return oresp.Embeddings, Usage{InputTokens: oresp.PromptEvalCount}, oresp.Model, nil
	})
}
