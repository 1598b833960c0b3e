package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	if !p.logged("request: method=GET path=/ status=200") {
		t.Errorf("Studio's requests are not logged:\n%s", p.stderr())
	}
	// At start, halo serve said where Studio is and how to sign in, without the token.
	want := "Studio: " + p.url + "/ (sign in once: open " + p.url + "/?token=<HALO_SERVE_TOKEN>, or give the token in its sign-in form)\n"
	if log := p.stderrWith(want); !strings.Contains(log, want) || strings.Contains(log, "studio-token-0123456789") {
		t.Errorf("the start's Studio line (want %q):\n%s", want, log)
	}
	// Without a token, the address alone.
	q := startServe(t, project(t), nil)
	if log := q.stderrWith("Studio: " + q.url + "/\n"); !strings.Contains(log, "Studio: "+q.url+"/\n") {
		t.Errorf("Studio's address without a token:\n%s", log)
	}
}

// stderrWith returns what p wrote to stderr once it holds want (the line after "listening"
// may still be on its way when startServe returns), or after 10 seconds.
func (p *proc) stderrWith(want string) string {
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.stderr(), want) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return p.stderr()
}

// The comment lines right above a pipeline are its description everywhere a pipeline is
// described: /mcp's tools/list, the API's /api/pipelines and Studio's start pages (as
// docs/language.md says). A comment with a blank line between is not.
func TestDocCommentIsTheDescription(t *testing.T) {
	dir := t.TempDir()
	src := "# not about Greet: a blank line follows\n\n" +
		"# Greets someone by name.\n# Then waves.\npipeline Greet(name: String) -> Result:\n  name |> System.Value()\n\n" +
		"pipeline Plain(x: String) -> Result:\n  x |> System.Value()\n"
	if err := os.WriteFile(filepath.Join(dir, "flows.halo"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mocks.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, nil)
	const want = "Greets someone by name.\nThen waves."

	_, api := p.do("GET", "/api/pipelines", "")
	descs := map[string]any{}
	for _, pl := range api["pipelines"].([]any) {
		m := pl.(map[string]any)
		descs[m["name"].(string)] = m["description"]
	}
	// Without a doc comment, a description made from its signature.
	if descs["Greet"] != want || descs["Plain"] != "Runs the Halo pipeline Plain(x: String) -> Result." {
		t.Errorf("/api/pipelines descriptions: %q", descs)
	}

	status, list := p.do("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	tools := map[string]any{}
	for _, tl := range list["result"].(map[string]any)["tools"].([]any) {
		m := tl.(map[string]any)
		tools[m["name"].(string)] = m["description"]
	}
	if status != 200 || tools["Greet"] != want || strings.Contains(fmt.Sprint(tools["Plain"]), "not about") {
		t.Errorf("/mcp tools/list descriptions: %d %q", status, tools)
	}

	for _, page := range []string{"/start", "/start/Greet"} {
		resp, err := http.Get(p.url + page)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `<p class="desc">Greets someone by name.`) || strings.Contains(string(b), "not about Greet") {
			t.Errorf("Studio %s: %d\n%s", page, resp.StatusCode, b)
		}
	}
}
