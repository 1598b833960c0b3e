package httppkg

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/pkgmgr"
)

// A recorded request, as the fake server saw it.
type seen struct {
	Method, Path, RawPath, Query, Body, ContentType, Auth, Header string
}

func fake(t *testing.T, status int, reply string) (*httptest.Server, *[]seen) {
	t.Helper()
	var got []seen
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, string(b), r.Header.Get("Content-Type"), r.Header.Get("Authorization"), r.Header.Get("X-Api-Version")})
		if status == 429 {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(status)
		io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func provider(t *testing.T, manifest string) *pkgmgr.Provider {
	t.Helper()
	m, err := pkgmgr.ParseManifest([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Providers {
		return p
	}
	return nil
}

func acme(base, auth, body string) string {
	if body != "" {
		body = `"body":"` + body + `",`
	}
	return `{"name":"acme","version":"1.0.0","description":"d","providers":{"Acme":{"kind":"http","description":"d",
	"baseUrl":"` + base + `","auth":` + auth + `,` + body + `"headers":{"X-Api-Version":"2024-01"},
	"methods":[
	 {"name":"get_order","description":"d","effect":"read","http":{"method":"GET","path":"/orders/{id}"}},
	 {"name":"list_orders","description":"d","effect":"read","http":{"method":"GET","path":"/orders"}},
	 {"name":"cancel_order","description":"d","effect":"external","http":{"method":"POST","path":"/orders/{id}/cancel"},
	  "params":{"type":"object","properties":{"id":{"type":"string"},"reason":{"type":"string"}},"required":["id"]}},
	 {"name":"delete_order","description":"d","effect":"external","http":{"method":"DELETE","path":"/orders/{id}"}}
	]}}}`
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestRequests(t *testing.T) {
	srv, got := fake(t, 200, `{"id":"o 1"}`)
	spec := provider(t, acme(srv.URL+"/v2", `{"type":"bearer","env":"ACME_KEY"}`, ""))
	p, err := Open(spec, tool.Declaration{Name: "Shop", Provider: "Acme", Getenv: env(map[string]string{"ACME_KEY": "sk_env"})}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	calls := []struct {
		method, args string
		want         seen
	}{
		{"get_order", `{"id":"a/b c","expand":"items"}`, seen{Method: "GET", Path: "/v2/orders/a/b c", RawPath: "/v2/orders/a%2Fb%20c", Query: "expand=items", Auth: "Bearer sk_env", Header: "2024-01"}},
		{"list_orders", `{"limit":10,"status":["open","held"],"filter":{"min":5}}`, seen{Method: "GET", Path: "/v2/orders", RawPath: "/v2/orders", Query: "filter%5Bmin%5D=5&limit=10&status%5B0%5D=open&status%5B1%5D=held", Auth: "Bearer sk_env", Header: "2024-01"}},
		{"cancel_order", `{"id":"o1","reason":"dup"}`, seen{Method: "POST", Path: "/v2/orders/o1/cancel", RawPath: "/v2/orders/o1/cancel", Body: `{"reason":"dup"}`, ContentType: "application/json", Auth: "Bearer sk_env", Header: "2024-01"}},
		{"delete_order", `{"id":42}`, seen{Method: "DELETE", Path: "/v2/orders/42", RawPath: "/v2/orders/42", Auth: "Bearer sk_env", Header: "2024-01"}},
	}
	for i, c := range calls {
		out, err := p.Call(ctx, tool.Request{Method: c.method, Args: json.RawMessage(c.args)})
		if err != nil {
			t.Fatalf("%s: %v", c.method, err)
		}
		if string(out) != `{"id":"o 1"}` {
			t.Fatalf("%s returned %s", c.method, out)
		}
		if (*got)[i] != c.want {
			t.Errorf("%s sent\n %+v\nwant\n %+v", c.method, (*got)[i], c.want)
		}
	}
}

func TestFormBodyAndKeyFromDeclaration(t *testing.T) {
	srv, got := fake(t, 200, `{}`)
	spec := provider(t, acme(srv.URL, `{"type":"bearer","env":"ACME_KEY"}`, "form"))
	p, err := Open(spec, tool.Declaration{Provider: "Acme", Args: []any{"sk_positional"}, Getenv: env(nil)}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Call(context.Background(), tool.Request{Method: "cancel_order", Args: json.RawMessage(`{"id":"o1","reason":"dup","metadata":{"order":"A1","tags":["x","y"]},"amount":1000,"notify":true,"note":null}`)})
	if err != nil {
		t.Fatal(err)
	}
	r := (*got)[0]
	form, _ := url.ParseQuery(r.Body)
	want := url.Values{"reason": {"dup"}, "metadata[order]": {"A1"}, "metadata[tags][0]": {"x"}, "metadata[tags][1]": {"y"}, "amount": {"1000"}, "notify": {"true"}, "note": {""}}
	if r.ContentType != "application/x-www-form-urlencoded" || form.Encode() != want.Encode() || r.Auth != "Bearer sk_positional" {
		t.Fatalf("sent %+v", r)
	}
	// apiKey: wins over the environment too.
	p, _ = Open(spec, tool.Declaration{Provider: "Acme", Named: map[string]any{"apiKey": "sk_named"}, Getenv: env(map[string]string{"ACME_KEY": "sk_env"})}, srv.Client())
	p.Call(context.Background(), tool.Request{Method: "get_order", Args: json.RawMessage(`{"id":"1"}`)})
	if (*got)[1].Auth != "Bearer sk_named" {
		t.Fatalf("auth %q", (*got)[1].Auth)
	}
}

func TestAuthKinds(t *testing.T) {
	srv, _ := fake(t, 200, `{}`)
	var last *http.Request
	client := srv.Client()
	inner := client.Transport
	client.Transport = roundTrip(func(r *http.Request) (*http.Response, error) { last = r; return inner.RoundTrip(r) })
	tests := []struct {
		auth  string
		named map[string]any
		check func(*http.Request) bool
	}{
		{`{"type":"header","env":"K","name":"X-Key"}`, nil, func(r *http.Request) bool {
			return r.Header.Get("X-Key") == "k1" && r.Header.Get("Authorization") == ""
		}},
		{`{"type":"query","env":"K","name":"api_key"}`, nil, func(r *http.Request) bool { return r.URL.Query().Get("api_key") == "k1" }},
		{`{"type":"basic","env":["U","K"]}`, nil, func(r *http.Request) bool { u, pw, ok := r.BasicAuth(); return ok && u == "me@x" && pw == "k1" }},
		{`{"type":"basic","env":["U","K"]}`, map[string]any{"user": "other", "apiKey": "pw"}, func(r *http.Request) bool { u, pw, ok := r.BasicAuth(); return ok && u == "other" && pw == "pw" }},
		{`{"type":"none"}`, nil, func(r *http.Request) bool { return r.Header.Get("Authorization") == "" }},
	}
	for _, tt := range tests {
		p, err := Open(provider(t, acme(srv.URL, tt.auth, "")), tool.Declaration{Provider: "Acme", Named: tt.named, Getenv: env(map[string]string{"K": "k1", "U": "me@x"})}, client)
		if err != nil {
			t.Fatalf("%s: %v", tt.auth, err)
		}
		if _, err := p.Call(context.Background(), tool.Request{Method: "get_order", Args: json.RawMessage(`{"id":"1"}`)}); err != nil {
			t.Fatal(err)
		}
		if !tt.check(last) {
			t.Errorf("%s: request %v %v", tt.auth, last.URL, last.Header)
		}
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestTemplatesAndConfigErrors(t *testing.T) {
	spec := provider(t, acme("https://{{site}}.example.net/api", `{"type":"bearer","env":"K"}`, ""))
	tests := []struct {
		d    tool.Declaration
		want string
	}{
		{tool.Declaration{Provider: "Acme", Getenv: env(map[string]string{"K": "k"})}, "needs site:"},
		{tool.Declaration{Provider: "Acme", Named: map[string]any{"site": "evil.com/x?"}, Getenv: env(map[string]string{"K": "k"})}, "letters, digits"},
		{tool.Declaration{Provider: "Acme", Named: map[string]any{"site": "acme"}, Getenv: env(nil)}, "needs a key: set K"},
		{tool.Declaration{Provider: "Acme", Named: map[string]any{"site": "acme", "baseUrl": "https://evil"}, Getenv: env(map[string]string{"K": "k"})}, "unknown option baseUrl"},
		{tool.Declaration{Provider: "Acme", Args: []any{"a", "b"}, Named: map[string]any{"site": "acme"}}, "at most one positional"},
	}
	for _, tt := range tests {
		_, err := Open(spec, tt.d, http.DefaultClient)
		if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: want TOOL_CONFIG %q, got %v", tt.d.Named, tt.want, err)
		}
	}
	p, err := Open(spec, tool.Declaration{Provider: "Acme", Named: map[string]any{"site": "acme-1.eu"}, Getenv: env(map[string]string{"K": "k"})}, http.DefaultClient)
	if err != nil || p.base.String() != "https://acme-1.eu.example.net/api" {
		t.Fatalf("%v %v", p, err)
	}
}

func TestArgumentErrorsAndReplies(t *testing.T) {
	srv, got := fake(t, 200, "")
	spec := provider(t, acme(srv.URL+"/v2", `{"type":"none"}`, ""))
	p, err := Open(spec, tool.Declaration{Provider: "Acme"}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, args := range []string{`{}`, `{"id":null}`, `{"id":".."}`, `{"id":"."}`, `{"id":""}`, `{"id":{"a":1}}`, `[1]`} {
		_, err := p.Call(ctx, tool.Request{Method: "get_order", Args: json.RawMessage(args)})
		if errcode.Code(err) != tool.CodeToolArgument {
			t.Errorf("args %s: want TOOL_ARGUMENT, got %v", args, err)
		}
	}
	if len(*got) != 0 {
		t.Fatalf("refused calls reached the server: %+v", *got)
	}
	if _, err := p.Call(ctx, tool.Request{Method: "nope"}); errcode.Code(err) != tool.CodeUnknownMethod {
		t.Fatalf("unknown method: %v", err)
	}
	// A value that would climb out of the base URL once decoded is refused.
	if _, err := p.Call(ctx, tool.Request{Method: "delete_order", Args: json.RawMessage(`{"id":"../../admin"}`)}); errcode.Code(err) != tool.CodeToolArgument || !strings.Contains(err.Error(), "would leave") {
		t.Fatalf("climbing path: %v", err)
	}
	out, err := p.Call(ctx, tool.Request{Method: "delete_order", Args: json.RawMessage(`{"id":"a/b"}`)})
	if err != nil || string(out) != `{"ok":true,"status":200}` {
		t.Fatalf("empty reply: %s %v", out, err)
	}
	if r := (*got)[0]; r.RawPath != "/v2/orders/a%2Fb" {
		t.Fatalf("an encoded path left its segment: %+v", r)
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, tt := range []struct {
		status    int
		retryable bool
	}{{400, false}, {404, false}, {408, true}, {429, true}, {500, true}, {503, true}} {
		srv, _ := fake(t, tt.status, `{"error":{"message":"nope"}}`)
		p, _ := Open(provider(t, acme(srv.URL, `{"type":"none"}`, "")), tool.Declaration{Provider: "Acme"}, srv.Client())
		_, err := p.Call(context.Background(), tool.Request{Method: "get_order", Args: json.RawMessage(`{"id":"1"}`)})
		var te *tool.Error
		if !asToolError(err, &te) || te.Code != tool.CodeHTTPError || te.Status != tt.status || te.Retryable != tt.retryable || string(te.Detail) != `{"error":{"message":"nope"}}` {
			t.Errorf("status %d: %#v", tt.status, err)
		}
		if tt.status == 429 && te.RetryAfter.Seconds() != 7 {
			t.Errorf("Retry-After: %v", te.RetryAfter)
		}
	}
	// A server that is down is a retryable tool error.
	srv, _ := fake(t, 200, "")
	srv.Close()
	p, _ := Open(provider(t, acme(srv.URL, `{"type":"query","env":"K","name":"key"}`, "")), tool.Declaration{Provider: "Acme", Args: []any{"secret"}}, srv.Client())
	_, err := p.Call(context.Background(), tool.Request{Method: "get_order", Args: json.RawMessage(`{"id":"1"}`)})
	if !tool.IsRetryable(err) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("down: %v", err)
	}
}

func asToolError(err error, te **tool.Error) bool {
	e, ok := err.(*tool.Error)
	*te = e
	return ok
}

func TestMethodsDefaultParams(t *testing.T) {
	ms := Methods(provider(t, acme("https://x.example", `{"type":"none"}`, "")))
	if string(ms[0].Params) != `{"additionalProperties":true,"properties":{"id":{"type":"string"}},"required":["id"],"type":"object"}` || ms[0].Effect != tool.Read {
		t.Fatalf("%s %s", ms[0].Params, ms[0].Effect)
	}
	args, err := tool.BindArgs(ms[0], []any{"cus_123"}, nil)
	if err != nil || string(args) != `{"id":"cus_123"}` {
		t.Fatalf("a positional value fills the first path parameter: %s %v", args, err)
	}
}

// A hostile or broken service cannot make the host hold more than a declaration allows: a
// reply over max_result_bytes: (16 MiB by default) or nested past tool.MaxDepth is TOOL_LIMIT,
// as for every other kind of tool, and the body is not read past the limit.
func TestReplyLimits(t *testing.T) {
	huge := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(`"` + strings.Repeat("x", 1<<16) + `",`)
		io.WriteString(w, "[")
		for i := 0; i < 1<<10; i++ { // 64 MiB unless the reader stops
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(huge.Close)
	ctx := context.Background()
	open := func(url string, named map[string]any) *Provider {
		t.Helper()
		p, err := Open(provider(t, acme(url, `{"type":"none"}`, "")), tool.Declaration{Name: "Shop", Provider: "Acme", Named: named}, huge.Client())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := open(huge.URL, nil).Call(ctx, tool.Request{Method: "list_orders", Args: json.RawMessage(`{}`)})
	if errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "over the limit of 16 MiB") {
		t.Errorf("a 64 MiB reply: %v, want TOOL_LIMIT", err)
	}
	_, err = open(huge.URL, map[string]any{"max_result_bytes": float64(1000)}).Call(ctx, tool.Request{Method: "list_orders", Args: json.RawMessage(`{}`)})
	if errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "over the limit of 1000 bytes") {
		t.Errorf("a reply over max_result_bytes: %v, want TOOL_LIMIT", err)
	}

	deep, _ := fake(t, 200, strings.Repeat("[", 100)+strings.Repeat("]", 100))
	_, err = open(deep.URL, nil).Call(ctx, tool.Request{Method: "list_orders", Args: json.RawMessage(`{}`)})
	if errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "more than 64 deep") {
		t.Errorf("a reply nested 100 deep: %v, want TOOL_LIMIT", err)
	}
	fine, _ := fake(t, 200, strings.Repeat("[", 64)+strings.Repeat("]", 64))
	if _, err = open(fine.URL, nil).Call(ctx, tool.Request{Method: "list_orders", Args: json.RawMessage(`{}`)}); err != nil {
		t.Errorf("a reply nested 64 deep: %v", err)
	}

	_, err = Open(provider(t, acme(fine.URL, `{"type":"none"}`, "")), tool.Declaration{Name: "Shop", Provider: "Acme", Named: map[string]any{"max_result_bytes": "lots"}}, fine.Client())
	if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "max_result_bytes") {
		t.Errorf("max_result_bytes: \"lots\": %v, want TOOL_CONFIG", err)
	}
}
