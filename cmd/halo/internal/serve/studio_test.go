package serve_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
)

// halo serve serves Studio at /: behind the token, which a browser gives once and keeps in
// a cookie (host/studio's tests drive the pages in a real browser).
func TestServeStudio(t *testing.T) {
	dir := project(t)
	p := startServe(t, dir, []string{"HALO_SERVE_TOKEN=studio-token-0123456789"})
	req, _ := http.NewRequest("POST", p.url+"/api/runs?wait=20s", strings.NewReader(`{"pipeline": "Three", "inputs": {"x": "a"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer studio-token-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	get := func(c *http.Client, path string) (int, string) {
		resp, err := c.Get(p.url + path)
		if err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, p.stderr())
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get(http.DefaultClient, "/"); st != 401 || !strings.Contains(body, "Halo Studio") || strings.Contains(body, "Three") {
		t.Errorf("Studio without the token: %d\n%s", st, body)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if st, _ := get(c, "/?token=studio-token-0123456789"); st != 200 {
		t.Fatalf("sign in: %d", st)
	}
	if st, body := get(c, "/"); st != 200 || !strings.Contains(body, "Three") || !strings.Contains(body, `data-status="completed"`) {
		t.Errorf("the runs list: %d\n%s", st, body)
	}
	if !strings.Contains(p.stderr(), "request: method=GET path=/ status=200") {
		t.Errorf("Studio's requests are not logged:\n%s", p.stderr())
	}
	// At start, halo serve said where Studio is and how to sign in, without the token.
	want := "Studio: " + p.url + "/ (sign in once: open " + p.url + "/?token=<HALO_SERVE_TOKEN>, or give the token in its sign-in form)\n"
	if log := p.stderr(); !strings.Contains(log, want) || strings.Contains(log, "studio-token-0123456789") {
		t.Errorf("the start's Studio line (want %q):\n%s", want, log)
	}
	// Without a token, the address alone.
	q := startServe(t, project(t), nil)
	if !strings.Contains(q.stderr(), "Studio: "+q.url+"/\n") {
		t.Errorf("Studio's address without a token:\n%s", q.stderr())
	}
}
