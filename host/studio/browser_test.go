package studio_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The browser tests drive Studio in headless Chromium (Debian's chromium package, which
// scripts/setup-test-deps.sh installs). They run in CI and as root, where a missing
// Chromium fails them; elsewhere (a developer's machine, not root) they skip and say why.

var screenshots = flag.Bool("screenshots", false, "write the screenshots of TestBrowserScreenshots to docs/ (docs/studio.md shows them)")

// browser is one Chromium for the package's tests; each test opens its own incognito
// context in it (cookies of one test never reach another).
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel() // ends Chromium and every process it started
	}
	os.Exit(code)
}

// chromiumPath finds Chromium: $HALO_CHROMIUM, else chromium or google-chrome on PATH.
func chromiumPath() string {
	if p := os.Getenv("HALO_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// newTab returns a fresh incognito tab of the package's Chromium, started on first use.
func newTab(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		msg := "Chromium is not installed: the browser tests need it (Debian: apt-get install -y chromium; scripts/setup-test-deps.sh does it as root)"
		if os.Getenv("CI") != "" || os.Geteuid() == 0 {
			t.Fatal(msg + ". They never skip in CI or as root.")
		}
		t.Skip(msg + ". Skipped: not root and not CI.")
	}
	browser.once.Do(func() {
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.Headless, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
			// Chromium's sandbox needs privileges a container (and root) does not give it; the
			// pages loaded are the test's own.
			chromedp.NoSandbox,
			// The machine has no network: nothing may try to reach one.
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-default-apps", true),
			chromedp.Flag("disable-extensions", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,AutofillServerCommunication"),
			chromedp.Flag("metrics-recording-only", true),
			chromedp.Flag("no-pings", true),
			chromedp.WindowSize(1280, 900),
			// No UserDataDir: chromedp makes a fresh one and removes it, with any process
			// still using it, when the browser is closed.
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel() }
		browser.err = chromedp.Do(bctx) // starts Chromium
	})
	if browser.err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(tcancel)
	return tctx
}

// do runs browser actions, failing the test with what the page showed.
func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v\npage text:\n%s", what, err, trim(html, 3000))
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](laidOut(js)))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitJS waits until a JavaScript expression is true, failing with the page's text. It
// looks again after an error, as the page may be between two documents.
func waitJS(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](laidOut("!!("+js+")")))
		if err == nil && ok {
			return
		}
		last = err
		if ctx.Err() != nil {
			break
		}
		time.Sleep(40 * time.Millisecond)
	}
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText : "")`))
	t.Fatalf("%s: not so after 20 s (%s; last error %v)\npage:\n%s", what, js, last, trim(page, 3000))
}

// laidOut is the expression js evaluated on the page as a reader scrolling through it sees
// it. The waterfall's spans are laid out only near the view (content-visibility: auto), and
// innerText leaves out those that are not, so every span is laid out first: otherwise what a
// test reads depends on how tall the window is and how fast the page came.
func laidOut(js string) string {
	return `(document.querySelectorAll(".span").forEach(e => e.style.contentVisibility = "visible"), (` + js + `))`
}

// text is the page's text.
func text(t *testing.T, ctx context.Context) string {
	return eval[string](t, ctx, `document.body.innerText`)
}

func trim(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// status is the HTTP status of the page the tab shows.
func status(t *testing.T, ctx context.Context) int {
	return eval[int](t, ctx, `performance.getEntriesByType("navigation")[0].responseStatus`)
}

// signIn gives the token once, in the address.
func signIn(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	do(t, ctx, "sign in", chromedp.Navigate(e.http.URL+"/?token="+e.token))
	waitJS(t, ctx, "the runs list after signing in", `location.pathname === "/" && location.search === "" && document.querySelector("h1") && document.querySelector("h1").textContent === "Runs"`)
}

// TestBrowserStartRunLive: a run started from the form shows on its page, then in the
// list, and both follow it to the end without a reload; a run started elsewhere appears in
// the open list by itself.
func TestBrowserStartRunLive(t *testing.T) {
	e := newEnv(t, opts{token: "browser-token-0123456789", gate: true})
	ctx := newTab(t)
	signIn(t, ctx, e)

	// The form, built from the pipeline's parameters.
	do(t, ctx, "open the form", chromedp.Navigate(e.http.URL+"/start"), chromedp.Click(chromedp.CSS(`a[href="/start/Greet"]`)))
	waitJS(t, ctx, "the form of Greet", `document.querySelector("#f-in-name") !== null`)
	do(t, ctx, "fill and send the form",
		chromedp.SendKeys(chromedp.CSS("#f-in-name"), "Ada"),
		chromedp.Click(chromedp.CSS(`form.start-form button[type=submit]`)))
	waitJS(t, ctx, "the run's page", `location.pathname.startsWith("/runs/") && document.querySelector(".status") !== null`)
	id := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/runs/")
	if got := eval[string](t, ctx, `document.querySelector("#head .status").textContent`); got != "running" {
		t.Fatalf("the new run is %q", got)
	}

	// The list shows it running; it completes there without a reload.
	do(t, ctx, "open the list", chromedp.Navigate(e.http.URL+"/"))
	waitJS(t, ctx, "the run in the list", fmt.Sprintf(`document.querySelector('tr[data-run="%s"][data-status="running"]') !== null`, id))
	eval[any](t, ctx, `window.__notReloaded = true`)
	e.gate <- struct{}{}
	waitJS(t, ctx, "the run completes in the list", fmt.Sprintf(`document.querySelector('tr[data-run="%s"][data-status="completed"]') !== null`, id))

	// A run started another way (the API) appears by itself, and completes.
	res := e.api("POST", "/api/runs", map[string]any{"pipeline": "Greet", "inputs": map[string]any{"name": "Grace"}}, 202)
	id2 := str(res["runId"])
	waitJS(t, ctx, "a run started through the API appears", fmt.Sprintf(`document.querySelector('tr[data-run="%s"]') !== null`, id2))
	e.gate <- struct{}{}
	waitJS(t, ctx, "and completes", fmt.Sprintf(`document.querySelector('tr[data-run="%s"][data-status="completed"]') !== null`, id2))
	if !eval[bool](t, ctx, `window.__notReloaded === true`) {
		t.Fatal("the list was reloaded")
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("tr.run")].map(r => r.dataset.run)`)
	if len(rows) != 2 || rows[0] != id2 || rows[1] != id {
		t.Errorf("rows %v, want newest first [%s %s]", rows, id2, id)
	}

	// A run's page follows the run too.
	do(t, ctx, "start a third run", chromedp.Navigate(e.http.URL+"/start/Greet"),
		chromedp.SendKeys(chromedp.CSS("#f-in-name"), "Linus"),
		chromedp.Click(chromedp.CSS(`form.start-form button[type=submit]`)))
	waitJS(t, ctx, "its page", `location.pathname.startsWith("/runs/") && document.querySelector("#head .status").textContent === "running"`)
	eval[any](t, ctx, `window.__notReloaded = true`)
	e.gate <- struct{}{}
	waitJS(t, ctx, "the output appears", `document.querySelector("#head .status").textContent === "completed" && document.querySelector("#outcome").innerText.includes("Hello, Linus!")`)
	if !eval[bool](t, ctx, `window.__notReloaded === true`) {
		t.Fatal("the run's page was reloaded")
	}
	if got := text(t, ctx); !strings.Contains(got, "gpt-4o") || !strings.Contains(got, "tokens") {
		t.Errorf("the model call's details are not shown:\n%s", got)
	}
}

