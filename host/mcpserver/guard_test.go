package mcpserver

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestGuard attacks /mcp as a web page or another program on the machine would: each check
// in the seed's order (Origin, then Host, then content type: 403), then the token (401).
// Nothing refused starts a run.
func TestGuard(t *testing.T) {
	f := newFixture(t, flow, greeter())
	const token = "s3cret-token-value"
	base := f.http(t, HTTPConfig{Token: token, PublicURL: "https://halo.example.com"})
	u, _ := url.Parse(base)
	port := u.Port()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`
	type req struct {
		name   string
		method string
		host   string
		origin []string
		ctype  string
		auth   string
		query  string
		status int
		code   string
	}
	good := req{method: "POST", ctype: "application/json", auth: "Bearer " + token}
	with := func(name string, edit func(r *req)) req {
		r := good
		r.name = name
		edit(&r)
		return r
	}
	cases := []req{
		with("a foreign page", func(r *req) { r.origin = []string{"https://evil.example"}; r.status, r.code = 403, CodeForbiddenOrigin }),
		with("an opaque origin", func(r *req) { r.origin = []string{"null"}; r.status, r.code = 403, CodeForbiddenOrigin }),
		with("a name that starts like localhost", func(r *req) {
			r.origin = []string{"http://localhost.evil.example:" + port}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("a loopback address that is not 127.0.0.1", func(r *req) {
			r.origin = []string{"http://127.0.0.2:" + port}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("a local origin with a path", func(r *req) {
			r.origin = []string{"http://localhost:" + port + "/x"}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("a local origin of another scheme", func(r *req) {
			r.origin = []string{"file://localhost"}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("publicUrl's host over http", func(r *req) {
			r.origin = []string{"http://halo.example.com"}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("two origins", func(r *req) {
			r.origin = []string{"http://localhost:" + port, "https://evil.example"}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("origin before host", func(r *req) {
			r.origin, r.host = []string{"https://evil.example"}, "evil.example"
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("DNS rebinding", func(r *req) { r.host = "evil.example:" + port; r.status, r.code = 403, CodeForbiddenHost }),
		with("rebinding with the page's own origin", func(r *req) {
			r.host, r.origin = "evil.example:"+port, []string{"http://evil.example:" + port}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		with("publicUrl on another port", func(r *req) { r.host = "halo.example.com:8443"; r.status, r.code = 403, CodeForbiddenHost }),
		with("host before content type", func(r *req) {
			r.host, r.ctype = "evil.example", "text/plain"
			r.status, r.code = 403, CodeForbiddenHost
		}),
		with("a form", func(r *req) {
			r.ctype = "application/x-www-form-urlencoded"
			r.status, r.code = 403, CodeForbiddenContentType
		}),
		with("text/plain", func(r *req) { r.ctype = "text/plain"; r.status, r.code = 403, CodeForbiddenContentType }),
		with("no content type", func(r *req) { r.ctype = ""; r.status, r.code = 403, CodeForbiddenContentType }),
		with("content type before token", func(r *req) {
			r.ctype, r.auth = "text/plain", ""
			r.status, r.code = 403, CodeForbiddenContentType
		}),
		with("no token", func(r *req) { r.auth = ""; r.status, r.code = 401, CodeUnauthorized }),
		with("wrong token", func(r *req) { r.auth = "Bearer nope"; r.status, r.code = 401, CodeUnauthorized }),
		with("a prefix of the token", func(r *req) { r.auth = "Bearer " + token[:5]; r.status, r.code = 401, CodeUnauthorized }),
		with("the token and more", func(r *req) { r.auth = "Bearer " + token + "x"; r.status, r.code = 401, CodeUnauthorized }),
		with("basic auth", func(r *req) { r.auth = "Basic " + token; r.status, r.code = 401, CodeUnauthorized }),
		with("wrong query token", func(r *req) { r.auth, r.query = "", "token=nope"; r.status, r.code = 401, CodeUnauthorized }),
		with("GET from a foreign page", func(r *req) {
			r.method, r.origin = "GET", []string{"https://evil.example"}
			r.status, r.code = 403, CodeForbiddenOrigin
		}),
		// Allowed.
		with("no origin (a program, not a page)", func(r *req) { r.status = 200 }),
		with("this server's page", func(r *req) { r.origin = []string{"http://localhost:" + port}; r.status = 200 }),
		with("this server by IP", func(r *req) { r.origin = []string{"http://127.0.0.1:" + port}; r.status = 200 }),
		// A local page on another port is a page of this machine (seed 001; the MCP
		// conformance suite's localhost-host-valid-accepted).
		with("another local port", func(r *req) { r.origin = []string{"http://localhost:1"}; r.status = 200 }),
		with("127.0.0.1 on another port", func(r *req) { r.origin = []string{"http://127.0.0.1:5173"}; r.status = 200 }),
		with("IPv6 loopback on another port", func(r *req) { r.origin = []string{"https://[::1]:8443"}; r.status = 200 }),
		with("localhost without a port", func(r *req) { r.origin = []string{"http://localhost"}; r.status = 200 }),
		with("publicUrl", func(r *req) {
			r.origin, r.host = []string{"https://halo.example.com"}, "halo.example.com"
			r.status = 200
		}),
		with("localhost by name", func(r *req) { r.host = "localhost:" + port; r.status = 200 }),
		with("IPv6 loopback", func(r *req) { r.host = "[::1]:" + port; r.status = 200 }),
		with("charset", func(r *req) { r.ctype = "application/json; charset=utf-8"; r.status = 200 }),
		with("lower-case bearer", func(r *req) { r.auth = "bearer " + token; r.status = 200 }),
		with("query token", func(r *req) { r.auth, r.query = "", "token="+token; r.status = 200 }),
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := base
			if tc.query != "" {
				target += "?" + tc.query
			}
			var body io.Reader
			if tc.method == "POST" {
				body = strings.NewReader(call)
			}
			r, _ := http.NewRequest(tc.method, target, body)
			if tc.host != "" {
				r.Host = tc.host
			}
			for _, o := range tc.origin {
				r.Header.Add("Origin", o)
			}
			if tc.ctype != "" {
				r.Header.Set("Content-Type", tc.ctype)
			}
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.code) {
				t.Errorf("%d %s; want %d %s", resp.StatusCode, b, tc.status, tc.code)
			}
			if tc.status == 200 && !strings.Contains(string(b), "Hello, Ada!") {
				t.Errorf("allowed request: %s", b)
			}
			if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
			if strings.Contains(string(b), token) {
				t.Error("the answer shows the token")
			}
		})
	}
	allowed := 0
	for _, tc := range cases {
		if tc.status == 200 {
			allowed++
		}
	}
	if got := len(f.records(t)); got != allowed {
		t.Errorf("%d runs, want %d (one per allowed request)", got, allowed)
	}
}

// TestGuardConfig: a publicUrl that is not an http(s) URL with a host is refused.
func TestGuardConfig(t *testing.T) {
	f := newFixture(t, flow, greeter())
	for _, bad := range []string{"halo.example.com", "ftp://halo.example.com", "https://", "://x"} {
		if _, err := f.srv.HTTPHandler(HTTPConfig{PublicURL: bad}); err == nil || !strings.Contains(err.Error(), "publicUrl") {
			t.Errorf("publicUrl %q: %v", bad, err)
		}
	}
}
