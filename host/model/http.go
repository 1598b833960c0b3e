package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRecorded bounds how much of a response body is kept for Response.Raw and error details.
const maxRecorded = 8 << 20

// An exchange is what the transport saw during one attempt. Adapters built on SDKs cannot
// hand us the status, headers or body of a failure in one shape, so the transport records them
// and classify reads them: every adapter's errors are coded the same way.
type exchange struct {
	status int
	header http.Header
	body   bytes.Buffer
	err    error
}

type exchangeKey struct{}

// recorder is the http.RoundTripper every adapter's client uses.
type recorder struct{ base http.RoundTripper }

func (t recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	resp, err := t.base.RoundTrip(r)
	if ex == nil {
		return resp, err
	}
	if err != nil {
		ex.err = err
		return nil, err
	}
	ex.status, ex.header, ex.err = resp.StatusCode, resp.Header, nil
	ex.body.Reset()
	resp.Body = &teeBody{rc: resp.Body, buf: &ex.body}
	return resp, nil
}

type teeBody struct {
	rc  io.ReadCloser
	buf *bytes.Buffer
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	if room := maxRecorded - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(n, room)])
	}
	return n, err
}

// Close reads what the SDK left unread (a JSON decoder stops at the end of the value, before
// EOF) so the connection can be reused and Raw holds the whole body; a large remainder is
// not worth reading.
func (t *teeBody) Close() error {
	_, _ = io.CopyN(io.Discard, t, 256<<10)
	return t.rc.Close()
}