// TestBrowserSearch: the search box is reached and sent with the keyboard; the filter is in
// the address; the live list keeps to it (a run that matches appears by itself, one that
// does not stays out); Rerun on a run's page starts it again with its inputs.
func TestBrowserSearch(t *testing.T) {
	e := newEnv(t, opts{})
	e.run("Greet", map[string]any{"name": "Ada"})
	grace := str(e.run("Greet", map[string]any{"name": "Grace"})["runId"])
	ctx := newTab(t)
	do(t, ctx, "the list", chromedp.Navigate(e.http.URL+"/"))
	waitJS(t, ctx, "rows", `document.querySelectorAll("tr.run").length === 2`)
	tabTo(t, ctx, "#q", 20)
	do(t, ctx, "search", chromedp.KeyEvent("GRACE"), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, "the filtered list", `location.search === "?q=GRACE&status=&pipeline=&since=&until=&mincost=" && document.readyState === "complete" && document.querySelectorAll("tr.run").length === 1`)
	if got := eval[string](t, ctx, `document.querySelector("tr.run").dataset.run`); got != grace {
		t.Errorf("the row is %s, want %s", got, grace)
	}
	e.api("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Greet", "inputs": map[string]any{"name": "Linus"}}, 200)
	hopper := str(e.api("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Greet", "inputs": map[string]any{"name": "Grace Hopper"}}, 200)["runId"])
	waitJS(t, ctx, "a new run that matches appears", fmt.Sprintf(`document.querySelector('tr[data-run="%s"]') !== null`, hopper))
	if n := eval[int](t, ctx, `document.querySelectorAll("tr.run").length`); n != 2 {
		t.Errorf("%d rows in the live filtered list, want 2", n)
	}
	do(t, ctx, "the run", chromedp.Click(chromedp.CSS(`#run-`+grace)))
	waitJS(t, ctx, "its page", `location.pathname.startsWith("/runs/") && document.readyState === "complete"`)
	do(t, ctx, "rerun", chromedp.Click(chromedp.CSS(`form[action$="/rerun"] button`)))
	waitJS(t, ctx, "the new run", `location.search === "?sent=rerun" && document.readyState === "complete" && document.querySelector("#outcome").innerText.includes("Hello, Grace!")`)
	if id := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/runs/"); id == grace || e.runCount() != 5 {
		t.Errorf("the rerun is %s, %d runs", id, e.runCount())
	}
}

