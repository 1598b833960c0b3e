package pkgmgr

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A recorder is a test server that logs what it was asked.
type recorder struct {
	mu    sync.Mutex
	paths []string
	refs  []string
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.paths = append(r.paths, req.URL.String())
		r.refs = append(r.refs, req.Header.Get("Referer"))
		r.mu.Unlock()
		h.ServeHTTP(w, req)
	})
}

func (r *recorder) seen() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...), append([]string(nil), r.refs...)
}

// redirector answers every request with a redirect to base + the request's path.
func redirector(base string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+r.URL.Path, http.StatusFound)
	})
}

// dialing returns client with every host:port of routes sent to that listener.
func dialing(client *http.Client, routes map[string]string) *http.Client {
	tr := client.Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if to, ok := routes[addr]; ok {
			addr = to
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

// A download is held to "https, or http only on localhost" at every hop, not only the first:
// a package URL or a registry that redirects to plain http elsewhere (or from https down to
// http on localhost) is refused, the plain server is never asked, and nothing changes.
func TestDownloadRedirectsAreChecked(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	site := filepath.Dir(index)
	files := http.FileServer(http.Dir(site))
	mirror := &recorder{}
	plain := httptest.NewServer(mirror.wrap(files)) // plain http, on 127.0.0.1
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(redirector("http://mirror.example.com"))
	defer tlsSrv.Close()
	local := httptest.NewServer(redirector("http://mirror.example.com"))
	defer local.Close()
	down := httptest.NewTLSServer(redirector(plain.URL)) // https → http on localhost
	defer down.Close()
	client := dialing(tlsSrv.Client(), map[string]string{
		"mirror.example.com:80": plain.Listener.Addr().String(),
		"pkgs.example.com:443":  tlsSrv.Listener.Addr().String(),
		"down.example.com:443":  down.Listener.Addr().String(),
	})
	ctx := context.Background()
	cases := []struct{ name, registry, spec string }{
		{"package URL to plain http", "", "https://pkgs.example.com/packages/acme-1.0.0.halotool"},
		{"localhost registry to plain http elsewhere", local.URL + "/index.json", "acme"},
		{"https registry down to http on localhost", "https://down.example.com/index.json", "acme"},
	}
	for _, c := range cases {
		pr := newProject(t, c.registry)
		pr.Registries.Client = client
		before := hashTree(t, pr.Dir)
		_, err := pr.Add(ctx, c.spec, AddOptions{})
		if Code(err) != CodeRegistry || !strings.Contains(err.Error(), "redirected") {
			t.Errorf("%s: want a refused redirect (%s), got %v", c.name, CodeRegistry, err)
		}
		if got := hashTree(t, pr.Dir); got != before {
			t.Errorf("%s: the project changed", c.name)
		}
	}
	if paths, _ := mirror.seen(); len(paths) > 0 {
		t.Fatalf("the plain http server was asked for %v", paths)
	}
}

// A registry whose URL carries a token may redirect to a CDN over https: the CDN never gets
// the token in a Referer.
func TestDownloadRedirectsSendNoReferer(t *testing.T) {
	index := newRegistry(t, httpManifest("acme", "1.0.0", "Acme"))
	cdn := &recorder{}
	cdnSrv := httptest.NewTLSServer(cdn.wrap(http.FileServer(http.Dir(filepath.Dir(index)))))
	defer cdnSrv.Close()
	reg := httptest.NewTLSServer(redirector("https://cdn.example.com"))
	defer reg.Close()
	pr := newProject(t, "https://registry.example.com/index.json?token=s3cret")
	pr.Registries.Client = dialing(reg.Client(), map[string]string{
		"registry.example.com:443": reg.Listener.Addr().String(),
		"cdn.example.com:443":      cdnSrv.Listener.Addr().String(),
	})
	if _, err := pr.Add(context.Background(), "acme", AddOptions{}); err != nil {
		t.Fatal(err)
	}
	paths, refs := cdn.seen()
	if len(paths) != 2 {
		t.Fatalf("the CDN was asked for %v", paths)
	}
	for i, ref := range refs {
		if ref != "" {
			t.Errorf("GET %s sent Referer %q", paths[i], ref)
		}
	}
}