// httpClient returns cfg's client with the recording transport in front of its own.
func (c Config) httpClient() *http.Client {
	var hc http.Client
	if c.HTTPClient != nil {
		hc = *c.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = recorder{base: base}
	return &hc
}

// A caller runs one adapter's attempts under the shared timeout and retry policy.
type caller struct {
	name string
	cfg  Config
	// keyEnv names the variable the key came from, for MODEL_AUTH messages.
	keyEnv string
	// prices is read once, when the adapter is made.
	prices Prices
	// tools keeps the offered tools' wire bytes.
	tools *toolCache
}

func newCaller(name string, cfg Config, keyEnv string) caller {
	return caller{name: name, cfg: cfg, keyEnv: keyEnv, prices: cfg.prices(), tools: newToolCache()}
}

// do runs attempt until it succeeds, fails for good, or runs out of attempts. Each attempt
// gets its own timeout; retryable failures wait an exponential backoff, or the provider's
// Retry-After when that is longer.
func (c caller) do(ctx context.Context, req Request, attempt func(ctx context.Context) (Response, error)) (Response, error) {
	if strings.TrimSpace(req.Model) == "" {
		return Response{}, configError(c.name, "no model id in the request")
	}
	maxAttempts := c.cfg.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = c.cfg.Timeout
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	for n := 1; ; n++ {
		resp, err := c.once(ctx, timeout, attempt)
		if err == nil {
			resp.Attempts = n
			if resp.Model == "" {
				resp.Model = req.Model
			}
			c.cost(&resp, req.Model)
			return resp, nil
		}
		err.Attempts = n
		if !err.Retryable || n >= maxAttempts || ctx.Err() != nil {
			return Response{}, err
		}
		wait := c.backoff(n)
		if err.RetryAfter > 0 {
			if err.RetryAfter > c.maxRetryAfter() {
				return Response{}, err
			}
			wait = max(wait, err.RetryAfter)
		}
		c.cfg.logger().Debug("model call failed; retrying", "provider", c.name, "model", req.Model,
			"attempt", n, "code", err.Code, "status", err.Status, "wait", wait)
		if serr := c.sleep(ctx, wait); serr != nil {
			return Response{}, err
		}
	}
}

func (c caller) backoff(n int) time.Duration {
	base, top := c.cfg.Backoff, c.cfg.MaxBackoff
	if base <= 0 {
		base = DefaultBackoff
	}
	if top <= 0 {
		top = DefaultMaxBackoff
	}
	d := float64(base) * math.Pow(2, float64(n-1))
	if d > float64(top) {
		return top
	}
	return time.Duration(d)
}

func (c caller) maxRetryAfter() time.Duration {
	if c.cfg.MaxRetryAfter > 0 {
		return c.cfg.MaxRetryAfter
	}
	return DefaultMaxRetryAfter
}

func (c caller) sleep(ctx context.Context, d time.Duration) error {
	if c.cfg.Sleep != nil {
		return c.cfg.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c caller) now() time.Time {
	if c.cfg.Now != nil {
		return c.cfg.Now()
	}
	return time.Now()
}

// once runs one attempt and codes its failure.
func (c caller) once(ctx context.Context, timeout time.Duration, attempt func(ctx context.Context) (Response, error)) (Response, *Error) {
	ex := &exchange{}
	actx, cancel := context.WithTimeout(context.WithValue(ctx, exchangeKey{}, ex), timeout)
	defer cancel()
	resp, err := attempt(actx)
	if err == nil {
		if resp.Raw == nil && ex.body.Len() > 0 {
			resp.Raw = json.RawMessage(bytes.Clone(ex.body.Bytes()))
		}
		return resp, nil
	}
	return Response{}, c.classify(ctx, actx, ex, err)
}

// classify turns an attempt's failure into an *Error, from what the transport saw rather than
// from each SDK's own error types.
func (c caller) classify(ctx, actx context.Context, ex *exchange, err error) *Error {
	var me *Error
	switch {
	case errors.As(err, &me):
		if me.Provider == "" {
			me.Provider = c.name
		}
		return me
	case ex.status != 0 && (ex.status < 200 || ex.status > 299):
		e := statusError(c.name, ex.status, errorDetail(ex.body.Bytes()), retryAfter(ex.header, c.now()))
		e.Err = err
		if e.Code == CodeAuth && c.keyEnv != "" {
			e.Message += " (check " + c.keyEnv + ")"
		}
		return e
	case ctx.Err() != nil:
		// The caller's own deadline or cancellation: retrying inside this call is pointless,
		// but a timeout is still one the runtime's @retry may try again.
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &Error{Code: CodeTimeout, Provider: c.name, Message: "model call timed out", Retryable: true, Err: ctx.Err()}
		}
		return &Error{Code: CodeError, Provider: c.name, Message: "model call canceled", Err: ctx.Err()}
	case actx.Err() != nil:
		return &Error{Code: CodeTimeout, Provider: c.name, Message: "model call timed out", Retryable: true, Err: actx.Err()}
	case ex.err != nil:
		return &Error{Code: CodeError, Provider: c.name, Message: "request failed: " + ex.err.Error(), Retryable: true, Err: err}
	case ex.status != 0:
		return badResponse(c.name, err)
	default:
		return &Error{Code: CodeError, Provider: c.name, Message: err.Error(), Err: err}
	}
}

// retryAfter reads Retry-After (seconds or an HTTP date) or the millisecond variant some
// providers send (retry-after-ms); zero when there is none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f > 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 {
			return 0
		}
		return time.Duration(f * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// errorDetail pulls the provider's message out of an error body; the shapes differ:
// {"error":{"message":...}} (OpenAI, Anthropic, Gemini, OpenRouter, Together),
// {"error":"..."} (Ollama), {"detail":"..."} (Replicate).
func errorDetail(body []byte) string {
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Detail  string          `json:"detail"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(doc.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(doc.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case doc.Detail != "":
			return doc.Detail
		case doc.Message != "":
			return doc.Message
		}
	}
	text := strings.TrimSpace(string(body))
	if len(text) > 300 {
		text = text[:300] + "…"
	}
	return text
}

// errHTTPStatus is what the net/http adapters return for a non-2xx answer; classify codes it
// from the recorded exchange.
type errHTTPStatus int

func (e errHTTPStatus) Error() string { return fmt.Sprintf("HTTP %d", int(e)) }