// TestBrowserAnswer: a paused run stands out in the list; its page shows the question and
// a text box, used with the keyboard alone; the answer reaches the (scripted) model and
// the run completes on the page.
func TestBrowserAnswer(t *testing.T) {
	e := newEnv(t, opts{token: "browser-token-answer-42"})
	ctx := newTab(t)
	signIn(t, ctx, e)
	paused := e.run("Ask", map[string]any{"x": "cats"})
	id := str(paused["runId"])
	e.run("Greet", map[string]any{"name": "Ada"})

	do(t, ctx, "the list", chromedp.Navigate(e.http.URL+"/"))
	waitJS(t, ctx, "the paused run stands out", fmt.Sprintf(`document.querySelector('tr.paused[data-run="%s"]') !== null && document.querySelector(".waiting-banner") !== null`, id))
	if bg := eval[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelector('tr[data-run="%s"]')).backgroundColor`, id)); bg == "rgba(0, 0, 0, 0)" {
		t.Errorf("the paused row looks like the others (background %s)", bg)
	}
	if got := eval[string](t, ctx, `document.querySelector(".waiting-banner").innerText`); got != "1 run waits for an answer" {
		t.Errorf("banner %q", got)
	}

	// Keyboard only: Tab to the run's link and Enter, Tab to the answer box, type, Tab to
	// the button (past the JSON box) and Enter.
	do(t, ctx, "focus the page", chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	tabTo(t, ctx, fmt.Sprintf(`#run-%s`, id), 40)
	do(t, ctx, "open the run with Enter", chromedp.KeyEvent("\r"))
	waitJS(t, ctx, "the run's page", `document.querySelector("#answer") !== null`)
	if q := eval[string](t, ctx, `document.querySelector("#wait").innerText`); !strings.Contains(q, "Approve a draft about cats?") || !strings.Contains(q, "waits for an answer on yield") {
		t.Errorf("the question is not shown:\n%s", q)
	}
	tabTo(t, ctx, "#answer", 40)
	do(t, ctx, "type the answer", chromedp.KeyEvent("make it shorter"))
	tabTo(t, ctx, `form.answer button[type=submit]`, 5)
	eval[any](t, ctx, `window.__before = true`)
	do(t, ctx, "send it with Enter", chromedp.KeyEvent("\r"))
	waitJS(t, ctx, "the run completes", `location.search === "?sent=answer" && document.querySelector("#head .status").textContent === "completed"`)
	if got := eval[string](t, ctx, `document.querySelector(".notice").innerText`); got != "Your answer was sent: the run goes on." {
		t.Errorf("notice %q", got)
	}
	req, ok := e.lastRequest("Revise with:")
	if !ok || !strings.Contains(req.Messages[0].Text, "make it shorter") {
		t.Errorf("the model did not get the answer: %+v", req)
	}
	if out := eval[string](t, ctx, `document.querySelector("#outcome").innerText`); !strings.Contains(out, "Revise with: make it shorter") {
		t.Errorf("output:\n%s", out)
	}

	// The same page, sent again (the browser's back button and a resend): refused, and
	// nothing changes.
	before := e.api("GET", "/api/runs/"+id, nil, 200)
	do(t, ctx, "go back", chromedp.NavigateBack())
	st, body, _ := e.page(e.signedIn(), "POST", "/runs/"+id+"/answer", map[string][]string{"channel": {"yield"}, "answer": {"again"}})
	if st != 409 || !strings.Contains(body, "Nothing was sent") {
		t.Errorf("a second answer: %d", st)
	}
	if after := e.api("GET", "/api/runs/"+id, nil, 200); str(after) != str(before) {
		t.Errorf("the run changed")
	}
}

