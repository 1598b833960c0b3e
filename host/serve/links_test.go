package serve_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
)

// pausedAsk starts Ask, which pauses at its yield, and returns the run id and its link.
func (e *env) pausedAsk() (string, string) {
	e.t.Helper()
	m := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Ask", "inputs": map[string]any{"x": "go"}}, 200)
	p, _ := m["paused"].(map[string]any)
	if m["status"] != "paused" || p == nil {
		e.t.Fatalf("Ask did not pause: %v", m)
	}
	return m["runId"].(string), p["link"].(string)
}

// page GETs or POSTs an approval link the way a browser does, and returns status and body.
func (e *env) page(method, link string, form url.Values, hdr ...string) (int, string, http.Header) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, link, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// The link's GET shows the question and changes nothing (a preview or a scanner approves
// nothing); the POST answers, once; the run goes on with the answer.
func TestApprovalLink(t *testing.T) {
	e := newEnv(t, opts{token: "tok"})
	id, link := e.pausedAsk()
	if !strings.HasPrefix(link, e.http.URL+"/approve/") {
		t.Fatalf("link %s", link)
	}
	before := e.do("GET", "/api/runs/"+id, nil, 200)
	for range 3 {
		status, body, hdr := e.page("GET", link, nil)
		if status != 200 || !strings.Contains(body, "Approve answer of A.draft?") || !strings.Contains(body, `value="decline"`) {
			t.Fatalf("page %d: %s", status, body)
		}
		if hdr.Get("X-Frame-Options") != "DENY" || !strings.Contains(hdr.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("the page can be framed: %v", hdr)
		}
	}
	if after := e.do("GET", "/api/runs/"+id, nil, 200); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("GET changed the run")
	}
	// A form without a decision, or from another origin, does nothing.
	if status, _, _ := e.page("POST", link, url.Values{"reason": {"x"}}); status != 400 {
		t.Errorf("no decision: %d", status)
	}
	if status, body, _ := e.page("POST", link, url.Values{"decision": {"approve"}}, "Origin", "https://evil.example"); status != 403 || !strings.Contains(body, "FORBIDDEN_ORIGIN") {
		t.Errorf("cross-origin POST: %d %s", status, body)
	}
	e.waitStatus(id, runtime.Paused)
	status, body, _ := e.page("POST", link, url.Values{"decision": {"approve"}, "reason": {"ship it"}}, "Origin", e.http.URL)
	if status != 200 || !strings.Contains(body, "Approved") {
		t.Fatalf("approve: %d %s", status, body)
	}
	done := e.waitStatus(id, runtime.Completed)
	if got := fmt.Sprint(done["output"]); got != "map[a:map[action:approve approved:true text:ship it] d:answer of A.draft]" {
		t.Errorf("output %s", got)
	}
	// Reused: refused, for GET and POST, and nothing runs again.
	if status, body, _ := e.page("POST", link, url.Values{"decision": {"approve"}}); status != 409 || !strings.Contains(body, "LINK_USED") {
		t.Errorf("reused link: %d %s", status, body)
	}
	if status, body, _ := e.page("GET", link, nil); status != 409 || !strings.Contains(body, "LINK_USED") {
		t.Errorf("reused link page: %d %s", status, body)
	}
	if n := e.count("A.draft"); n != 1 {
		t.Errorf("A.draft ran %d times", n)
	}
}

