package studio_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestToken: without the token every page is the sign-in form (401) and shows no run; a
// wrong token is refused; the right one, given once, is kept in an HttpOnly SameSite=Strict
// cookie, and the page that sets it does not show it.
func TestToken(t *testing.T) {
	e := newEnv(t, opts{token: "s3cret-token-for-studio; with \"odd\" bytes"})
	res := e.run("Greet", map[string]any{"name": "Ada"})
	id := str(res["runId"])

	c := e.client()
	for _, path := range []string{"/", "/runs/" + id, "/start", "/start/Greet", "/runs/" + id + "/events", "/live"} {
		st, body, _ := e.page(c, "GET", path, nil)
		if strings.HasSuffix(path, "/events") { // for the page's script: the API's own refusal
			if st != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHORIZED") {
				t.Errorf("GET %s without the token: %d\n%s", path, st, body)
			}
			continue
		}
		if st != http.StatusUnauthorized || !strings.Contains(body, "needs this server&#39;s token") || strings.Contains(body, "Hello, Ada") || strings.Contains(body, "<table") {
			t.Errorf("GET %s without the token: %d\n%s", path, st, body)
		}
	}
	st, body, _ := e.page(c, "POST", "/start/Greet", url.Values{"in.name": {"Eve"}})
	if st != http.StatusUnauthorized || e.runCount() != 1 {
		t.Errorf("a form sent without the token: %d, %d runs\n%s", st, e.runCount(), body)
	}
	st, body, _ = e.page(c, "POST", "/runs/"+id+"/answer", url.Values{"channel": {"yield"}})
	if st != http.StatusUnauthorized || !strings.Contains(body, `name="next" value="/runs/`+id+`"`) || strings.Contains(body, "Sign out") {
		t.Errorf("an answer sent without the token: %d\n%s", st, body)
	}

	st, body, hdr := e.page(c, "GET", "/?token=wrong", nil)
	if st != http.StatusUnauthorized || !strings.Contains(body, "not this server&#39;s token") || hdr.Get("Set-Cookie") != "" {
		t.Errorf("a wrong token: %d %q\n%s", st, hdr.Get("Set-Cookie"), body)
	}

	st, body, hdr = e.page(c, "GET", "/runs/"+id+"?token="+url.QueryEscape(e.token), nil)
	ck := hdr.Get("Set-Cookie")
	if st != 200 || !strings.Contains(ck, "halo_token="+base64.RawURLEncoding.EncodeToString([]byte(e.token))+";") || !strings.Contains(ck, "HttpOnly") || !strings.Contains(ck, "SameSite=Strict") || !strings.Contains(ck, "Path=/") {
		t.Fatalf("the right token: %d, cookie %q", st, ck)
	}
	if strings.Contains(body, "s3cret") || !strings.Contains(body, `url=/runs/`+id) {
		t.Errorf("the sign-in page shows the token, or does not go on to the page without it:\n%s", body)
	}
	st, body, _ = e.page(c, "GET", "/runs/"+id, nil)
	if st != 200 || !strings.Contains(body, "Hello, Ada!") || !strings.Contains(body, `action="/logout"`) {
		t.Errorf("with the cookie: %d\n%s", st, body)
	}

	// The sign-in form does the same; a next address elsewhere is not followed.
	c2 := e.client()
	st, body, hdr = e.page(c2, "POST", "/login", url.Values{"token": {e.token}, "next": {"//evil.example/x"}})
	if st != 200 || !strings.Contains(hdr.Get("Set-Cookie"), "HttpOnly") || strings.Contains(body, "evil.example") {
		t.Errorf("sign-in form: %d %q\n%s", st, hdr.Get("Set-Cookie"), body)
	}
	if st, _, _ := e.page(c2, "GET", "/", nil); st != 200 {
		t.Errorf("after the sign-in form: %d", st)
	}
	st, _, hdr = e.page(c2, "POST", "/logout", url.Values{})
	if st != http.StatusSeeOther || !strings.Contains(hdr.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("sign out: %d %q", st, hdr.Get("Set-Cookie"))
	}
	if st, _, _ := e.page(c2, "GET", "/", nil); st != http.StatusUnauthorized {
		t.Errorf("after signing out: %d", st)
	}
}