// tabTo presses Tab until the element sel has the focus.
func tabTo(t *testing.T, ctx context.Context, sel string, most int) {
	t.Helper()
	for range most {
		if eval[bool](t, ctx, fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, sel)) {
			return
		}
		do(t, ctx, "Tab", chromedp.KeyEvent("\t"))
	}
	t.Fatalf("%d presses of Tab did not reach %s (focus is on %s)", most, sel, eval[string](t, ctx, `document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : "nothing"`))
}

// TestBrowserToolsAndViolation: a run whose agent read and wrote notes, with a call the
// policy refused, as its waterfall shows it: each model request with its model, tokens and
// cost; each call the agent chose one row with its decision (the refused one with its
// violation's policy and rule); the conversation as the model saw it; the cost tables.
func TestBrowserToolsAndViolation(t *testing.T) {
	e := newEnv(t, opts{})
	ctx := newTab(t)
	res := e.run("Tidy", map[string]any{"task": "merge duplicates"})
	if res["status"] != "completed" {
		t.Fatalf("Tidy: %v", res)
	}
	do(t, ctx, "the run's page", chromedp.Navigate(e.http.URL+"/runs/"+str(res["runId"])))
	waitJS(t, ctx, "the waterfall", `document.querySelector("#timeline .span") !== null`)
	// One row a call the agent chose: the call that ran and its decision are one span.
	decisions := eval[[]string](t, ctx, `[...document.querySelectorAll("#timeline .span[class*='decision-']")].map(e => e.querySelector(".name").textContent + "=" + [...e.querySelectorAll(":scope > details .facts div")].find(d => d.querySelector("dt").textContent === "decision").querySelector("dd").textContent)`)
	if got := strings.Join(decisions, " "); got != "Files.read=allowed Files.write=refused Files.write=allowed" {
		t.Errorf("decisions shown: %s", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#timeline .span.k-violation").length`); n != 0 {
		t.Errorf("the violation of the refused call is a row of its own too (%d)", n)
	}
	// The card opens with the keyboard: Tab to the refused call's row, Enter.
	tabTo(t, ctx, "#timeline .span.violation > details > summary", 60)
	do(t, ctx, "open the card", chromedp.KeyEvent("\r"))
	v := eval[string](t, ctx, `document.querySelector("#timeline .span.violation > details").open ? document.querySelector("#timeline .span.violation .card").innerText : ""`)
	for _, want := range []string{"Careful", "DenyArgs", "refused", `"path": "secret.md"`} {
		if !strings.Contains(v, want) {
			t.Errorf("the refused call's card does not show %q:\n%s", want, v)
		}
	}
	if got := eval[string](t, ctx, `document.querySelector(".violations-table tbody tr").innerText`); !strings.Contains(got, "Careful") || !strings.Contains(got, "DenyArgs") {
		t.Errorf("context.meta.violations: %s", got)
	}
	llm := eval[[]string](t, ctx, `[...document.querySelectorAll("#timeline .span.k-llm .card")].map(e => e.textContent)`)
	if len(llm) != 3 {
		t.Fatalf("%d model requests shown", len(llm))
	}
	for _, l := range llm {
		if !strings.Contains(l, "gpt-4o-mini") || !strings.Contains(l, "in,") || !strings.Contains(l, "$0.000") {
			t.Errorf("a model request without model, tokens or cost:\n%s", l)
		}
	}
	// The tool result as the event holds it: redacted by the agent's policy.
	if tl := eval[string](t, ctx, `document.querySelector("#timeline").textContent`); !strings.Contains(tl, "[REDACTED:Email]") || strings.Contains(tl, "ada@example.com") {
		t.Errorf("the tool result is not shown redacted:\n%s", tl)
	}
	// The conversation: the prompt, three answers, and the three results the model read,
	// the refusal among them.
	roles := eval[[]string](t, ctx, `[...document.querySelectorAll("#conversations .msg")].map(m => m.className.split(" ")[1])`)
	if got := strings.Join(roles, " "); got != "m-user m-assistant m-tool m-assistant m-tool m-tool m-assistant" && got != "m-system m-user m-assistant m-tool m-assistant m-tool m-tool m-assistant" {
		t.Errorf("the conversation's turns: %s", got)
	}
	if c := eval[string](t, ctx, `document.querySelector("#conversations").textContent`); !strings.Contains(c, "decision-refused") && !strings.Contains(c, "refused") {
		t.Errorf("the conversation does not show the refusal:\n%s", c)
	}
	// The cost tables: one row per stage, one per model, with time, tokens and cost.
	if n := eval[int](t, ctx, `document.querySelectorAll(".chart tbody tr").length`); n != 1 {
		t.Errorf("%d rows in the table by stage", n)
	}
	if got := eval[string](t, ctx, `document.querySelector(".chart tbody tr").innerText`); !strings.Contains(got, "Clerk.work") || !strings.Contains(got, "$") || !strings.Contains(got, "in,") {
		t.Errorf("row by stage %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector(".models tbody tr").innerText`); !strings.Contains(got, "gpt-4o-mini") || !strings.Contains(got, "3") {
		t.Errorf("row by model %q", got)
	}
	// The stage's place links to the source view, with its line marked.
	do(t, ctx, "the source", chromedp.Click(chromedp.CSS(".chart tbody a.at")))
	waitJS(t, ctx, "the source view", `location.pathname === "/source" && document.querySelector("li.mark") !== null`)
	if got := eval[string](t, ctx, `document.querySelector("li.mark").textContent`); !strings.Contains(got, "Clerk") {
		t.Errorf("the marked line: %q", got)
	}
}

// TestBrowserNoScriptRuns: script and HTML in an input, a prompt, a model's answer and a
// tool result are shown as text, and none of it runs.
func TestBrowserNoScriptRuns(t *testing.T) {
	e := newEnv(t, opts{})
	attack := `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"><svg onload="window.__pwned = 3"></svg>`
	e.notes.files["notes.md"] = attack
	greet := e.run("Greet", map[string]any{"name": attack})
	tidy := e.run("Tidy", map[string]any{"task": attack})
	ctx := newTab(t)
	for _, id := range []string{str(greet["runId"]), str(tidy["runId"])} {
		do(t, ctx, "the run's page", chromedp.Navigate(e.http.URL+"/runs/"+id))
		waitJS(t, ctx, "the page", `document.querySelector("#timeline") !== null`)
		time.Sleep(200 * time.Millisecond) // an onerror would have fired by now
		if p := eval[any](t, ctx, `window.__pwned === undefined ? null : window.__pwned`); p != nil {
			t.Fatalf("a script from the run ran: __pwned = %v", p)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("main img, main script, main svg:not(.bar):not(.wf)").length`); n != 0 {
			t.Errorf("%d elements from the run's text made it into the page", n)
		}
		if !strings.Contains(text(t, ctx), `<script>window.__pwned = 1</script>`) {
			t.Errorf("the text is not shown as written:\n%s", text(t, ctx))
		}
	}
	// The list too.
	do(t, ctx, "the list", chromedp.Navigate(e.http.URL+"/"))
	waitJS(t, ctx, "rows", `document.querySelectorAll("tr.run").length === 2`)
	if p := eval[any](t, ctx, `window.__pwned === undefined ? null : window.__pwned`); p != nil {
		t.Fatalf("a script ran in the list: %v", p)
	}
}

// TestBrowserTokenRefused: a page loaded without the token is refused (401, the sign-in
// form, no run shown); the token typed in the form opens Studio, and the browser keeps it
// where scripts cannot read it.
func TestBrowserTokenRefused(t *testing.T) {
	e := newEnv(t, opts{token: "browser-token-refused-77"})
	res := e.run("Greet", map[string]any{"name": "Ada"})
	ctx := newTab(t)
	for _, path := range []string{"/", "/runs/" + str(res["runId"])} {
		do(t, ctx, "load "+path, chromedp.Navigate(e.http.URL+path))
		if st := status(t, ctx); st != 401 {
			t.Errorf("GET %s without the token: %d", path, st)
		}
		if got := text(t, ctx); !strings.Contains(got, "needs this server's token") || strings.Contains(got, "Hello, Ada") || strings.Contains(got, "Greet") {
			t.Errorf("GET %s without the token shows:\n%s", path, got)
		}
	}
	do(t, ctx, "sign in with the form", chromedp.SendKeys(chromedp.CSS("#token"), e.token), chromedp.Submit(chromedp.CSS("#token")))
	waitJS(t, ctx, "the run after signing in", `document.querySelector("#outcome") !== null && document.querySelector("#outcome").innerText.includes("Hello, Ada!")`)
	if c := eval[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("a script can read the cookie: %q", c)
	}
}

// TestBrowserNarrow: in a phone-sized window the list and a run's page need no sideways
// scrolling.
func TestBrowserNarrow(t *testing.T) {
	e := newEnv(t, opts{})
	tidy := e.run("Tidy", map[string]any{"task": "merge duplicates"})
	e.run("Ask", map[string]any{"x": "a rather long subject for a draft that goes on and on"})
	ctx := newTab(t)
	do(t, ctx, "a narrow window", chromedp.EmulateViewport(390, 844))
	for _, path := range []string{"/", "/runs/" + str(tidy["runId"]), "/start/File"} {
		do(t, ctx, "load "+path, chromedp.Navigate(e.http.URL+path))
		waitJS(t, ctx, "the page", `document.readyState === "complete"`)
		if w := eval[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
			t.Errorf("GET %s at 390 px wide scrolls sideways by %d px", path, w)
		}
	}
}

// TestBrowser1000Events measures how long the page of a run with 1,000 events takes to
// load in the browser (reported, not asserted: timings depend on the machine's load).
func TestBrowser1000Events(t *testing.T) {
	e := newEnv(t, opts{})
	rec := bigRecord(1000)
	if err := e.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	ctx := newTab(t)
	do(t, ctx, "warm up", chromedp.Navigate(e.http.URL+"/"))
	var best, worst time.Duration
	const tries = 3
	for i := range tries {
		start := time.Now()
		do(t, ctx, "the big run's page", chromedp.Navigate(e.http.URL+"/runs/"+rec.RunID))
		waitJS(t, ctx, "the whole page", `document.readyState === "complete" && document.querySelector("#meta") !== null && document.querySelectorAll("#timeline .span").length > 500`)
		took := time.Since(start)
		nav := eval[float64](t, ctx, `performance.getEntriesByType("navigation")[0].loadEventEnd`)
		size := eval[int](t, ctx, `performance.getEntriesByType("navigation")[0].transferSize`)
		t.Logf("run page with 1000 events, try %d: %v from navigation to the whole page in the DOM (Go side); load event at %.0f ms (browser side); %d KiB of HTML", i+1, took.Round(time.Millisecond), nav, size/1024)
		if i == 0 || took < best {
			best = took
		}
		worst = max(worst, took)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("run page with 1000 events: best %v, worst %v of %d; load average %s", best.Round(time.Millisecond), worst.Round(time.Millisecond), tries, strings.Fields(string(load) + " ?")[0])
}

// TestBrowserScreenshots takes the screenshots docs/studio.md shows: the runs list, and a
// run with a tool conversation. With -screenshots they are written to docs/.
func TestBrowserScreenshots(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	e.delay = 150 * time.Millisecond
	tidy := e.run("Tidy", map[string]any{"task": "merge the duplicate notes"})
	e.run("Ask", map[string]any{"x": "the Q3 report"})
	e.run("Count", map[string]any{"n": 3, "flag": true})
	e.api("POST", "/api/runs", map[string]any{"pipeline": "Greet", "inputs": map[string]any{"name": "Ada"}}, 202)
	e.run("Shop", map[string]any{"id": "order-1042"})
	e.api("POST", "/api/runs/"+str(e.run("Shop", map[string]any{"id": "order-1041"})["runId"])+"/cancel", map[string]any{}, 200)
	ctx := newTab(t)
	dir := t.TempDir()
	if *screenshots {
		dir = filepath.Join("..", "..", "docs")
	}
	shoot := func(name, path string, wait string) {
		do(t, ctx, "load "+path, chromedp.Navigate(e.http.URL+path))
		waitJS(t, ctx, "the page", wait)
		img, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(img)); err != nil || len(img) < 10000 {
			t.Fatalf("%s: not a screenshot (%d bytes): %v", name, len(img), err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), img, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d KiB", filepath.Join(dir, name), len(img)/1024)
	}
	do(t, ctx, "size", chromedp.EmulateViewport(1200, 760))
	shoot("studio-runs.png", "/", `document.querySelectorAll("tr.run").length === 6`)
	do(t, ctx, "size", chromedp.EmulateViewport(1000, 900))
	shoot("studio-run.png", "/runs/"+str(tidy["runId"]), `(document.querySelectorAll("#timeline .stage > details, #conversations details").forEach(d => d.open = true), document.querySelector("#timeline .span.violation") !== null)`)
}

// TestBrowserApproval: a tool call waiting for approval shows its message, agent, call,
// policy and arguments; Approve runs the call and completes the run; Decline with a reason
// completes it without the call, and the (scripted) model is told the reason.
func TestBrowserApproval(t *testing.T) {
	for _, decision := range []string{"approve", "decline"} {
		t.Run(decision, func(t *testing.T) {
			e := newEnv(t, opts{token: "browser-token-approval-9"})
			ctx := newTab(t)
			signIn(t, ctx, e)
			paused := e.run("Keep", map[string]any{"task": "dedupe"})
			id := str(paused["runId"])
			if p, _ := paused["paused"].(map[string]any); paused["status"] != "paused" || p["waitingFor"] != "approval" {
				t.Fatalf("Keep: %v", paused)
			}
			do(t, ctx, "the run's page", chromedp.Navigate(e.http.URL+"/runs/"+id))
			waitJS(t, ctx, "the approval", `document.querySelector("#wait button[value=approve]") !== null`)
			w := eval[string](t, ctx, `document.querySelector("#wait").innerText`)
			for _, want := range []string{"This run waits for your approval", `Allow Keeper to call Files.write with {"path":"notes.md","text":"buy milk `, `"}? (policy Asking)`,
				"Agent\nKeeper", "Call\nFiles.write", "Policy\nAsking", `"text": "buy milk <b>twice</b>\n"`, "Approve", "Decline"} {
				if !strings.Contains(w, want) {
					t.Errorf("the approval does not show %q:\n%s", want, w)
				}
			}
			if decision == "decline" {
				do(t, ctx, "type the reason", chromedp.SendKeys(chromedp.CSS("#reason"), "write to drafts/ instead"))
			}
			do(t, ctx, decision, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#wait button[value=%s]`, decision))))
			// The page the answer leads to, loaded whole: the page clicked on follows the run
			// too, and may show it completed while the browser is still loading the next.
			waitJS(t, ctx, "the answer sent", fmt.Sprintf(`location.search === "?sent=%s" && document.readyState === "complete"`, decision))
			waitJS(t, ctx, "the run completes", `document.querySelector("#head .status").textContent === "completed"`)
			out := eval[string](t, ctx, `document.querySelector("#outcome").innerText`)
			tl := eval[string](t, ctx, `[...document.querySelectorAll("#timeline .span[class*='decision-']")].map(e => e.querySelector(":scope > details").textContent).join("\n")`)
			e.notes.mu.Lock()
			note := e.notes.files["notes.md"]
			e.notes.mu.Unlock()
			switch decision {
			case "approve":
				if note != "buy milk <b>twice</b>\n" || !strings.Contains(out, `Kept. The tool said: {"written":22}`) || !strings.Contains(tl, "approved") {
					t.Errorf("approved: note %q, output %q, timeline %q", note, out, tl)
				}
			case "decline":
				req, _ := e.lastRequest("Keep the notes")
				told := req.Messages[len(req.Messages)-1].ToolResults[0].Content
				if !strings.HasPrefix(told, "A person declined this call: write to drafts/ instead.") {
					t.Errorf("the model was told %q", told)
				}
				if strings.Contains(note, "twice") || !strings.Contains(out, "A person declined this call: write to drafts/ instead.") || !strings.Contains(tl, "declined") || !strings.Contains(tl, "write to drafts/ instead") {
					t.Errorf("declined: note %q, output %q, timeline %q", note, out, tl)
				}
			}
		})
	}
}

