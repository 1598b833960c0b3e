package model

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// A rest client sends JSON requests for the adapters that have no SDK (Ollama, Replicate).
type rest struct {
	client *http.Client
	header http.Header
}

// send makes one request with a JSON body (none when in is nil) and decodes a 2xx answer into
// out. A non-2xx answer returns errHTTPStatus, and classify codes it from what the transport
// recorded; a body that does not decode is returned as a decoding error, which classify turns
// into CodeBadResponse.
func (r rest) send(ctx context.Context, method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if in != nil {
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