// TestCrossSite: a form another site's page sends is refused, with or without a token on
// the server, and starts, answers, cancels, reruns or replays nothing; the API's Host check (DNS
// rebinding) holds for pages too.
func TestCrossSite(t *testing.T) {
	for _, token := range []string{"", "tok-cross-site-1234"} {
		e := newEnv(t, opts{token: token})
		c := e.signedIn()
		paused := e.run("Ask", map[string]any{"x": "cats"})
		id := str(paused["runId"])
		attacks := []struct {
			name string
			hdr  []string
		}{
			{"Sec-Fetch-Site cross-site", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}},
			{"an Origin of another site", []string{"Origin", "https://evil.example", "Sec-Fetch-Site", ""}},
			{"Origin null", []string{"Origin", "null", "Sec-Fetch-Site", ""}},
			{"same-site but another origin", []string{"Origin", "http://localhost:1", "Sec-Fetch-Site", "same-site"}},
		}
		for _, a := range attacks {
			for _, post := range []struct {
				path string
				form url.Values
			}{
				{"/start/Greet", url.Values{"in.name": {"Mallory"}}},
				{"/runs/" + id + "/answer", url.Values{"channel": {"yield"}, "answer": {"approve"}}},
				{"/runs/" + id + "/cancel", url.Values{}},
				{"/runs/" + id + "/rerun", url.Values{}},
				{"/runs/" + id + "/replay", url.Values{}},
				{"/login", url.Values{"token": {"the attacker's token"}}}, // signing the victim in as someone else
				{"/logout", url.Values{}},
			} {
				st, body, _ := e.page(c, "POST", post.path, post.form, a.hdr...)
				if st != http.StatusForbidden {
					t.Errorf("token %q, %s, POST %s: %d, want 403\n%s", token, a.name, post.path, st, body)
				}
			}
		}
		if n := e.runCount(); n != 1 {
			t.Errorf("token %q: %d runs after the attacks, want 1", token, n)
		}
		if m := e.api("GET", "/api/runs/"+id, nil, 200); m["status"] != "paused" {
			t.Errorf("token %q: the paused run is %v", token, m["status"])
		}
		st, body, _ := e.page(c, "GET", "/", nil, "Host", "evil.example")
		if st != http.StatusForbidden || !strings.Contains(body, "FORBIDDEN_HOST") {
			t.Errorf("token %q: Host evil.example: %d\n%s", token, st, body)
		}
	}
}

// TestHeaders: every page forbids framing and inline script, and is not kept in caches.
func TestHeaders(t *testing.T) {
	e := newEnv(t, opts{})
	for _, path := range []string{"/", "/start", "/runs/nope", "/login"} {
		_, _, hdr := e.page(e.client(), "GET", path, nil)
		csp := hdr.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || hdr.Get("X-Frame-Options") != "DENY" ||
			hdr.Get("X-Content-Type-Options") != "nosniff" || hdr.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("GET %s headers: %v", path, hdr)
		}
	}
	st, body, hdr := e.page(e.client(), "GET", "/static/studio.js", nil)
	if st != 200 || !strings.Contains(hdr.Get("Content-Type"), "javascript") || !strings.Contains(body, "EventSource") {
		t.Errorf("studio.js: %d %s", st, hdr.Get("Content-Type"))
	}
	if st, _, _ := e.page(e.client(), "GET", "/static/", nil); st != http.StatusNotFound {
		t.Errorf("the static folder is listed: %d", st)
	}
}