// TestBrowserWithoutJavaScript: with scripts off, the list and a run's page read in full,
// and a run is started and answered through the forms.
func TestBrowserWithoutJavaScript(t *testing.T) {
	e := newEnv(t, opts{token: "browser-token-nojs-31"})
	tidy := e.run("Tidy", map[string]any{"task": "merge"})
	ctx := newTab(t)
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, e)
	if eval[bool](t, ctx, `document.querySelector("script") !== null && typeof followList !== "undefined"`) {
		t.Fatal("studio.js ran: scripts are not off")
	}
	do(t, ctx, "the run", chromedp.Navigate(e.http.URL+"/runs/"+str(tidy["runId"])))
	if got := text(t, ctx); !strings.Contains(got, "Merged the duplicate notes") || !strings.Contains(got, "Files.write") || !strings.Contains(got, "gpt-4o-mini") {
		t.Errorf("the run's page without scripts:\n%s", got)
	}
	// A row of the waterfall opens into its card, and a conversation unfolds, without scripts.
	do(t, ctx, "open the refused call", chromedp.Click(chromedp.CSS("#timeline .span.violation > details > summary")))
	do(t, ctx, "open the conversation", chromedp.Click(chromedp.CSS("#conversations details > summary")))
	if got := text(t, ctx); !strings.Contains(got, "Careful") || !strings.Contains(got, "DenyArgs") || !strings.Contains(strings.ToLower(got), "assistant, step 3") {
		t.Errorf("the card and the conversation without scripts:\n%s", got)
	}
	do(t, ctx, "start Ask from its form", chromedp.Navigate(e.http.URL+"/start/Ask"),
		chromedp.SendKeys(chromedp.CSS("#f-in-x"), "dogs"),
		chromedp.Click(chromedp.CSS(`form.start-form button[type=submit]`)))
	waitJS(t, ctx, "the run's page", `location.pathname.startsWith("/runs/")`)
	id := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/runs/")
	e.waitStatus(id, "paused")
	do(t, ctx, "reload", chromedp.Reload())
	waitJS(t, ctx, "the question", `document.querySelector("#answer") !== null`)
	do(t, ctx, "answer", chromedp.SendKeys(chromedp.CSS("#answer"), "fine"), chromedp.Click(chromedp.CSS(`form.answer button[type=submit]`)))
	waitJS(t, ctx, "the answer sent", `location.search === "?sent=answer"`)
	m := e.waitStatus(id, "completed")
	if !strings.Contains(str(m["output"]), "Revise with: fine") {
		t.Errorf("output %v", m["output"])
	}
}

