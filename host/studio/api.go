package studio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// An apiError is the API's answer to a request it refused or could not do: its status and
// its {"error": {"code", "message"}}.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%s [%s]", e.Message, e.Code) }

// A caller calls the API in-process for one browser request: with that request's context,
// Host, Origin and remote address, so the API's own checks (Origin, Host, token) judge the
// person behind the page, and with the token the page's cookie holds.
type caller struct {
	api   http.Handler
	r     *http.Request
	token string
}

// call sends method path (with body as JSON when not nil) and decodes a 2xx answer into out.
func (c caller) call(method, path string, body, out any) *apiError {
	status, raw := c.do(c.r.Context(), method, path, body, nil)
	if status/100 != 2 {
		return errorOf(status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return &apiError{http.StatusBadGateway, "INTERNAL", "the API's answer could not be read: " + err.Error()}
		}
	}
	return nil
}

// do sends one request to the API and returns its status and body. hdr adds headers.
func (c caller) do(ctx context.Context, method, path string, body any, hdr http.Header) (int, []byte) {
	req := c.request(ctx, method, path, body, hdr)
	w := &capture{header: http.Header{}}
	c.api.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.status, w.body.Bytes()
}

// request makes the in-process request to the API.
func (c caller) request(ctx context.Context, method, path string, body any, hdr http.Header) *http.Request {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			b = []byte("null")
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		// path is made by Studio from escaped parts: it always parses.
		panic(fmt.Sprintf("studio: bad API path %q: %v", path, err))
	}
	req.Host = c.r.Host
	req.RemoteAddr = c.r.RemoteAddr
	req.TLS = c.r.TLS
	if o := c.r.Header.Values("Origin"); len(o) > 0 {
		req.Header["Origin"] = o
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	return req
}

func errorOf(status int, raw []byte) *apiError {
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
		return &apiError{status, "INTERNAL", fmt.Sprintf("the API answered %d %s", status, http.StatusText(status))}
	}
	return &apiError{status, body.Error.Code, body.Error.Message}
}

// capture keeps an in-process answer of the API.
type capture struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *capture) Header() http.Header { return c.header }
func (c *capture) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
}
func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.body.Write(p)
}

// The API's answers, as Studio reads them (docs/serve.md). Fields Studio does not show
// are left out; fields a newer API adds are ignored.

type pipelineInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	File        string `json:"file"`
	Params      []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"params"`
	Result      string          `json:"result"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type runSummary struct {
	RunID      string     `json:"runId"`
	Pipeline   string     `json:"pipeline"`
	Status     string     `json:"status"`
	Started    time.Time  `json:"started"`
	Updated    time.Time  `json:"updated"`
	Waiting    string     `json:"waitingFor"`
	Error      *errorInfo `json:"error"`
	Cost       float64    `json:"cost"`
	Violations int        `json:"violations"`
	TokensIn   int64      `json:"tokensIn"`
	TokensOut  int64      `json:"tokensOut"`
	Unpriced   bool       `json:"unpriced"`
}

type runPage struct {
	Runs []runSummary `json:"runs"`
	Next string       `json:"next"`
}

type errorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	At      string `json:"at"`
}

type usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

type callInfo struct {
	Kind       string  `json:"kind"`
	Target     string  `json:"target"`
	Agent      string  `json:"agent"`
	Model      string  `json:"model"`
	Usage      *usage  `json:"usage"`
	Cost       float64 `json:"cost"`
	DurationMs int64   `json:"durationMs"`
	Mocked     bool    `json:"mocked"`
	Error      string  `json:"error"`
	Unpriced   bool    `json:"unpriced"`
}

type violationInfo struct {
	Policy  string `json:"policy"`
	Rule    string `json:"rule"`
	Phase   string `json:"phase"`
	Message string `json:"message"`
	Agent   string `json:"agent"`
	Target  string `json:"target"`
}