// TestBadInput: an unknown run, an unknown pipeline, inputs of the wrong type, a signal for
// a run that no longer waits, an answer that is not JSON: a clear message on the page, and
// nothing changed.
func TestBadInput(t *testing.T) {
	e := newEnv(t, opts{})
	c := e.client()

	st, body, _ := e.page(c, "GET", "/runs/0123456789abcdef0123456789abcdef", nil)
	if st != http.StatusNotFound || !strings.Contains(body, "There is no run &#34;0123456789abcdef0123456789abcdef&#34; on this server") || !strings.Contains(body, "RUN_NOT_FOUND") {
		t.Errorf("unknown run: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "GET", "/runs/%3Cscript%3Ealert(1)%3C%2Fscript%3E", nil)
	if st != http.StatusNotFound || strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("a run id with a script: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "GET", "/start/Nope", nil)
	if st != http.StatusNotFound || !strings.Contains(body, "There is no pipeline &#34;Nope&#34;") {
		t.Errorf("unknown pipeline: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "GET", "/nowhere", nil)
	if st != http.StatusNotFound || !strings.Contains(body, "Studio has no page GET /nowhere") {
		t.Errorf("unknown page: %d\n%s", st, body)
	}

	// Inputs the API refuses: the form again, with what was typed and why.
	st, body, _ = e.page(c, "POST", "/start/Count", url.Values{"in.n": {"many"}, "in.flag": {"true"}})
	if st != http.StatusBadRequest || !strings.Contains(body, "BAD_INPUT") || !strings.Contains(body, "input n") || !strings.Contains(body, `value="many"`) || !strings.Contains(body, "Nothing was started") {
		t.Errorf("a number that is not one: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "POST", "/start/File", url.Values{"in.t.title": {"Printer"}, "in.t.priority": {"high"}, "in.tags": {`["a"]`}})
	if st != http.StatusBadRequest || !strings.Contains(body, "input t, field priority: want a number") {
		t.Errorf("a schema field of the wrong type: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "POST", "/start/File", url.Values{"in.t.title": {"Printer"}, "in.t.priority": {"2"}, "in.tags": {`not a list`}})
	if st != http.StatusBadRequest || !strings.Contains(body, "BAD_INPUT") || !strings.Contains(body, "tags") {
		t.Errorf("a list that is not JSON: %d\n%s", st, body)
	}
	if n := e.runCount(); n != 0 {
		t.Fatalf("%d runs started by refused forms", n)
	}

	// A run that no longer waits: the page says so, and the run is as it was.
	done := e.run("Greet", map[string]any{"name": "Ada"})
	id := str(done["runId"])
	before := e.api("GET", "/api/runs/"+id, nil, 200)
	st, body, _ = e.page(c, "POST", "/runs/"+id+"/answer", url.Values{"channel": {"yield"}, "answer": {"approve"}})
	if st != http.StatusConflict || !strings.Contains(body, "Nothing was sent") || !strings.Contains(body, "NOT_WAITING") || !strings.Contains(body, "Hello, Ada!") {
		t.Errorf("answering a completed run: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "POST", "/runs/"+id+"/cancel", url.Values{})
	if st != http.StatusConflict || !strings.Contains(body, "NOT_RUNNING") {
		t.Errorf("cancelling a completed run: %d\n%s", st, body)
	}
	after := e.api("GET", "/api/runs/"+id, nil, 200)
	if str(before) != str(after) {
		t.Errorf("the run changed:\n%v\n%v", before, after)
	}

	// A paused run: an answer on the wrong channel, and one that is not JSON, send nothing.
	paused := e.run("Shop", map[string]any{"id": "o-1"})
	pid := str(paused["runId"])
	st, body, _ = e.page(c, "POST", "/runs/"+pid+"/answer", url.Values{"channel": {"yield"}, "answer": {"paid"}})
	if st != http.StatusConflict || !strings.Contains(body, `waits on channel &#34;payment&#34;`) || !strings.Contains(body, ">paid</textarea>") {
		t.Errorf("the wrong channel: %d\n%s", st, body)
	}
	st, body, _ = e.page(c, "POST", "/runs/"+pid+"/answer", url.Values{"channel": {"payment"}, "answer": {"{not json"}, "as": {"json"}})
	if st != http.StatusBadRequest || !strings.Contains(body, "The answer is not JSON") {
		t.Errorf("an answer that is not JSON: %d\n%s", st, body)
	}
	if m := e.api("GET", "/api/runs/"+pid, nil, 200); m["status"] != "paused" {
		t.Errorf("the paused run is %v", m["status"])
	}
	// The right answer, as JSON, goes through the API's signal.
	st, _, hdr := e.page(c, "POST", "/runs/"+pid+"/answer", url.Values{"channel": {"payment"}, "answer": {`{"amount": 12}`}, "as": {"json"}})
	if st != http.StatusSeeOther || hdr.Get("Location") != "/runs/"+pid+"?sent=answer" {
		t.Fatalf("answer: %d %v", st, hdr)
	}
	m := e.waitStatus(pid, "completed")
	if got := str(m["output"]); got != "map[id:o-1 paid:map[amount:12]]" {
		t.Errorf("output %s", got)
	}
}

// TestEscaped: HTML and script in inputs, prompts, answers and tool results are shown as
// text. (TestBrowserNoScriptRuns proves in a browser that none of it runs.)
func TestEscaped(t *testing.T) {
	e := newEnv(t, opts{})
	res := e.run("Greet", map[string]any{"name": `<script>document.title="pwned"</script><img src=x onerror=alert(1)>`})
	st, body, _ := e.page(e.client(), "GET", "/runs/"+str(res["runId"]), nil)
	if st != 200 {
		t.Fatalf("%d\n%s", st, body)
	}
	if strings.Contains(body, "<script>document") || strings.Contains(body, "<img src=x") || !strings.Contains(body, "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;") {
		t.Errorf("not escaped:\n%s", body)
	}
}

// TestEventsRelay: a run's page gets the API's event stream through Studio with the
// cookie's token, resumed after Last-Event-ID.
func TestEventsRelay(t *testing.T) {
	e := newEnv(t, opts{token: "tok-relay-0123456789"})
	res := e.run("Greet", map[string]any{"name": "Ada"})
	id := str(res["runId"])
	c := e.signedIn()
	st, body, hdr := e.page(c, "GET", "/runs/"+id+"/events", nil, "Last-Event-ID", "1")
	if st != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %v\n%s", st, hdr, body)
	}
	if strings.Contains(body, "id: 1\n") || !strings.Contains(body, "id: 2\nevent: stage\n") || !strings.Contains(body, "event: run\n") {
		t.Errorf("the stream after event 1:\n%s", body)
	}
	st, body, _ = e.page(e.client(), "GET", "/runs/"+id+"/events", nil)
	if st != http.StatusUnauthorized || strings.Contains(body, "Hello") {
		t.Errorf("without the cookie: %d\n%s", st, body)
	}
}

// TestCancel: the Cancel button of a paused run fails it with CANCELLED through the API.
func TestCancel(t *testing.T) {
	e := newEnv(t, opts{})
	paused := e.run("Shop", map[string]any{"id": "o-9"})
	id := str(paused["runId"])
	c := e.client()
	if _, body, _ := e.page(c, "GET", "/runs/"+id, nil); !strings.Contains(body, `action="/runs/`+id+`/cancel"`) {
		t.Fatalf("no Cancel button:\n%s", body)
	}
	st, _, hdr := e.page(c, "POST", "/runs/"+id+"/cancel", url.Values{})
	if st != http.StatusSeeOther || hdr.Get("Location") != "/runs/"+id+"?sent=cancel" {
		t.Fatalf("cancel: %d %v", st, hdr)
	}
	m := e.waitStatus(id, "failed")
	if !strings.Contains(str(m["error"]), "CANCELLED") {
		t.Errorf("error %v", m["error"])
	}
	if _, body, _ := e.page(c, "GET", "/runs/"+id+"?sent=cancel", nil); !strings.Contains(body, "The run was asked to stop.") || !strings.Contains(body, "CANCELLED") || strings.Contains(body, `/cancel"`) {
		t.Errorf("after cancelling:\n%s", body)
	}
}

// TestSignInNext: after signing in, the browser goes on only to a path of this server.
func TestSignInNext(t *testing.T) {
	e := newEnv(t, opts{token: "tok-next-0123456789"})
	for next, want := range map[string]string{
		"/runs/abc?x=1":        "/runs/abc?x=1",
		"//evil.example/":      "/",
		"/\\evil.example":      "/",
		"/\t/evil.example":     "/",
		"/\n/evil.example":     "/",
		"https://evil.example": "/",
		"javascript:alert(1)":  "/",
		"":                     "/",
	} {
		st, body, _ := e.page(e.client(), "POST", "/login", url.Values{"token": {e.token}, "next": {next}})
		if st != 200 || !strings.Contains(body, `content="0;url=`+want+`"`) || strings.Contains(body, "evil") {
			t.Errorf("next %q: %d\n%s", next, st, body)
		}
	}
}