// TestBrowserApprovalLink: halo serve's approval link page, beside Studio, works in a real
// browser: its Approve button continues the run, and Decline passes the reason. (With
// Referrer-Policy: no-referrer the browser sent Origin: null, which the checks refused.)
func TestBrowserApprovalLink(t *testing.T) {
	e := newEnv(t, opts{token: "browser-token-link-5"})
	for _, decision := range []string{"approve", "decline"} {
		p := e.run("Ask", map[string]any{"x": "cats"})
		link := p["paused"].(map[string]any)["link"].(string)
		ctx := newTab(t)
		do(t, ctx, "open the link", chromedp.Navigate(link))
		waitJS(t, ctx, "the buttons", `document.querySelector("button[value=approve]") !== null`)
		if decision == "decline" {
			do(t, ctx, "the reason", chromedp.SendKeys(chromedp.CSS("#reason"), "too long"))
		}
		do(t, ctx, decision, chromedp.Click(chromedp.CSS(fmt.Sprintf("button[value=%s]", decision))))
		waitJS(t, ctx, "answered", `document.querySelector("h1").textContent === "Approved" || document.querySelector("h1").textContent === "Declined" || document.querySelector("h1").textContent === "Not done"`)
		if h := eval[string](t, ctx, `document.querySelector("h1").textContent`); strings.ToLower(h) != decision+"d" {
			t.Fatalf("%s through the link: %q\n%s", decision, h, text(t, ctx))
		}
		m := e.waitStatus(str(p["runId"]), "completed")
		want := map[string]string{"approve": `{"action":"approve","approved":true}`, "decline": `{"action":"decline","approved":false,"text":"too long"}`}[decision]
		if req, _ := e.lastRequest("Revise with:"); !strings.Contains(req.Messages[0].Text, want) {
			t.Errorf("%s: the model got %q, want %s in it (output %v)", decision, req.Messages[0].Text, want, m["output"])
		}
	}
}
