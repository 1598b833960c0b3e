package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
)

const src = `
agent A [openai/gpt-4o]

# Runs three agent stages.
pipeline Three(x: String) -> Result:
  x |> A.one("One.") |> A.two("Two.") |> A.three("Three.")

pipeline Ask(x: String) -> Result:
  x |> A.draft("Draft.") as draft |! yield("Approve {{draft}}?") as answer |> System.Value({ d: draft, a: answer })

pipeline Shop(id: String) -> Result:
  id ~> listen("payment") as paid |> System.Value({ id: id, paid: paid })

pipeline Count(n: Number, flag: Boolean) -> Result:
  n |> System.Value(n)
`

// env is a server on a real listener, with a gate that holds agent calls of A.one.
type env struct {
	t     *testing.T
	srv   *serve.Server
	http  *httptest.Server
	store runstore.Store
	token string
	// gate, when not nil, holds each A.one call until a value arrives.
	gate chan struct{}
	mu   sync.Mutex
	// calls counts agent calls by target.
	calls map[string]int
	// mocks answer the targets; tests may set more before they run.
	mocks *runtime.Mocks
}

type opts struct {
	token   string
	public  string
	ttl     time.Duration
	webhook string
	store   runstore.Store
	gate    bool
	now     func() time.Time
	maxBody int64
	src     string
	log     io.Writer
	noMCP   bool
	// interval is the lease loop's; 0 means 50 ms.
	interval time.Duration
	// env is the runtime's environment: model API keys and base URLs (a fake provider).
	env map[string]string
	// slackSecret and slackResponse are Config's SlackSecret and SlackResponseURL.
	slackSecret, slackResponse string
	// maxUnauth, bodyTimeout and unauthTimeout are Config's limits.
	maxUnauth                  int
	bodyTimeout, unauthTimeout time.Duration
	// reload is Config's Reload: the files as they are now, for replays.
	reload func() (*lang.Program, error)
	// newID, when set, makes the run ids.
	newID func() string
	// served has the server answer its listener itself (Server.Serve, as halo serve does),
	// not through an httptest.Server of the handler.
	served bool
}

// syncBuffer is a log a test reads while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func program(t testing.TB, source string) *lang.Program {
	t.Helper()
	f, diags := lang.Parse("flows.halo", []byte(source))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	prog := &lang.Program{Files: []*lang.File{f}}
	if err := runtime.Validate(prog, nil).Err(); err != nil {
		t.Fatal(err)
	}
	return prog
}

func newEnv(t *testing.T, o opts) *env {
	t.Helper()
	e := &env{t: t, token: o.token, calls: map[string]int{}}
	if o.gate {
		e.gate = make(chan struct{}, 100)
	}
	if o.store == nil {
		f, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		o.store = f
	}
	e.store = o.store
	targets := []string{"A.one", "A.two", "A.three", "A.draft"}
	if o.src == "" {
		o.src = src
	} else {
		targets = nil // the test's own program: it sets its own mocks
	}
	mocks := runtime.NewMocks()
	e.mocks = mocks
	for _, target := range targets {
		mocks.SetFunc(target, func(req runtime.MockRequest) (any, error) {
			e.mu.Lock()
			e.calls[target]++
			e.mu.Unlock()
			if target == "A.one" && e.gate != nil {
				<-e.gate
			}
			return "answer of " + target, nil
		})
	}
	if o.interval == 0 {
		o.interval = 50 * time.Millisecond
	}
	e.http = httptest.NewUnstartedServer(nil)
	cfg := serve.Config{
		Program: program(t, o.src), Store: o.store, Token: o.token, PublicURL: o.public, LinkTTL: o.ttl,
		Webhook: o.webhook, Addr: e.http.Listener.Addr().String(), Now: o.now, MaxBody: o.maxBody,
		Runtime: runtime.Config{Mocks: mocks, File: "flows.halo", Env: o.env}, Interval: o.interval,
		MCP: !o.noMCP, Version: "test", SlackSecret: o.slackSecret, SlackResponseURL: o.slackResponse,
		MaxUnauthenticated: o.maxUnauth, BodyTimeout: o.bodyTimeout, UnauthenticatedBodyTimeout: o.unauthTimeout,
		Reload: o.reload,
	}
	if o.newID != nil {
		serve.SetNewID(&cfg, o.newID)
	}
	if o.log != nil {
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Output: o.log, Level: hclog.Info})
	}
	srv, err := serve.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	srv.Start()
	served := make(chan error, 1)
	if o.served {
		e.http.URL = "http://" + e.http.Listener.Addr().String()
		go func() { served <- srv.Serve(e.http.Listener) }()
	} else {
		e.http.Config.Handler = srv.Handler()
		e.http.Start()
	}
	t.Cleanup(func() {
		if e.gate != nil {
			close(e.gate)
		}
		if o.served {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			srv.Shutdown(ctx)
			cancel()
			<-served
			srv.Close(5 * time.Second)
			return
		}
		e.http.CloseClientConnections()
		srv.Close(5 * time.Second)
		e.http.Close()
	})
	return e
}

func (e *env) count(target string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls[target]
}

// req sends a request with the token (when the env has one) and JSON content type.
func (e *env) req(method, path string, body any, hdr ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.http.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// do sends a request and decodes the JSON answer, checking the status.
func (e *env) do(method, path string, body any, want int, hdr ...string) map[string]any {
	e.t.Helper()
	resp := e.req(method, path, body, hdr...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("%s %s: not JSON: %s", method, path, b)
	}
	return out
}

func errCode(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return fmt.Sprint(e["code"])
	}
	return ""
}

// waitStatus polls GET /api/runs/{id} until the run has status st.
func (e *env) waitStatus(id string, st runtime.Status) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := e.do("GET", "/api/runs/"+id, nil, 200)
		if m["status"] == string(st) {
			return m
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s is %v, want %s", id, m["status"], st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
