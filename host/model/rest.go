package model

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// A rest client sends JSON requests on net/http: for the adapters that have no SDK (Ollama,
// Replicate), and for those whose body is made of a Wire's bytes (OpenAI-compatible, Gemini).
type rest struct {
	client *http.Client
	header http.Header
}

// send makes one request with a JSON body (none when in is nil) and decodes a 2xx answer into
// out. A non-2xx answer returns errHTTPStatus, and classify codes it from what the transport
// recorded; a body that does not decode is returned as a decoding error, which classify turns
// into CodeBadResponse.
func (r rest) send(ctx context.Context, method, url string, in, out any) error {
	var b body
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		b = body{data}
	}
	return r.exchange(ctx, method, url, b, out)
}

// post sends b, a JSON body made of pieces (see Wire), and decodes the answer as send does.
func (r rest) post(ctx context.Context, url string, b body, out any) error {
	return r.exchange(ctx, http.MethodPost, url, b, out)
}

func (r rest) exchange(ctx context.Context, method, url string, b body, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	if b != nil {
		req.Body = io.NopCloser(b.reader())
		req.ContentLength = b.len()
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(b.reader()), nil }
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if b != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return errHTTPStatus(resp.StatusCode)
	}
	return json.Unmarshal(data, out)
}
