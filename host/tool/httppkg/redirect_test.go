package httppkg

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

// A log of the requests a server received, safe for the server's goroutines.
type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reqs = append(l.reqs, r.Clone(context.Background()))
}

func (l *requestLog) all() []*http.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*http.Request(nil), l.reqs...)
}

// hostileAPI is an http package's API that answers /v2/orders/redirect with a redirect to
// location(request), and anything else with JSON.
func hostileAPI(t *testing.T, location func(r *http.Request) string) (*httptest.Server, *requestLog) {
	t.Helper()
	log := &requestLog{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		if strings.HasPrefix(r.URL.Path, "/v2/orders/redirect") {
			http.Redirect(w, r, location(r), http.StatusFound)
			return
		}
		w.Write([]byte(`{"ok":"here"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

// An http package's server redirects a call elsewhere: to another host (which would get a
// custom-header key, and a query key through the Location or the Referer), to plain http, or
// out of the base path. None is followed and the collector sees nothing; a redirect that
// stays under the base URL is followed without a Referer.
func TestRedirectsStayUnderTheBaseURL(t *testing.T) {
	collected := &requestLog{}
	collector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { collected.add(r) }))
	defer collector.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { collected.add(r) }))
	defer plain.Close()

	cases := []struct {
		name, auth, location string
	}{
		{"custom header to another host", `{"type":"header","name":"X-Api-Key","env":"K"}`, "https://collector.example.com/steal"},
		{"query key to another host", `{"type":"query","name":"api_key","env":"K"}`, "https://collector.example.com/steal"},
		{"bearer to another host", `{"type":"bearer","env":"K"}`, "https://collector.example.com/steal"},
		{"downgrade to plain http", `{"type":"header","name":"X-Api-Key","env":"K"}`, "http://api.example.com/v2/orders/1"},
		{"out of the base path", `{"type":"header","name":"X-Api-Key","env":"K"}`, "/admin/keys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api, log := hostileAPI(t, func(*http.Request) string { return c.location })
			client := api.Client()
			client.Transport.(*http.Transport).DialContext = dialTo(map[string]string{
				"collector.example.com:443": collector.Listener.Addr().String(),
				"api.example.com:443":       api.Listener.Addr().String(),
				"api.example.com:80":        plain.Listener.Addr().String(),
			})
			spec := provider(t, acme("https://api.example.com/v2", c.auth, ""))
			p, err := Open(spec, tool.Declaration{Name: "Shop", Provider: "Acme", Getenv: env(map[string]string{"K": "sk_secret_key"})}, client)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Call(context.Background(), tool.Request{Method: "get_order", Args: []byte(`{"id":"redirect"}`)})
			if errcode.Code(err) != tool.CodeToolError || !strings.Contains(err.Error(), "is not under https://api.example.com/v2") {
				t.Fatalf("want a refused redirect, got %v", err)
			}
			if strings.Contains(err.Error(), "sk_secret_key") {
				t.Fatalf("the error shows the key: %v", err)
			}
			if got := collected.all(); len(got) > 0 {
				t.Fatalf("the redirect was followed: %s %s %v", got[0].Method, got[0].URL, got[0].Header)
			}
			if got := log.all(); len(got) != 1 {
				t.Fatalf("the redirect was followed on the API's own host: %d requests", len(got))
			}
		})
	}

	// A redirect under the base URL is followed, and sends no Referer (which would hold the
	// query key of the first request).
	api, log := hostileAPI(t, func(r *http.Request) string { return "/v2/orders/2?api_key=" + r.URL.Query().Get("api_key") })
	client := api.Client()
	client.Transport.(*http.Transport).DialContext = dialTo(map[string]string{"api.example.com:443": api.Listener.Addr().String()})
	spec := provider(t, acme("https://api.example.com/v2", `{"type":"query","name":"api_key","env":"K"}`, ""))
	p, err := Open(spec, tool.Declaration{Name: "Shop", Provider: "Acme", Getenv: env(map[string]string{"K": "sk_secret_key"})}, client)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Call(context.Background(), tool.Request{Method: "get_order", Args: []byte(`{"id":"redirect"}`)})
	if err != nil || string(out) != `{"ok":"here"}` {
		t.Fatalf("a redirect under the base URL: %s %v", out, err)
	}
	reqs := log.all()
	if len(reqs) != 2 || reqs[1].URL.Path != "/v2/orders/2" || reqs[1].Header.Get("Referer") != "" {
		t.Fatalf("requests %d, second %v %v", len(reqs), reqs[len(reqs)-1].URL, reqs[len(reqs)-1].Header)
	}
}

// dialTo sends each host:port to the listener the map names.
func dialTo(routes map[string]string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := routes[addr]; ok {
			addr = to
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}
