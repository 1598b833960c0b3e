package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/mcpserver"
)

// Limits on connections and requests, against a stranger who opens many connections and
// sends each a byte at a time: every file descriptor used, and /healthz unanswered.
const (
	// DefaultMaxConns caps the connections open at once (lowered to fit the process's file
	// descriptor limit, see connCap).
	DefaultMaxConns = 4096
	// DefaultMaxUnauthenticated caps the requests without the token handled at once:
	// approval links, Slack's interactions, Studio's sign-in, and everything when a token is
	// set and the request lacks it.
	DefaultMaxUnauthenticated = 64
	// HeaderTimeout is how long a request's line and headers may take to arrive.
	HeaderTimeout = 10 * time.Second
	// BodyTimeout is how long a request with the token may take to send its body;
	// UnauthenticatedBodyTimeout the same for one without.
	BodyTimeout                = 60 * time.Second
	UnauthenticatedBodyTimeout = 10 * time.Second
	// IdleTimeout is how long a connection may wait for its next request.
	IdleTimeout = 2 * time.Minute
	// fdReserve is the file descriptors kept for everything but connections: the store,
	// plugins, model and tool requests.
	fdReserve = 256
)

// CodeBusy is mcpserver's: too many requests at once.
const CodeBusy = mcpserver.CodeBusy

// connCap is the connection cap: limit (or DefaultMaxConns), at most what the process's
// file descriptor limit leaves after fdReserve, and at least 16.
func connCap(limit int) int {
	if limit <= 0 {
		limit = DefaultMaxConns
	}
	if n := fdLimit(); n > 0 {
		limit = min(limit, n-fdReserve)
	}
	return max(limit, 16)
}

// A conns is the set of open connections: at most cap of them. A connection is evictable
// unless a request with the token is being handled on it; when one more arrives at the cap,
// the connection evictable longest is closed to make room (a stranger's half-sent request
// before a person's), and when none is, the new one is closed.
type conns struct {
	mu        sync.Mutex
	cap, open int
	// idle holds the evictable connections, longest evictable first: a list through the
	// connections themselves, so a request that takes its connection out and puts it back
	// allocates nothing.
	idle idleList
	// evicted and refused count the connections closed to keep the cap.
	evicted, refused int
}

// A conn is one accepted connection.
type conn struct {
	net.Conn
	set *conns
	// prev and next are its neighbours in set.idle, and listed says it is there, while it
	// is evictable; busy counts the requests with the token being handled on it; gone is
	// set once it no longer counts.
	prev, next *conn
	listed     bool
	busy       int
	gone       bool
}

// An idleList is a list of connections, oldest first, linked through their prev and next.
type idleList struct{ front, back *conn }

func (l *idleList) pushBack(c *conn) {
	c.prev, c.next, c.listed = l.back, nil, true
	if l.back != nil {
		l.back.next = c
	} else {
		l.front = c
	}
	l.back = c
}

// remove takes c out of the list, when it is in it.
func (l *idleList) remove(c *conn) {
	if !c.listed {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.front = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.back = c.prev
	}
	c.prev, c.next, c.listed = nil, nil, false
}

// A limitListener accepts connections into a conns.
type limitListener struct {
	net.Listener
	set *conns
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		s := l.set
		s.mu.Lock()
		var victim *conn
		if s.open >= s.cap {
			if front := s.idle.front; front != nil {
				victim = front
				victim.forget()
				s.evicted++
			} else {
				s.refused++
				s.mu.Unlock()
				c.Close()
				continue
			}
		}
		tc := &conn{Conn: c, set: s}
		s.open++
		s.idle.pushBack(tc)
		s.mu.Unlock()
		if victim != nil {
			victim.Conn.Close()
		}
		return tc, nil
	}
}

// forget stops counting c (set.mu held).
func (c *conn) forget() {
	if c.gone {
		return
	}
	c.gone = true
	c.set.open--
	c.set.idle.remove(c)
}

