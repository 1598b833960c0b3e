// Package studio owns Studio: the web pages `halo serve` serves at / for the people who run
// pipelines. They list runs (live), show a run's stages from its events (model and tool
// calls, decisions, violations, loops, what it cost), answer a paused run, and start a run
// from a form built from the pipeline's input schema.
//
// Studio holds no state and makes no decision of its own: every page is made from the
// HTTP API of host/serve, called in-process with the browser request's Host, Origin and
// token, so a page passes exactly the API's checks. The token is given once (?token= or the
// sign-in form) and kept in an HttpOnly, SameSite=Strict cookie; forms are refused when a
// browser says they come from another site. Pages are html/template, embedded with the
// binary, with a little plain JavaScript for live updates; they read without it.
//
// host/serve mounts Studio without importing it: cmd/halo hands serve.Config.Pages a
// function that calls New.
package studio

import (
	"bytes"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// CookieName is the cookie that keeps the API token in the browser (base64url, unpadded).
const CookieName = "halo_token"

// DefaultListInterval is how often the runs list's live stream reads the list without being
// told of a change (a running run's duration grows).
const DefaultListInterval = 5 * time.Second

// Config is what Studio is made from.
type Config struct {
	// API is host/serve's API handler, called in-process (without its request log).
	API http.Handler
	// Stopping is closed when the server starts to stop: live streams end.
	Stopping <-chan struct{}
	// SecureCookie marks the token cookie Secure (the server is reached over https).
	SecureCookie bool
	// ListInterval is how often the runs list's live stream reads the list without being told
	// of a change; 0 means DefaultListInterval.
	ListInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Studio is the pages' handler.
type Studio struct {
	cfg     Config
	handler http.Handler
	pages   map[string]*template.Template
	static  fs.FS
}

var pageNames = []string{"runs", "run", "replay", "source", "start", "form", "login", "problem", "signedin"}

// New makes Studio's handler.
func New(cfg Config) (*Studio, error) {
	if cfg.API == nil {
		return nil, errors.New("studio: the API handler is needed")
	}
	if cfg.ListInterval <= 0 {
		cfg.ListInterval = DefaultListInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Stopping == nil {
		cfg.Stopping = make(chan struct{})
	}
	s := &Studio{cfg: cfg, pages: map[string]*template.Template{}}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("studio: template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	s.static = static

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.listPage)
	mux.HandleFunc("GET /live", s.liveList)
	mux.HandleFunc("GET /runs/{id}", s.runPage)
	mux.HandleFunc("GET /runs/{id}/events", s.runEvents)
	mux.HandleFunc("POST /runs/{id}/answer", s.answer)
	mux.HandleFunc("POST /runs/{id}/cancel", s.cancel)
	mux.HandleFunc("POST /runs/{id}/rerun", s.rerun)
	mux.HandleFunc("POST /runs/{id}/replay", s.replay)
	mux.HandleFunc("GET /runs/{id}/record.json", s.exportRecord)
	mux.HandleFunc("GET /runs/{id}/trace.json", s.exportTrace)
	mux.HandleFunc("GET /source", s.sourcePage)
	mux.HandleFunc("GET /start", s.startPage)
	mux.HandleFunc("GET /start/{pipeline}", s.formPage)
	mux.HandleFunc("POST /start/{pipeline}", s.start)
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.logout)
	mux.HandleFunc("GET /static/{name}", s.staticFile)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, r, &apiError{http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("Studio has no page %s %s", r.Method, trim(r.URL.Path, 100))})
	})

	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.problem(w, r, &apiError{http.StatusForbidden, "FORBIDDEN_ORIGIN", "This form was sent from a page of another site: nothing was done. Use Studio's own pages."})
	}))
	s.handler = cop.Handler(s.withToken(mux))
	return s, nil
}

// ServeHTTP serves Studio's pages.
func (s *Studio) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	s.handler.ServeHTTP(w, r)
}

// Credential is the token r's cookie holds ("" for none): halo serve counts a request with
// the right one as authenticated in its connection limits (serve.Credentialed).
func (s *Studio) Credential(r *http.Request) string { return s.caller(r).token }

// caller is the API as the person behind r reaches it.
func (s *Studio) caller(r *http.Request) caller {
	c := caller{api: s.cfg.API, r: r}
	if ck, err := r.Cookie(CookieName); err == nil {
		if tok, err := base64.RawURLEncoding.DecodeString(ck.Value); err == nil {
			c.token = string(tok)
		}
	}
	return c
}

// withToken takes a token given once in the address (?token=): a good one is kept in the
// cookie and the page is loaded again without it, so it stays in no history or link.
func (s *Studio) withToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method != http.MethodGet || !q.Has("token") || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		tok := q.Get("token")
		q.Del("token")
		u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
		s.signIn(w, r, tok, u.String())
	})
}