// Decline with a reason, as JSON: the run gets approved false and the reason.
func TestApprovalDeclineJSON(t *testing.T) {
	e := newEnv(t, opts{})
	id, link := e.pausedAsk()
	req, _ := http.NewRequest("POST", link, strings.NewReader(`{"decision": "decline", "reason": "write to drafts/ instead"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("decline: %d", resp.StatusCode)
	}
	done := e.waitStatus(id, runtime.Completed)
	if got := fmt.Sprint(done["output"].(map[string]any)["a"]); got != "map[action:decline approved:false text:write to drafts/ instead]" {
		t.Errorf("answer %s", got)
	}
}

// Forged links: a changed signature, a changed run id, another run's signature, garbage.
func TestApprovalLinkForged(t *testing.T) {
	e := newEnv(t, opts{})
	idA, linkA := e.pausedAsk()
	_, linkB := e.pausedAsk()
	base := e.http.URL + "/approve/"
	tokA, tokB := strings.TrimPrefix(linkA, base), strings.TrimPrefix(linkB, base)
	pa, ma, _ := strings.Cut(tokA, ".")
	pb, _, _ := strings.Cut(tokB, ".")
	flip := []byte(ma)
	flip[3] ^= 1
	raw, _ := base64.RawURLEncoding.DecodeString(pa)
	var l map[string]any
	json.Unmarshal(raw, &l)
	l["e"] = l["e"].(float64) + 86400*365 // a year more
	longer, _ := json.Marshal(l)
	forged := []string{
		pa + "." + string(flip),
		pb + "." + ma, // run B's fields under run A's signature
		base64.RawURLEncoding.EncodeToString(longer) + "." + ma,
		"garbage",
		pa,
		"." + ma,
		strings.Repeat("A", 5000) + "." + ma,
	}
	for _, tok := range forged {
		for _, method := range []string{"GET", "POST"} {
			var form url.Values
			if method == "POST" {
				form = url.Values{"decision": {"approve"}}
			}
			status, body, _ := e.page(method, base+tok, form)
			if status != 403 || !strings.Contains(body, "LINK_FORGED") {
				t.Errorf("%s %s…: %d %s", method, trunc(tok, 30), status, trunc(body, 200))
			}
		}
	}
	e.waitStatus(idA, runtime.Paused)
	if n := e.count("A.draft"); n != 2 {
		t.Errorf("A.draft ran %d times", n)
	}
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// An expired link is refused (GET and POST); a link whose pause was answered another way
// (the API) is refused as used.
func TestApprovalLinkExpiredOrAnswered(t *testing.T) {
	var skew atomic.Int64
	e := newEnv(t, opts{ttl: time.Hour, now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	id, link := e.pausedAsk()
	skew.Store(int64(time.Hour + time.Minute))
	if status, body, _ := e.page("GET", link, nil); status != 410 || !strings.Contains(body, "LINK_EXPIRED") {
		t.Errorf("expired page: %d %s", status, body)
	}
	if status, body, _ := e.page("POST", link, url.Values{"decision": {"approve"}}); status != 410 || !strings.Contains(body, "LINK_EXPIRED") {
		t.Errorf("expired POST: %d %s", status, body)
	}
	e.waitStatus(id, runtime.Paused)
	skew.Store(0)
	e.do("POST", "/api/runs/"+id+"/signal?wait=10s", map[string]any{"channel": "yield", "payload": "yes"}, 200)
	if status, body, _ := e.page("POST", link, url.Values{"decision": {"approve"}}); status != 409 || !strings.Contains(body, "LINK_USED") {
		t.Errorf("a link of an answered pause: %d %s", status, body)
	}
}

// Two people press Approve at once: one continues the run, the other is told it was used.
func TestApprovalLinkRace(t *testing.T) {
	e := newEnv(t, opts{})
	id, link := e.pausedAsk()
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 8 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", link, strings.NewReader(`{"decision": "approve"}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == 202 {
				ok.Add(1)
			} else if resp.StatusCode != 409 {
				t.Errorf("a losing approval: %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	e.waitStatus(id, runtime.Completed)
	if ok.Load() != 1 {
		t.Errorf("%d approvals went through, want 1", ok.Load())
	}
}

// The link is POSTed to notify.webhook as JSON whose text holds it (what a Slack incoming
// webhook takes).
func TestWebhook(t *testing.T) {
	got := make(chan map[string]any, 1)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&m) != nil {
			w.WriteHeader(400)
			return
		}
		got <- m
	}))
	defer hook.Close()
	e := newEnv(t, opts{webhook: hook.URL, public: "https://halo.example.com/"})
	id, link := e.pausedAsk()
	if !strings.HasPrefix(link, "https://halo.example.com/approve/") {
		t.Errorf("link %s does not start with publicUrl", link)
	}
	select {
	case m := <-got:
		text, _ := m["text"].(string)
		if !strings.Contains(text, link) || !strings.Contains(text, "Approve answer of A.draft?") || m["runId"] != id || m["link"] != link {
			t.Errorf("webhook got %v", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no webhook POST")
	}
}
