package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/serve"
)

// slowPost starts a POST whose body is sent as far as sent and then waits (a stranger
// trickling it); the answer arrives on the channel. close(hold) ends the body.
func slowPost(t *testing.T, url, contentType, token, sent string) (<-chan *http.Response, chan struct{}) {
	t.Helper()
	pr, pw := io.Pipe()
	hold := make(chan struct{})
	go func() {
		pw.Write([]byte(sent))
		<-hold
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", url, pr)
	req.ContentLength = 1000
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	got := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- &http.Response{StatusCode: 0, Body: io.NopCloser(strings.NewReader(err.Error()))}
			return
		}
		got <- resp
	}()
	return got, hold
}

func within(t *testing.T, what string, got <-chan *http.Response, d time.Duration) (int, string) {
	t.Helper()
	select {
	case resp := <-got:
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	case <-time.After(d):
		t.Fatalf("%s: no answer in %v", what, d)
	}
	return 0, ""
}

// TestLinkBeforeBody is issue 27 item 5's first attack: POST /approve/<anything> read the
// body before it checked the link, and without a deadline. A link this server did not sign
// is now refused at once, whatever the body does.
func TestLinkBeforeBody(t *testing.T) {
	e := newEnv(t, opts{token: "tok"})
	got, hold := slowPost(t, e.http.URL+"/approve/AAAA.BBBB", "application/x-www-form-urlencoded", "", "decision=approve&reason=")
	defer close(hold)
	if st, body := within(t, "a forged link", got, 3*time.Second); st != http.StatusForbidden || !strings.Contains(body, "LINK_FORGED") {
		t.Errorf("a forged link with a trickled body: %d %s", st, body)
	}
}

// TestBodyDeadlines: a body that stops coming is cut off at the deadline, with or without
// the token (the link's is shorter), and the run it was to answer is left as it was.
// It holds for the handler in an http.Server of its own, and through Server.Serve, as halo
// serve answers (its http.Server has deadlines of its own: headers, idle connections).
func TestBodyDeadlines(t *testing.T) {
	for _, served := range []bool{false, true} {
		t.Run(fmt.Sprintf("served=%v", served), func(t *testing.T) { testBodyDeadlines(t, served) })
	}
}

func testBodyDeadlines(t *testing.T, served bool) {
	e := newEnv(t, opts{token: "tok", bodyTimeout: 400 * time.Millisecond, unauthTimeout: 200 * time.Millisecond, served: served})
	got, hold := slowPost(t, e.http.URL+"/api/runs", "application/json", "tok", `{"pipeline": "Thr`)
	defer close(hold)
	if st, _ := within(t, "a trickled API body", got, 5*time.Second); st != http.StatusBadRequest && st != http.StatusRequestTimeout && st != 0 {
		t.Errorf("a trickled API body: %d", st)
	}
	id, link := e.pausedAsk()
	got, hold2 := slowPost(t, link, "application/x-www-form-urlencoded", "", "decision=appr")
	defer close(hold2)
	if st, _ := within(t, "a trickled approval", got, 5*time.Second); st == http.StatusOK {
		t.Errorf("a trickled approval was taken")
	}
	if m := e.do("GET", "/api/runs/"+id, nil, 200); m["status"] != "paused" {
		t.Errorf("the run is %v", m["status"])
	}
}

// TestLongAnswerNotCut: a request with the token whose body came in time may take longer
// than BodyTimeout to be answered (a ?wait for a run, a long tools/call): through Serve, as
// halo serve answers, the body's read deadline does not cut the answer when it passes.
func TestLongAnswerNotCut(t *testing.T) {
	const bodyTimeout = 200 * time.Millisecond
	e := newEnv(t, opts{token: "tok", gate: true, served: true, bodyTimeout: bodyTimeout})
	got := make(chan map[string]any, 1)
	go func() {
		got <- e.do("POST", "/api/runs?wait=1m", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 200)
	}()
	time.Sleep(3 * bodyTimeout) // the call is held past the body's deadline
	e.gate <- struct{}{}
	select {
	case m := <-got:
		if m["status"] != "completed" {
			t.Errorf("the answer after the body's deadline: %v", m)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer")
	}
}

// TestUnauthenticatedCap: requests without the token take one of a few places; when they are
// all held, another such request is answered 503 at once, while requests with the token and
// /healthz are answered as ever.
func TestUnauthenticatedCap(t *testing.T) {
	e := newEnv(t, opts{token: "tok", maxUnauth: 2, unauthTimeout: 30 * time.Second})
	_, link := e.pausedAsk()
	var holds []chan struct{}
	var answers []<-chan *http.Response
	for range 2 {
		got, hold := slowPost(t, link, "application/x-www-form-urlencoded", "", "decision=appr")
		holds, answers = append(holds, hold), append(answers, got)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			for _, h := range holds {
				close(h)
			}
		})
	}
	defer release()
	// Once the two are being handled (their bodies read), a third is refused.
	deadline := time.Now().Add(10 * time.Second)
	for serve.Unauthenticated(e.srv) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests without the token are being answered, want 2", serve.Unauthenticated(e.srv))
		}
		time.Sleep(5 * time.Millisecond)
	}
	status, body, _ := e.page("GET", link, nil)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "TOO_MANY_REQUESTS") {
		t.Errorf("a third request without the token: %d %s", status, body)
	}
	e.do("GET", "/api/runs", nil, 200)
	if resp := e.req("GET", "/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}
	release()
	for _, got := range answers {
		within(t, "a held approval", got, 5*time.Second)
	}
	if status, _, _ := e.page("GET", link, nil); status == http.StatusServiceUnavailable {
		t.Errorf("places are not given back")
	}
}