// signIn checks tok against the API and keeps it in the cookie, then sends the browser to
// next. A page of Studio's own origin does the last step (not a redirect), so the
// SameSite=Strict cookie goes with it even when the address came from a link elsewhere.
func (s *Studio) signIn(w http.ResponseWriter, r *http.Request, tok, next string) {
	c := s.caller(r)
	c.token = tok
	if err := c.call("GET", "/api/pipelines", nil, nil); err != nil {
		if err.Status == http.StatusUnauthorized {
			err.Message = "That is not this server's token (HALO_SERVE_TOKEN)."
			s.render(w, r, http.StatusUnauthorized, "login", &loginData{page: page{Title: "Sign in", Problem: err}, Next: next})
			return
		}
		s.problem(w, r, err)
		return
	}
	// Encoded, so a token with characters a cookie cannot hold (spaces, quotes, ;) survives.
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: base64.RawURLEncoding.EncodeToString([]byte(tok)), Path: "/", HttpOnly: true, Secure: s.cfg.SecureCookie || r.TLS != nil, SameSite: http.SameSiteStrictMode})
	s.render(w, r, http.StatusOK, "signedin", &loginData{page: page{Title: "Signed in"}, Next: next})
}

type loginData struct {
	page
	Next string
}

func (s *Studio) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, http.StatusOK, "login", &loginData{page: page{Title: "Sign in"}, Next: localPath(r.URL.Query().Get("next"))})
}

func (s *Studio) login(w http.ResponseWriter, r *http.Request) {
	if err := parseForm(w, r); err != nil {
		s.problem(w, r, err)
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	next := localPath(r.PostForm.Get("next"))
	if tok == "" {
		s.render(w, r, http.StatusBadRequest, "login", &loginData{page: page{Title: "Sign in", Problem: &apiError{http.StatusBadRequest, "BAD_REQUEST", "Type the token."}}, Next: next})
		return
	}
	s.signIn(w, r, tok, next)
}

func (s *Studio) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.cfg.SecureCookie || r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// localPath keeps a "next" address to a path of this server: anything a browser could take
// for another site ("//host", "/\\host", a tab or newline it would strip first) is "/".
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return "/"
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return "/"
		}
	}
	if u, err := url.Parse(p); err != nil || u.Scheme != "" || u.Host != "" {
		return "/"
	}
	return p
}

func (s *Studio) staticFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if _, err := fs.Stat(s.static, name); err != nil || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeFileFS(w, r, s.static, name)
}

// page is what every page has.
type page struct {
	Title string
	// Nav is the menu entry that is current: "runs" or "start".
	Nav string
	// Notice says what was just done; Problem what went wrong.
	Notice  string
	Problem *apiError
	// SignedIn says the browser holds a token: the page offers to sign out.
	SignedIn bool
}

// pageData is what pages are made from: each embeds page.
type pageData interface{ basePage() *page }

func (p *page) basePage() *page { return p }

// render writes page name with data, or a plain 500 when the template fails.
func (s *Studio) render(w http.ResponseWriter, r *http.Request, status int, name string, data pageData) {
	if _, err := r.Cookie(CookieName); err == nil {
		data.basePage().SignedIn = true
	}
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		http.Error(w, "studio: the page could not be made: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// problem shows what the API (or Studio) refused. A missing or wrong token shows the
// sign-in form instead.
func (s *Studio) problem(w http.ResponseWriter, r *http.Request, err *apiError) {
	if err.Status == http.StatusUnauthorized {
		next := r.URL.Path
		if r.Method == http.MethodGet && r.URL.RawQuery != "" {
			next += "?" + r.URL.RawQuery
		}
		if r.Method != http.MethodGet { // an answer, a cancel, a rerun, a replay: back to the run's page
			for _, action := range []string{"/answer", "/cancel", "/rerun", "/replay"} {
				next = strings.TrimSuffix(next, action)
			}
		}
		s.render(w, r, http.StatusUnauthorized, "login", &loginData{
			page: page{Title: "Sign in", Problem: &apiError{err.Status, err.Code, "Studio needs this server's token (HALO_SERVE_TOKEN). Nothing is shown without it."}},
			Next: localPath(next),
		})
		return
	}
	title := "Not done"
	switch err.Status {
	case http.StatusNotFound:
		title = "Not found"
	case http.StatusForbidden:
		title = "Refused"
	}
	s.render(w, r, err.Status, "problem", &page{Title: title, Problem: err})
}

// parseForm reads a form of at most 256 KiB.
func parseForm(w http.ResponseWriter, r *http.Request) *apiError {
	r.Body = http.MaxBytesReader(w, r.Body, 256<<10)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &apiError{http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", "The form is over the limit of 256 KiB."}
		}
		return &apiError{http.StatusBadRequest, "BAD_REQUEST", "The form cannot be read: " + err.Error()}
	}
	return nil
}

func trim(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var funcs = template.FuncMap{
	"money":    money,
	"clock":    clock,
	"duration": duration,
	"short":    shortID,
	"inc":      func(i int) int { return i + 1 },
}
