package serve

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Stable codes of refused requests.
const (
	CodeForbiddenOrigin      = "FORBIDDEN_ORIGIN"
	CodeForbiddenHost        = "FORBIDDEN_HOST"
	CodeForbiddenContentType = "FORBIDDEN_CONTENT_TYPE"
	CodeUnauthorized         = "UNAUTHORIZED"
)

// A guard makes the browser checks and the token check, in the seed's order: Origin, Host
// (against DNS rebinding), a JSON content type on POST, then the token.
type guard struct {
	token  [32]byte
	hasTok bool
	public *url.URL
	addr   string
}

func newGuard(cfg Config) (*guard, error) {
	g := &guard{addr: cfg.Addr}
	if h, _, err := net.SplitHostPort(cfg.Addr); err == nil && isUnspecified(h) {
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

// A refusal is a request the guard refused.
type refusal struct {
	status        int
	code, message string
}

// check returns the first check r fails, or nil. json says whether a POST must be JSON (the
// API) or may be a form (an approval page's buttons); token whether the API token is needed.
func (g *guard) check(r *http.Request, json, token bool) *refusal {
	local := g.addr
	if local == "" {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
			local = a.String()
		}
	}
	_, localPort, _ := net.SplitHostPort(local)
	if origins := r.Header.Values("Origin"); len(origins) > 0 {
		if len(origins) > 1 || !g.originAllowed(origins[0], local, localPort) {
			return &refusal{http.StatusForbidden, CodeForbiddenOrigin, fmt.Sprintf("requests from origin %q are refused: only pages of this server may call it", trunc(strings.Join(origins, ", "), 200))}
		}
	}
	if !g.hostAllowed(r.Host, local) {
		return &refusal{http.StatusForbidden, CodeForbiddenHost, fmt.Sprintf("Host %q is not this server's name: use localhost, the address it listens on, or publicUrl", trunc(r.Host, 200))}
	}
	if r.Method == http.MethodPost {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || (mt != "application/json" && (json || mt != "application/x-www-form-urlencoded")) {
			return &refusal{http.StatusForbidden, CodeForbiddenContentType, "a POST must be Content-Type: application/json"}
		}
	}
	if token && g.hasTok && !g.tokenOK(r) {
		return &refusal{http.StatusUnauthorized, CodeUnauthorized, "this server needs its API token: Authorization: Bearer <token> (or ?token=)"}
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

func hostPort(hostport, scheme string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = strings.Trim(hostport, "[]"), ""
	}
	if p == "" {
		if scheme == "https" {
			p = "443"
		} else {
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
	return h == "" || (ip != nil && ip.IsUnspecified())
}

func (g *guard) originAllowed(origin, local, localPort string) bool {
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
		return localPort == "" || p == localPort
	}
	if local != "" {
		lh, lp := hostPort(local, "http")
		return lh != "" && h == lh && p == lp && !isUnspecified(lh)
	}
	return false
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