type pauseInfo struct {
	WaitingFor string         `json:"waitingFor"`
	Question   any            `json:"question"`
	Named      map[string]any `json:"named"`
}

type meta struct {
	RunID      string          `json:"runId"`
	Cost       float64         `json:"cost"`
	Calls      []callInfo      `json:"calls"`
	Violations []violationInfo `json:"violations"`
	Paused     *pauseInfo      `json:"paused"`
}

type runView struct {
	RunID    string         `json:"runId"`
	Pipeline string         `json:"pipeline"`
	File     string         `json:"file"`
	Status   string         `json:"status"`
	Inputs   map[string]any `json:"inputs"`
	Output   any            `json:"output"`
	Error    *errorInfo     `json:"error"`
	Meta     meta           `json:"meta"`
	Paused   *struct {
		WaitingFor  string    `json:"waitingFor"`
		Question    any       `json:"question"`
		Link        string    `json:"link"`
		LinkExpires time.Time `json:"linkExpires"`
	} `json:"paused"`
	Events  int       `json:"events"`
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
}

type event struct {
	Seq        int             `json:"seq"`
	Type       string          `json:"type"`
	Time       time.Time       `json:"time"`
	At         string          `json:"at"`
	Agent      string          `json:"agent"`
	Target     string          `json:"target"`
	Model      string          `json:"model"`
	Prompt     string          `json:"prompt"`
	Answer     string          `json:"answer"`
	ToolCalls  []string        `json:"toolCalls"`
	Step       int             `json:"step"`
	Args       json.RawMessage `json:"args"`
	Output     any             `json:"output"`
	Usage      *usage          `json:"usage"`
	Cost       float64         `json:"cost"`
	DurationMs int64           `json:"durationMs"`
	Mocked     bool            `json:"mocked"`
	Attempt    int             `json:"attempt"`
	Decision   string          `json:"decision"`
	Detail     string          `json:"detail"`
	Policy     string          `json:"policy"`
	Rule       string          `json:"rule"`
	Phase      string          `json:"phase"`
	Message    string          `json:"message"`
	Channel    string          `json:"channel"`
	Item       *int            `json:"item"`
	Arm        string          `json:"arm"`
	Status     string          `json:"status"`
	Error      *errorInfo      `json:"error"`
	Link       string          `json:"link"`
	System     string          `json:"system"`
	Result     string          `json:"result"`
	Unpriced   bool            `json:"unpriced"`
}

// streamWriter hands what the API writes to a pipe, for Studio to read as it comes: the
// API's event streams flush after each event.
type streamWriter struct {
	header http.Header
	status int
	pw     *io.PipeWriter
}

func (w *streamWriter) Header() http.Header { return w.header }
func (w *streamWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *streamWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.pw.Write(p)
}
func (w *streamWriter) Flush() {}

// listChanges follows the API's stream of the runs list's changes (GET /api/runs as
// server-sent events): a value on the channel each time the list may have changed (and once
// the stream has begun), the channel closed when the stream ends. The stream ends with ctx; the returned wait returns
// once its goroutines have.
func (c caller) listChanges(ctx context.Context) (<-chan struct{}, func()) {
	pr, pw := io.Pipe()
	w := &streamWriter{header: http.Header{}, pw: pw}
	req := c.request(ctx, "GET", "/api/runs", nil, http.Header{"Accept": {"text/event-stream"}})
	out := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		c.api.ServeHTTP(w, req)
		pw.Close()
	})
	wg.Go(func() {
		defer close(out)
		defer pr.Close() // a write after the reader stopped fails rather than blocks
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			// The stream's first line says it has begun: a change made before it, after the
			// caller's first look at the list, is not sent, so the list is read again.
			if line := sc.Text(); line == "event: changed" || strings.HasPrefix(line, "retry:") {
				select {
				case out <- struct{}{}:
				default: // one waiting is enough: the list is read whole
				}
			}
		}
	})
	return out, wg.Wait
}
