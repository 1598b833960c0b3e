package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Stable codes of the HTTP refusals, in the JSON-RPC error's message.
const (
	CodeForbiddenOrigin      = "FORBIDDEN_ORIGIN"
	CodeForbiddenHost        = "FORBIDDEN_HOST"
	CodeForbiddenContentType = "FORBIDDEN_CONTENT_TYPE"
	CodeUnauthorized         = "UNAUTHORIZED"
)

// maxBatch bounds the messages of one batch.
const maxBatch = 256

// HTTPConfig is what the HTTP handler checks before a request reaches MCP.
type HTTPConfig struct {
	// Token, when not empty, is the API token (HALO_SERVE_TOKEN) every request must carry,
	// as `Authorization: Bearer <token>` or `?token=`.
	Token string
	// PublicURL is the address people reach the server at (halo.json's publicUrl), when it
	// is not localhost: its origin and host are allowed beside localhost's.
	PublicURL string
	// Addr is the address the server listens on (host:port); empty means the local address
	// of each request's connection.
	Addr string
}

// A guard applies the checks of HTTPConfig.
type guard struct {
	token  [32]byte
	hasTok bool
	public *url.URL
	addr   string
}

func newGuard(cfg HTTPConfig) (*guard, error) {
	g := &guard{addr: cfg.Addr}
	if h, _, err := net.SplitHostPort(cfg.Addr); err == nil && (h == "" || isUnspecified(h)) {
		g.addr = "" // listening on every address: each connection's own local address counts
	}
	if cfg.Token != "" {
		g.token, g.hasTok = sha256.Sum256([]byte(cfg.Token)), true
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("publicUrl %q: want an http:// or https:// URL with a host", cfg.PublicURL)
		}
		g.public = u
	}
	return g, nil
}

