package serve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
)

// Stable codes of approval links that cannot be used.
const (
	// CodeLinkForged: the link was not made by this server (or its key changed).
	CodeLinkForged = "LINK_FORGED"
	// CodeLinkExpired: the link is older than its validity (24 h by default).
	CodeLinkExpired = "LINK_EXPIRED"
	// CodeLinkUsed: the pause the link answers is over: the link was used, or the run was
	// answered another way.
	CodeLinkUsed = "LINK_USED"
)

// A link says which pause of which run an approval link answers: the run, the channel it
// waits on, the step (the number of the run's paused event) and when it expires.
type link struct {
	RunID   string `json:"r"`
	Channel string `json:"c"`
	Step    int    `json:"s"`
	Expires int64  `json:"e"`
}

// A signer makes and checks approval links: the token is the link's fields as JSON, then an
// HMAC-SHA256 of them under the server's key, both base64url.
type signer struct {
	key  []byte
	ttl  time.Duration
	base string
}

const linkDomain = "halo approval link v1\n"

func (sg *signer) mac(payload string) []byte {
	m := hmac.New(sha256.New, sg.key)
	m.Write([]byte(linkDomain))
	m.Write([]byte(payload))
	return m.Sum(nil)
}

func (sg *signer) token(l link) string {
	b, _ := json.Marshal(l)
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + base64.RawURLEncoding.EncodeToString(sg.mac(p))
}

// url is the link a person opens.
func (sg *signer) url(l link) string { return sg.base + "/approve/" + sg.token(l) }

// parse checks a token's signature and expiry and returns its link.
func (sg *signer) parse(tok string, now time.Time) (link, *apiError) {
	var l link
	p, m, ok := strings.Cut(tok, ".")
	sig, err := base64.RawURLEncoding.Strict().DecodeString(m)
	if !ok || err != nil || len(tok) > 4096 || !hmac.Equal(sig, sg.mac(p)) {
		return l, &apiError{http.StatusForbidden, CodeLinkForged, "this approval link was not made by this server"}
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(p)
	if err != nil || json.Unmarshal(b, &l) != nil || l.RunID == "" || l.Channel == "" || l.Step <= 0 {
		return l, &apiError{http.StatusForbidden, CodeLinkForged, "this approval link was not made by this server"}
	}
	if now.Unix() >= l.Expires {
		return l, &apiError{http.StatusGone, CodeLinkExpired, fmt.Sprintf("this approval link expired at %s; answer the run in the API or Studio", time.Unix(l.Expires, 0).UTC().Format(time.RFC3339))}
	}
	return l, nil
}

// id names a link for the store's record of used links: its signed fields, so no other
// spelling of the same token counts as another link.
func (sg *signer) id(tok string) string {
	p, _, _ := strings.Cut(tok, ".")
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:16])
}

// pauseOf returns the link of the pause rec's run waits at, if it is paused: the step is
// the number of its last paused event, and the link expires ttl after that event.
func (sg *signer) pauseOf(rec *runtime.Record) (link, bool) {
	if rec.Status != runtime.Paused || rec.Meta.Paused == nil {
		return link{}, false
	}
	for i := len(rec.Events) - 1; i >= 0; i-- {
		if e := rec.Events[i]; e.Type == "paused" {
			return sg.linkAt(rec.RunID, i+1, e), true
		}
	}
	return link{}, false
}

// linkAt is the link of paused event e, number step of run id.
func (sg *signer) linkAt(id string, step int, e runtime.Event) link {
	return link{RunID: id, Channel: e.Channel, Step: step, Expires: e.Time.Add(sg.ttl).Unix()}
}

// publicBase is the start of links: publicUrl, or http:// and the listen address
// (localhost for an address that means every interface).
func publicBase(cfg Config) string {
	if cfg.PublicURL != "" {
		return strings.TrimRight(cfg.PublicURL, "/")
	}
	h, p, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return "http://localhost:8080"
	}
	if ip := net.ParseIP(strings.Trim(h, "[]")); h == "" || ip != nil && ip.IsUnspecified() {
		h = "localhost"
	}
	return "http://" + net.JoinHostPort(h, p)
}

// notify posts a paused run's approval link to the webhook, in the background.
func (s *Server) notify(rec *runtime.Record) {
	if s.cfg.Webhook == "" {
		return
	}
	l, ok := s.links.pauseOf(rec)
	if !ok {
		return
	}
	u := s.links.url(l)
	body, err := json.Marshal(s.notice(rec, l, u))
	if err != nil {
		s.log.Warn("notify.webhook: the message could not be made", "error", err)
		return
	}
	s.postJSON("notify.webhook", s.cfg.Webhook, body, rec.RunID)
}

// postJSON POSTs a JSON body to a URL in the background, with a 15 s limit, and logs a
// failure under what.
func (s *Server) postJSON(what, to string, body []byte, run string) {
	s.bg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(body))
		if err != nil {
			s.log.Warn(what+": bad URL", "error", err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.cfg.HTTPClient.Do(req)
		if err != nil {
			s.log.Warn(what+": the POST failed", "run", run, "error", err)
			return
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			s.log.Warn(what+": the POST was refused", "run", run, "status", resp.StatusCode)
		}
	})
}

func textOf(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// continueText tells an MCP client how a person answers a run that paused: the approval
// link, or the API.
func (s *Server) continueText(runID, waiting string, pd *lang.PipelineDecl) string {
	text := fmt.Sprintf("Answer it in the HTTP API: POST /api/runs/%s/signal with {\"channel\": %q, \"payload\": ...}", runID, waiting)
	if rec, err := s.store.Load(runID); err == nil {
		if l, ok := s.links.pauseOf(rec); ok {
			return fmt.Sprintf("A person can answer it at %s (valid until %s), or in the HTTP API: POST /api/runs/%s/signal with {\"channel\": %q, \"payload\": ...}",
				s.links.url(l), time.Unix(l.Expires, 0).UTC().Format(time.RFC3339), runID, waiting)
		}
	}
	return text
}
