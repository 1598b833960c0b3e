package serve_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// Every refusal as an attacker sends it: a web page's cross-origin request, a DNS-rebound
// Host, a form POST, a missing or wrong token, a huge body. Each is refused with its code
// and starts nothing.
func TestRefusals(t *testing.T) {
	e := newEnv(t, opts{token: "s3cret-token", public: "https://halo.example.com"})
	start := `{"pipeline": "Three", "inputs": {"x": "a"}}`
	cases := []struct {
		name   string
		method string
		path   string
		body   string
		hdr    []string
		status int
		code   string
	}{
		{"evil origin", "POST", "/api/runs", start, []string{"Origin", "https://evil.example"}, 403, "FORBIDDEN_ORIGIN"},
		{"null origin", "POST", "/api/runs", start, []string{"Origin", "null"}, 403, "FORBIDDEN_ORIGIN"},
		{"origin of another machine", "GET", "/api/runs", "", []string{"Origin", "http://10.0.0.7:8080"}, 403, "FORBIDDEN_ORIGIN"},
		{"public origin over http", "GET", "/api/runs", "", []string{"Origin", "http://halo.example.com"}, 403, "FORBIDDEN_ORIGIN"},
		{"rebound host", "GET", "/api/runs", "", []string{"Host", "evil.example"}, 403, "FORBIDDEN_HOST"},
		{"rebound host with port", "GET", "/api/pipelines", "", []string{"Host", "attacker.test:80"}, 403, "FORBIDDEN_HOST"},
		{"form post", "POST", "/api/runs", "pipeline=Three", []string{"Content-Type", "application/x-www-form-urlencoded"}, 403, "FORBIDDEN_CONTENT_TYPE"},
		{"text post", "POST", "/api/runs", start, []string{"Content-Type", "text/plain"}, 403, "FORBIDDEN_CONTENT_TYPE"},
		{"no content type", "POST", "/api/runs", start, []string{"Content-Type", ""}, 403, "FORBIDDEN_CONTENT_TYPE"},
		{"no token", "POST", "/api/runs", start, []string{"Authorization", ""}, 401, "UNAUTHORIZED"},
		{"wrong token", "GET", "/api/runs", "", []string{"Authorization", "Bearer s3cret-tokem"}, 401, "UNAUTHORIZED"},
		{"basic auth", "GET", "/api/runs", "", []string{"Authorization", "Basic czNjcmV0LXRva2Vu"}, 401, "UNAUTHORIZED"},
		{"token prefix", "GET", "/api/runs", "", []string{"Authorization", "Bearer s3cret"}, 401, "UNAUTHORIZED"},
		{"metrics without token", "GET", "/metrics", "", []string{"Authorization", ""}, 401, "UNAUTHORIZED"},
		{"events without token", "GET", "/api/runs/x/events", "", []string{"Authorization", "", "Accept", "text/event-stream"}, 401, "UNAUTHORIZED"},
		{"huge body", "POST", "/api/runs", `{"pipeline": "Three", "inputs": {"x": "` + strings.Repeat("a", 2<<20) + `"}}`, nil, 413, "REQUEST_TOO_LARGE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var body any
			if c.body != "" {
				body = c.body
			}
			resp := e.req(c.method, c.path, body, c.hdr...)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), `"code":"`+c.code+`"`) {
				t.Errorf("status %d %s, want %d %s", resp.StatusCode, b, c.status, c.code)
			}
			if c.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	if list := e.do("GET", "/api/runs", nil, 200)["runs"].([]any); len(list) != 0 {
		t.Errorf("refused requests started runs: %v", list)
	}
	// What is allowed: the token as ?token=, the public origin and host, localhost.
	e.token = ""
	e.do("GET", "/api/runs?token=s3cret-token", nil, 200)
	e.token = "s3cret-token"
	e.do("GET", "/api/runs", nil, 200, "Origin", "https://halo.example.com", "Host", "halo.example.com")
	e.do("GET", "/api/runs", nil, 200, "Host", "localhost")
	e.do("GET", "/api/runs", nil, 200, "Origin", strings.Replace(e.http.URL, "127.0.0.1", "localhost", 1))
	// A local page on another port (seed 001: only an Origin other than localhost or
	// publicUrl is refused).
	e.do("GET", "/api/runs", nil, 200, "Origin", "http://127.0.0.1:5173")
	e.do("GET", "/api/runs", nil, 200, "Origin", "http://localhost:1")
	// The server keeps serving.
	e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 200)
	// /healthz answers a load balancer without token or host.
	resp := e.req("GET", "/healthz", nil, "Authorization", "", "Host", "10.1.2.3:8080")
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz: %d", resp.StatusCode)
	}
}

// /metrics counts runs by status, model calls, requests; the request log has one line per
// request and never the query (a ?token= would be in it) or an approval link's token.
func TestMetricsAndLog(t *testing.T) {
	var log syncBuffer
	e := newEnv(t, opts{token: "tok-123", log: &log})
	e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 200)
	e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Ask", "inputs": map[string]any{"x": "a"}}, 200)
	resp := e.req("GET", "/metrics", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`halo_runs_total{pipeline="Three",status="completed"} 1`,
		`halo_runs_total{pipeline="Ask",status="paused"} 1`,
		`halo_runs_running 0`,
		`halo_model_call_duration_seconds_count{model="openai/gpt-4o"} 4`,
		`halo_http_requests_total{code="200"}`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		fmt.Println(text)
	}
	e.token = ""
	e.do("GET", "/api/runs?token=tok-123", nil, 200)
	resp = e.req("GET", "/approve/abc.def", nil)
	resp.Body.Close()
	// The request log is written off the requests' path: a line follows its answer.
	logged := log.String()
	for deadline := time.Now().Add(10 * time.Second); strings.Count(logged, "request:") < 5 && time.Now().Before(deadline); logged = log.String() {
		time.Sleep(5 * time.Millisecond)
	}
	if strings.Contains(logged, "tok-123") || strings.Contains(logged, "abc.def") {
		t.Errorf("the log holds a token:\n%s", logged)
	}
	if n := strings.Count(logged, "request:"); n < 5 {
		t.Errorf("%d request lines:\n%s", n, logged)
	}
}