func (c *conn) Close() error {
	c.set.mu.Lock()
	c.forget()
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// protect keeps c from eviction while a request with the token is handled on it;
// unprotect ends that, and c is evictable again, as the newest.
func (c *conn) protect() {
	s := c.set
	s.mu.Lock()
	c.busy++
	s.idle.remove(c)
	s.mu.Unlock()
}

func (c *conn) unprotect() {
	s := c.set
	s.mu.Lock()
	c.busy--
	if c.busy == 0 && !c.gone && !c.listed {
		s.idle.pushBack(c)
	}
	s.mu.Unlock()
}

type connKey struct{}

// limited puts every request under the limits: a request with the token (or any, when
// there is none, but for the capability routes) keeps its connection from eviction and may
// take BodyTimeout to send its body; any other takes one of MaxUnauthenticated places,
// or is answered 503 TOO_MANY_REQUESTS when none is free, and has UnauthenticatedBodyTimeout.
// /healthz is answered whatever the load.
func (s *Server) limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		timeout := s.cfg.UnauthenticatedBodyTimeout
		if s.authenticated(r) {
			timeout = s.cfg.BodyTimeout
			if c, ok := r.Context().Value(connKey{}).(*conn); ok {
				c.protect()
				defer c.unprotect()
			}
		} else {
			select {
			case s.unauth <- struct{}{}:
				defer func() { <-s.unauth }()
			default:
				w.Header().Set("Connection", "close")
				writeError(w, &apiError{http.StatusServiceUnavailable, CodeBusy, "too many requests without the API token at once; try again shortly"})
				return
			}
		}
		if r.ContentLength != 0 {
			// A body may follow: it must arrive in time. Requests without one (event
			// streams) keep no read deadline, so a long answer is not cut.
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// authenticated reports whether r counts as a request with the token: it carries it (the
// header, ?token= or the pages' own credential), or the server has none. Approval links and
// Slack's requests carry a capability of their own, checked only once they are handled.
func (s *Server) authenticated(r *http.Request) bool {
	p := r.URL.Path
	if strings.HasPrefix(p, "/approve/") || strings.HasPrefix(p, "/slack/") {
		return false
	}
	if !s.checks.HasToken() {
		return true // (without asking the pages for a credential nobody checks)
	}
	given := ""
	if s.credential != nil {
		given = s.credential(r)
	}
	return s.checks.Authenticated(r, given)
}

// A Credentialed handler of Config.Pages says which token a request to it carries besides
// the API's ways (Studio's cookie), so that its requests count as authenticated.
type Credentialed interface {
	Credential(r *http.Request) string
}

// Serve answers the connections of ln until Shutdown: at most the connection cap open at
// once (Config.MaxConns), each request's headers within Config.HeaderTimeout and its body
// within BodyTimeout (UnauthenticatedBodyTimeout without the token), an idle connection
// closed after IdleTimeout. It returns http.ErrServerClosed after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.hs == nil {
		s.hs = &http.Server{
			Handler:           s.handler,
			ReadHeaderTimeout: s.cfg.HeaderTimeout,
			IdleTimeout:       IdleTimeout,
			ErrorLog:          s.log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
			ConnContext: func(ctx context.Context, c net.Conn) context.Context {
				if tc, ok := c.(*conn); ok {
					return context.WithValue(ctx, connKey{}, tc)
				}
				return ctx
			},
		}
	}
	hs := s.hs
	s.mu.Unlock()
	return hs.Serve(&limitListener{Listener: ln, set: s.conns})
}

// Shutdown stops Serve: the listener closes, idle connections close, and it waits for the
// requests being handled (or ctx). Close the Server itself after it.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	hs := s.hs
	s.mu.Unlock()
	if hs == nil {
		return nil
	}
	err := hs.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ConnStats are the connection counts, for tests and metrics: open now, and closed so far
// to keep the cap (evicted to make room, refused when none could be).
type ConnStats struct{ Open, Cap, Evicted, Refused int }

// Conns returns the connection counts.
func (s *Server) Conns() ConnStats {
	c := s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConnStats{Open: c.open, Cap: c.cap, Evicted: c.evicted, Refused: c.refused}
}