// Guard wraps next in the checks /mcp makes, in this order: a request whose Origin is not a
// local page's (host localhost, 127.0.0.1 or [::1], on any port), this server's own (the
// address it listens on) or publicUrl's is refused with 403; so is one whose Host is not localhost, 127.0.0.1, [::1], the
// address the server listens on, or publicUrl's host (against DNS rebinding); so is a POST
// that is not Content-Type application/json (a form a web page could send). Then, when a
// token is set, a request without it gets 401 (compared in constant time). halo serve's
// other endpoints make the same checks through a Checker.
func Guard(cfg HTTPConfig, next http.Handler) (http.Handler, error) {
	g, err := newGuard(cfg)
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := g.check(r, CheckOptions{}); ref != nil {
			if ref.Status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="halo"`)
			}
			writeRefusal(w, ref.Status, nil, mcp.INVALID_REQUEST, ref.Message+" ["+ref.Code+"]")
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// A Checker makes Guard's checks for handlers that answer refusals their own way: halo
// serve's API and approval pages share /mcp's browser checks and token through it.
type Checker struct{ g *guard }

// NewChecker makes the checks of cfg.
func NewChecker(cfg HTTPConfig) (*Checker, error) {
	g, err := newGuard(cfg)
	if err != nil {
		return nil, err
	}
	return &Checker{g: g}, nil
}

// CheckOptions loosen Guard's checks for one kind of request.
type CheckOptions struct {
	// Form also lets a POST be an HTML form (application/x-www-form-urlencoded): an
	// approval page's buttons, whose link is the capability.
	Form bool
	// NoToken skips the token check, for requests that carry a capability of their own.
	NoToken bool
}

// A Refusal is a request the checks refused: its status (403 or 401), a stable code and a
// message.
type Refusal struct {
	Status        int
	Code, Message string
}

// Check returns the first check r fails, or nil.
func (c *Checker) Check(r *http.Request, opts CheckOptions) *Refusal {
	return c.g.check(r, opts)
}

func (g *guard) check(r *http.Request, opts CheckOptions) *Refusal {
	local := g.addr
	if local == "" {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
			local = a.String()
		}
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		if len(origins) > 1 || !g.originAllowed(origins[0], local) {
			return &Refusal{http.StatusForbidden, CodeForbiddenOrigin, fmt.Sprintf("requests from origin %q are refused: only pages of this server may call it", truncate(strings.Join(origins, ", "), 200))}
		}
	}
	if !g.hostAllowed(r.Host, local) {
		return &Refusal{http.StatusForbidden, CodeForbiddenHost, fmt.Sprintf("Host %q is not this server's name: use localhost, the address it listens on, or publicUrl", truncate(r.Host, 200))}
	}
	if ct := r.Header.Get("Content-Type"); r.Method == http.MethodPost && ct != "application/json" {
		// (As clients send it most of the time, without parameters: parsing it makes a map.)
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && (!opts.Form || mt != "application/x-www-form-urlencoded")) {
			return &Refusal{http.StatusForbidden, CodeForbiddenContentType, "a POST must be Content-Type: application/json"}
		}
	}
	if !opts.NoToken && g.hasTok && !g.tokenOK(r) {
		return &Refusal{http.StatusUnauthorized, CodeUnauthorized, "this server needs its API token: Authorization: Bearer <token> (or ?token=)"}
	}
	return nil
}

func (g *guard) tokenOK(r *http.Request) bool {
	var given string
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		given = strings.TrimSpace(tok)
	} else {
		given = r.URL.Query().Get("token")
	}
	if given == "" {
		return false
	}
	sum := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(sum[:], g.token[:]) == 1
}

func isLoopbackName(host string) bool {
	switch strings.ToLower(strings.TrimSuffix(host, ".")) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// hostPort splits a Host header or URL host, filling in the scheme's default port.
func hostPort(hostport, scheme string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = strings.Trim(hostport, "[]"), ""
	}
	if p == "" {
		switch scheme {
		case "https":
			p = "443"
		default:
			p = "80"
		}
	}
	return strings.ToLower(h), p
}

func (g *guard) hostAllowed(hostHeader, local string) bool {
	if hostHeader == "" {
		return false
	}
	h, p := hostPort(hostHeader, "http")
	if isLoopbackName(h) {
		return true
	}
	if local != "" {
		lh, lp := hostPort(local, "http")
		if lh != "" && h == lh && p == lp && !isUnspecified(lh) {
			return true
		}
	}
	if g.public != nil {
		// A Host header says no scheme: without a port it is the public URL's default one.
		ph, pp := hostPort(g.public.Host, g.public.Scheme)
		if _, _, err := net.SplitHostPort(hostHeader); err != nil {
			p = pp
		}
		if h == ph && p == pp {
			return true
		}
	}
	return false
}

func isUnspecified(h string) bool {
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsUnspecified()
}

func (g *guard) originAllowed(origin, local string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" {
		return false
	}
	h, p := hostPort(u.Host, u.Scheme)
	if g.public != nil {
		ph, pp := hostPort(g.public.Host, g.public.Scheme)
		if u.Scheme == g.public.Scheme && h == ph && p == pp {
			return true
		}
	}
	if isLoopbackName(h) {
		// A page of this machine, on any port: seed 001 refuses an Origin "other than
		// localhost or publicUrl", and the token still guards what such a page may do.
		return true
	}
	if local != "" {
		lh, lp := hostPort(local, "http")
		return lh != "" && h == lh && p == lp && !isUnspecified(lh)
	}
	return false
}

func writeRefusal(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorMessage(id, code, msg))
}

// HTTPHandler is /mcp: MCP over stateless Streamable HTTP, behind Guard's checks. Each POST
// is answered with one JSON document (a batch with an array); nothing is streamed, no session
// is kept, and GET and DELETE get 405. A request body over MaxRequestBytes gets 413; more
// than MaxCalls requests at once are refused until some finish. A client that drops a
// request cancels the run it started.
func (s *Server) HTTPHandler(cfg HTTPConfig) (http.Handler, error) {
	logger := slog.New(slog.NewTextHandler(s.log.StandardWriter(&hclog.StandardLoggerOptions{InferLevels: true}), &slog.HandlerOptions{Level: slog.LevelWarn}))
	st := server.NewStreamableHTTPServer(s.mcp,
		server.WithStateLess(true),
		server.WithDisableStreaming(true),
		server.WithStreamableHTTPLogger(logger),
	)
	h := &httpHandler{s: s, st: st, slots: make(chan struct{}, s.cfg.MaxCalls)}
	return Guard(cfg, h)
}

type httpHandler struct {
	s     *Server
	st    *server.StreamableHTTPServer
	slots chan struct{}
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeRefusal(w, http.StatusMethodNotAllowed, nil, mcp.INVALID_REQUEST, "this MCP endpoint is stateless and answers POST only: no event stream, no session")
		return
	}
	body, err := readBody(w, r, h.s.cfg.MaxRequestBytes)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeRefusal(w, http.StatusRequestEntityTooLarge, nil, mcp.INVALID_REQUEST, fmt.Sprintf("the request is over the limit of %d bytes [%s]", h.s.cfg.MaxRequestBytes, CodeTooLarge))
			return
		}
		writeRefusal(w, http.StatusBadRequest, nil, mcp.PARSE_ERROR, "cannot read the request body: "+err.Error())
		return
	}
	ctx := r.Context()
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		h.batch(ctx, w, r, trimmed)
		return
	}
	select {
	case h.slots <- struct{}{}:
		defer func() { <-h.slots }()
	default:
		writeRefusal(w, http.StatusServiceUnavailable, nil, mcp.INTERNAL_ERROR, fmt.Sprintf("%d requests are being served, the most at once; try again when one ends [%s]", h.s.cfg.MaxCalls, CodeBusy))
		return
	}
	h.handle(ctx, &jsonWriter{w: w}, r, body)
}

// readBody reads r's body, at most max bytes (more is a *http.MaxBytesError): into a buffer
// of its length when the request says it, as clients do, or as io.ReadAll reads.
func readBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, max)
	if n := r.ContentLength; n > 0 && n <= max {
		// net/http ends the body at its Content-Length: one byte more is room to read the
		// end, not a byte of the body.
		b := make([]byte, n+1)
		got, err := io.ReadFull(body, b)
		if got == int(n) && err == io.ErrUnexpectedEOF {
			return b[:got], nil
		}
		if err == nil {
			err = errors.New("the body is longer than its Content-Length")
		}
		return nil, err
	}
	return io.ReadAll(body)
}

// handle answers one message: a tools/call the fast path can serve (see fastcall.go) itself,
// anything else through mcp-go.
func (h *httpHandler) handle(ctx context.Context, w server.HTTPResponseWriter, r *http.Request, msg []byte) {
	if fastHTTPVersion(r.Header) {
		if fc, ok := h.s.parseFastCall(msg); ok {
			answer := h.s.serveFast(ctx, fc)
			if ctx.Err() != nil {
				return // the client has gone (mcp-go answers nothing then either)
			}
			b, err := marshalMessage(answer)
			if err != nil {
				h.s.log.Error("cannot encode an answer", "error", err)
				writeRefusal(w, http.StatusInternalServerError, fc.rawID, mcp.INTERNAL_ERROR, "cannot encode the answer: "+err.Error())
				return
			}
			// As mcp-go writes an answer: 200, JSON, a newline after it.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(append(b, '\n'))
			return
		}
	}
	h.st.Handle(w, &server.HTTPRequest{Method: r.Method, URL: r.URL, Header: r.Header, Body: msg, Context: ctx})
}

// batch answers a JSON array of messages with the array of their responses, the requests
// served concurrently; a batch of notifications only gets 202.
func (h *httpHandler) batch(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte) {
	var msgs []json.RawMessage
	if err := json.Unmarshal(body, &msgs); err != nil {
		writeRefusal(w, http.StatusOK, nil, mcp.PARSE_ERROR, "the batch is not a JSON array: "+err.Error())
		return
	}
	if len(msgs) == 0 || len(msgs) > maxBatch {
		writeRefusal(w, http.StatusOK, nil, mcp.INVALID_REQUEST, fmt.Sprintf("a batch holds 1 to %d messages, not %d", maxBatch, len(msgs)))
		return
	}
	out := make([]json.RawMessage, len(msgs))
	var wg sync.WaitGroup
	for i, m := range msgs {
		select {
		case h.slots <- struct{}{}:
		default:
			out[i] = refusalJSON(m, mcp.INTERNAL_ERROR, fmt.Sprintf("%d requests are being served, the most at once; try again when one ends [%s]", h.s.cfg.MaxCalls, CodeBusy))
			continue
		}
		wg.Go(func() {
			defer func() { <-h.slots }()
			bw := &bufferWriter{header: http.Header{}}
			h.handle(ctx, bw, r, m)
			out[i] = bw.message(m)
		})
	}
	wg.Wait()
	var buf bytes.Buffer
	buf.WriteByte('[')
	n := 0
	for _, o := range out {
		if o == nil {
			continue
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		buf.Write(o)
		n++
	}
	buf.WriteByte(']')
	if n == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(buf.Bytes(), '\n'))
}

// refusalJSON is a JSON-RPC error answering msg (by its id, when it has one).
func refusalJSON(msg json.RawMessage, code int, text string) json.RawMessage {
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(msg, &head)
	b, _ := json.Marshal(errorMessage(head.ID, code, text))
	return b
}

// jsonWriter is the response writer mcp-go sees: it cannot stream, so every answer is one
// JSON document.
type jsonWriter struct{ w http.ResponseWriter }

func (j *jsonWriter) Header() http.Header         { return j.w.Header() }
func (j *jsonWriter) WriteHeader(status int)      { j.w.WriteHeader(status) }
func (j *jsonWriter) Write(p []byte) (int, error) { return j.w.Write(p) }
func (j *jsonWriter) Flush()                      {}
func (j *jsonWriter) CanStream() bool             { return false }

// bufferWriter keeps one batch element's answer.
type bufferWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferWriter) Header() http.Header { return b.header }
func (b *bufferWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}
func (b *bufferWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
func (b *bufferWriter) Flush()          {}
func (b *bufferWriter) CanStream() bool { return false }

// message is the element's response: nil for a notification (202), the JSON answer, or a
// refusal mcp-go wrote as text made a JSON-RPC error.
func (b *bufferWriter) message(req json.RawMessage) json.RawMessage {
	body := bytes.TrimSpace(b.body.Bytes())
	if b.status == http.StatusAccepted || len(body) == 0 {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(b.header.Get("Content-Type")); mt == "application/json" && json.Valid(body) {
		return append(json.RawMessage(nil), body...)
	}
	return refusalJSON(req, mcp.INVALID_REQUEST, string(body))
}

// HasToken reports whether requests must carry a token.
func (c *Checker) HasToken() bool { return c.g.hasTok }

// Authenticated reports whether r carries the token (Authorization: Bearer, or ?token=), or
// given, when not "", is the token (a credential of its own, such as Studio's cookie). With
// no token set, every request is. halo serve's connection limits count by it.
func (c *Checker) Authenticated(r *http.Request, given string) bool {
	g := c.g
	if !g.hasTok {
		return true
	}
	if given != "" {
		sum := sha256.Sum256([]byte(given))
		if subtle.ConstantTimeCompare(sum[:], g.token[:]) == 1 {
			return true
		}
	}
	return g.tokenOK(r)
}
