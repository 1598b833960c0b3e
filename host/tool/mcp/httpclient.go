package mcp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// httpClient returns the client a Streamable HTTP session sends its requests with: cfg's
// (or a plain one), with every request carrying the declaration's headers and every
// response body bounded.
//
// mcp-go sets the headers it is given on the requests of a call, but not on the DELETE that
// ends a session, so a server that wants apiKey: or headers: on every request refused the
// session's end; here each request gets those it lacks. mcp-go reads a response body whole
// (a JSON reply, or the event stream of one call), so a server could make the host hold
// any amount of memory; here a body that goes over the limit ends in an error, which the
// call that read it reports as TOOL_LIMIT.
func httpClient(cfg Config, headers map[string]string, max int) *http.Client {
	c := &http.Client{}
	if cfg.HTTPClient != nil {
		cp := *cfg.HTTPClient
		c = &cp
	}
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &limitTransport{base: base, headers: headers, max: int64(max)}
	return c
}

type limitTransport struct {
	base    http.RoundTripper
	headers map[string]string
	max     int64
}

func (lt *limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var missing []string
	for k := range lt.headers {
		if r.Header.Get(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		// A RoundTripper must not change the request it is given.
		r = r.Clone(r.Context())
		for _, k := range missing {
			r.Header.Set(k, lt.headers[k])
		}
	}
	resp, err := lt.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	hit, _ := r.Context().Value(limitKey{}).(*atomic.Bool)
	resp.Body = &limitedBody{rc: resp.Body, left: lt.max, hit: hit}
	return resp, nil
}

// errBodyTooLarge is what reading a response body past the limit returns.
var errBodyTooLarge = errors.New("the server's response is larger than the limit")

// limitedBody reads at most left bytes of a response body; reading more fails with
// errBodyTooLarge and sets hit, which the call that sent the request looks at.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
	hit  *atomic.Bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errBodyTooLarge
	}
	// Read one byte past the limit, to tell a body of exactly the limit from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		if b.hit != nil {
			b.hit.Store(true)
		}
		return 0, errBodyTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// limitKey is the context key of the flag a request's limitedBody sets.
type limitKey struct{}

// withLimitFlag returns a context whose HTTP responses report going over the limit in the
// flag returned.
func withLimitFlag(ctx context.Context) (context.Context, *atomic.Bool) {
	hit := new(atomic.Bool)
	return context.WithValue(ctx, limitKey{}, hit), hit
}
