package model

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testFailures runs the failures every adapter must code the same way against a fake that
// first fails as the case says, then answers ok (a success body of the provider's own shape).
// open builds the adapter for a fake's URL and a Config (Sleep and Now already set).
func testFailures(t *testing.T, open func(url string, cfg Config) Provider, model, ok string) {
	req := Request{Model: model, Messages: []Message{{Role: User, Text: "hi"}}}
	tests := []struct {
		name     string
		first    reply
		code     string
		retry    bool
		requests int
		waits    []time.Duration
		success  bool
	}{
		{name: "401 is MODEL_AUTH, not retried", first: reply{status: 401, body: `{"error":{"message":"Incorrect API key provided"}}`},
			code: CodeAuth, requests: 1},
		{name: "403 is MODEL_AUTH", first: reply{status: 403, body: `{"error":{"message":"forbidden"}}`},
			code: CodeAuth, requests: 1},
		{name: "400 is MODEL_ERROR, not retried", first: reply{status: 400, body: `{"error":{"message":"bad model"}}`},
			code: CodeError, requests: 1},
		{name: "429 honours Retry-After", first: reply{status: 429, header: map[string]string{"Retry-After": "7"},
			body: `{"error":{"message":"Rate limit reached"}}`}, success: true, requests: 2, waits: []time.Duration{7 * time.Second}},
		{name: "429 with an HTTP date", first: reply{status: 429, header: map[string]string{"Retry-After": "Sun, 29 Nov 2026 12:00:03 GMT"},
			body: `{}`}, success: true, requests: 2, waits: []time.Duration{3 * time.Second}},
		{name: "429 with a short Retry-After waits the backoff", first: reply{status: 429, header: map[string]string{"Retry-After-Ms": "20"}},
			success: true, requests: 2, waits: []time.Duration{DefaultBackoff}},
		{name: "429 asking too long is returned at once", first: reply{status: 429, header: map[string]string{"Retry-After": "3600"},
			body: `{"error":{"message":"quota"}}`}, code: CodeRateLimit, retry: true, requests: 1},
		{name: "500 is retried with backoff", first: reply{status: 500, body: `{"error":{"message":"internal"}}`},
			success: true, requests: 2, waits: []time.Duration{DefaultBackoff}},
		{name: "malformed JSON is MODEL_BAD_RESPONSE", first: reply{status: 200, body: `{"id": "x", "choi`},
			code: CodeBadResponse, requests: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.first, reply{body: ok})
			s := &sleeper{}
			p := open(f.srv.URL, testConfig(nil, s))
			resp, err := p.Complete(context.Background(), req)
			if tt.success {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Attempts != tt.requests {
					t.Errorf("Attempts = %d, want %d", resp.Attempts, tt.requests)
				}
			} else {
				var me *Error
				if !errors.As(err, &me) {
					t.Fatalf("Complete error = %v (%T), want *Error", err, err)
				}
				if me.Code != tt.code || me.Retryable != tt.retry {
					t.Errorf("error = %s retryable=%v (%v), want %s retryable=%v", me.Code, me.Retryable, me, tt.code, tt.retry)
				}
				if me.Attempts != tt.requests {
					t.Errorf("error Attempts = %d, want %d", me.Attempts, tt.requests)
				}
				if me.Code == CodeAuth && !strings.Contains(me.Message, "(check ") {
					t.Errorf("auth message %q does not name the key variable", me.Message)
				}
				if tt.first.status != 200 && me.Status != tt.first.status {
					t.Errorf("error Status = %d, want %d", me.Status, tt.first.status)
				}
			}
			if n := len(f.requests()); n != tt.requests {
				t.Errorf("fake got %d requests, want %d", n, tt.requests)
			}
			if got := s.got(); !reflect.DeepEqual(got, tt.waits) {
				t.Errorf("waits = %v, want %v", got, tt.waits)
			}
		})
	}

	t.Run("no model id", func(t *testing.T) {
		f := newFake(t, reply{body: ok})
		_, err := open(f.srv.URL, testConfig(nil, &sleeper{})).Complete(context.Background(), Request{Messages: req.Messages})
		if errCode(err) != CodeConfig || len(f.requests()) != 0 {
			t.Errorf("err = %v after %d requests, want %s before any", err, len(f.requests()), CodeConfig)
		}
	})

	t.Run("5xx until attempts run out", func(t *testing.T) {
		f := newFake(t, reply{status: 503, body: `{"error":{"message":"overloaded"}}`})
		s := &sleeper{}
		_, err := open(f.srv.URL, testConfig(nil, s)).Complete(context.Background(), req)
		var me *Error
		if !errors.As(err, &me) || me.Code != CodeError || !me.Retryable || me.Attempts != DefaultMaxAttempts {
			t.Fatalf("error = %#v, want retryable %s after %d attempts", err, CodeError, DefaultMaxAttempts)
		}
		if want := []time.Duration{DefaultBackoff, 2 * DefaultBackoff}; !reflect.DeepEqual(s.got(), want) {
			t.Errorf("waits = %v, want %v", s.got(), want)
		}
		if me.Message != "HTTP 503: overloaded" {
			t.Errorf("message = %q, want the provider's words", me.Message)
		}
	})

	t.Run("a slow attempt is TIMEOUT", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		defer srv.Close()
		defer close(release)
		cfg := testConfig(nil, &sleeper{})
		cfg.MaxAttempts = 1
		slow := req
		slow.Timeout = 50 * time.Millisecond
		_, err := open(srv.URL, cfg).Complete(context.Background(), slow)
		var me *Error
		if !errors.As(err, &me) || me.Code != CodeTimeout || !me.Retryable {
			t.Fatalf("error = %v, want retryable %s", err, CodeTimeout)
		}
	})

	t.Run("the caller's deadline is TIMEOUT, not retried here", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}))
		defer srv.Close()
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		s := &sleeper{}
		_, err := open(srv.URL, testConfig(nil, s)).Complete(ctx, req)
		var me *Error
		if !errors.As(err, &me) || me.Code != CodeTimeout || me.Attempts != 1 || len(s.got()) != 0 {
			t.Fatalf("error = %v (attempts %d, waits %v), want %s after one attempt", err, me.Attempts, s.got(), CodeTimeout)
		}
	})

	t.Run("a canceled context stops retries", func(t *testing.T) {
		f := newFake(t, reply{status: 500, body: `{}`})
		ctx, cancel := context.WithCancel(context.Background())
		cfg := testConfig(nil, &sleeper{})
		cfg.Sleep = func(context.Context, time.Duration) error { cancel(); return context.Canceled }
		_, err := open(f.srv.URL, cfg).Complete(ctx, req)
		if err == nil || len(f.requests()) != 1 {
			t.Fatalf("err = %v after %d requests, want an error after 1", err, len(f.requests()))
		}
	})
}
