package studio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
	"halolang.dev/halo/host/studio"
	"halolang.dev/halo/host/tool"
)

// src is the program every test serves: plain agent calls, a yield, a listen, an agent
// with tools under a policy that refuses some calls, typed inputs and a schema input.
const src = `
policy Careful : AllowTools("Files.*") & DenyArgs("Files.write", "path", "^secret") & Redact(Email)

policy Asking : AllowTools("Files.*") & ApproveTools("Files.write")

tool Files : Notes()

agent Writer [openai/gpt-4o]
agent Clerk [openai/gpt-4o-mini]
  equips Files
  requires Careful

agent Keeper [openai/gpt-4o-mini]
  equips Files
  requires Asking

schema Ticket {
  title: String,
  priority: Integer
}

// Greets someone by name.
pipeline Greet(name: String) -> Result:
  name |> Writer.greet("Greet {{name}}.")

pipeline Ask(x: String) -> Result:
  x |> Writer.draft("Draft about {{x}}.") as draft |! yield("Approve {{draft}}?") as answer |> Writer.revise("Revise with: {{answer}}")

pipeline Shop(id: String) -> Result:
  id ~> listen("payment") as paid |> System.Value({ id: id, paid: paid })

// The clerk reads the notes and merges duplicates, under the Careful policy.
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work("Tidy the notes: {{task}}", tools: [Files])

// The keeper rewrites the notes, once a person approves the write.
pipeline Keep(task: String) -> Result:
  task |> Keeper.work("Keep the notes: {{task}}", tools: [Files])

pipeline Count(n: Number, flag: Boolean) -> Result:
  n |> System.Value({ n: n, flag: flag })

pipeline File(t: Ticket, tags: List) -> Result:
  t |> System.Value({ t: t, tags: tags })
`

// notes is the Notes tool: files in memory.
type notes struct {
	mu    sync.Mutex
	files map[string]string
	calls []string
}

var notesMethods = []tool.Method{
	{Name: "read", Description: "Read a note.", Effect: tool.Read, Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "write", Description: "Write a note.", Effect: tool.Write, Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}`)},
}

func (n *notes) Methods(context.Context) ([]tool.Method, error) { return notesMethods, nil }
func (n *notes) Close() error                                   { return nil }
func (n *notes) Call(_ context.Context, req tool.Request) (json.RawMessage, error) {
	var a struct{ Path, Text string }
	if err := json.Unmarshal(req.Args, &a); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls = append(n.calls, req.Method+" "+a.Path)
	if req.Method == "read" {
		text, ok := n.files[a.Path]
		if !ok {
			return nil, tool.Errorf(tool.CodeToolError, "no note %s", a.Path)
		}
		return json.Marshal(text)
	}
	n.files[a.Path] = a.Text
	return json.Marshal(map[string]any{"written": len(a.Text)})
}

// env is halo serve with Studio mounted, on a real listener, with a scripted model.
type env struct {
	t     testing.TB
	srv   *serve.Server
	http  *httptest.Server
	store runstore.Store
	token string
	notes *notes
	// gate, when not nil, holds each Writer.greet request until a value arrives.
	gate chan struct{}

	mu sync.Mutex
	// requests are the model requests, by the first words of their prompt.
	requests []model.Request
	// script answers the Clerk's requests of a Tidy run; nil means the default one.
	script func(step int, req model.Request) model.Response
	// delay makes each model request take that long (for screenshots with times).
	delay time.Duration
}

type opts struct {
	token string
	gate  bool
	src   string
	// reload, when set, is the source a replay reads as today's files.
	reload string
}

func program(t testing.TB, source string, reg *tool.Registry) *lang.Program {
	t.Helper()
	f, diags := lang.Parse("flows.halo", []byte(source))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	prog := &lang.Program{Files: []*lang.File{f}}
	if err := runtime.Validate(prog, reg).Err(); err != nil {
		t.Fatal(err)
	}
	return prog
}

func newEnv(t testing.TB, o opts) *env {
	t.Helper()
	e := &env{t: t, token: o.token, notes: &notes{files: map[string]string{"notes.md": "buy milk\nbuy milk\nmail ada@example.com\n"}}}
	if o.gate {
		e.gate = make(chan struct{}, 100)
	}
	store, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e.store = store
	if o.src == "" {
		o.src = src
	}
	reg := tool.NewRegistry()
	if err := reg.Add(tool.Type{Name: "Notes", Kind: tool.KindBuiltin, Methods: notesMethods,
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return e.notes, nil }}); err != nil {
		t.Fatal(err)
	}
	prog := program(t, o.src, reg)
	e.http = httptest.NewUnstartedServer(nil)
	cfg := serve.Config{
		Program: prog, Store: store, Token: o.token, Addr: e.http.Listener.Addr().String(),
		Runtime: runtime.Config{Tools: reg, File: "flows.halo", Models: func(ref string) (model.Provider, string, error) {
			return model.ProviderFunc(e.complete), strings.TrimPrefix(ref, "openai/"), nil
		}},
		Interval: 50 * time.Millisecond,
		Reload: func() (*lang.Program, error) {
			if o.reload == "" {
				return prog, nil
			}
			return program(t, o.reload, reg), nil
		},
		Pages: func(api http.Handler, stopping <-chan struct{}) (http.Handler, error) {
			return studio.New(studio.Config{API: api, Stopping: stopping, ListInterval: time.Hour}) // the list is live by the API's stream alone
		},
	}
	srv, err := serve.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = srv
	srv.Start()
	e.http.Config.Handler = srv.Handler()
	e.http.Start()
	t.Cleanup(func() {
		if e.gate != nil {
			close(e.gate)
		}
		e.http.CloseClientConnections()
		srv.Close(5 * time.Second)
		e.http.Close()
	})
	return e
}

// complete is the scripted model: it answers by what the first message asks, with tokens
// and a cost, as a provider would.
func (e *env) complete(ctx context.Context, req model.Request) (model.Response, error) {
	e.mu.Lock()
	e.requests = append(e.requests, req)
	script, delay := e.script, e.delay
	e.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	first := ""
	if len(req.Messages) > 0 {
		first = req.Messages[0].Text
	}
	in := 0
	for _, m := range req.Messages {
		in += len(m.Text)/4 + 8
		for _, r := range m.ToolResults {
			in += len(r.Content) / 4
		}
	}
	answer := func(text string) model.Response {
		out := len(text)/4 + 1
		return model.Response{Text: text, Message: model.Message{Role: model.Assistant, Text: text},
			Usage: model.Usage{InputTokens: in, OutputTokens: out}, Cost: float64(in)*2.5e-6 + float64(out)*1e-5,
			StopReason: model.StopEnd, Attempts: 1}
	}
	switch {
	case strings.HasPrefix(first, "Greet"):
		if e.gate != nil {
			select {
			case <-e.gate:
			case <-ctx.Done():
				return model.Response{}, ctx.Err()
			}
		}
		return answer("Hello, " + strings.TrimSuffix(strings.TrimPrefix(first, "Greet "), ".") + "!"), nil
	case strings.HasPrefix(first, "Draft about"):
		return answer("a draft about " + strings.TrimSuffix(strings.TrimPrefix(first, "Draft about "), ".")), nil
	case strings.HasPrefix(first, "Revise with:"):
		return answer("Revised. " + first), nil
	case strings.HasPrefix(first, "Keep the notes"):
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolResults) == 0 {
			return calls(in, model.ToolCall{ID: "k1", Name: "Files__write", Args: json.RawMessage(`{"path":"notes.md","text":"buy milk <b>twice</b>\n"}`)}), nil
		}
		return answer("Kept. The tool said: " + last.ToolResults[0].Content), nil
	case strings.HasPrefix(first, "Tidy the notes"):
		step := 1
		for _, m := range req.Messages {
			if m.Role == model.Assistant {
				step++
			}
		}
		if script != nil {
			r := script(step, req)
			r.Usage = model.Usage{InputTokens: in, OutputTokens: 20}
			r.Cost, r.Attempts = float64(in)*1.5e-7+20*6e-7, 1
			if r.Message.Role == "" {
				r.Message = model.Message{Role: model.Assistant, Text: r.Text, ToolCalls: r.ToolCalls}
			}
			return r, nil
		}
		switch step {
		case 1:
			return calls(in, model.ToolCall{ID: "c1", Name: "Files__read", Args: json.RawMessage(`{"path":"notes.md"}`)}), nil
		case 2:
			return calls(in,
				model.ToolCall{ID: "c2", Name: "Files__write", Args: json.RawMessage(`{"path":"secret.md","text":"keys"}`)},
				model.ToolCall{ID: "c3", Name: "Files__write", Args: json.RawMessage(`{"path":"notes.md","text":"buy milk\nmail ada@example.com\n"}`)}), nil
		}
		return answer("Merged the duplicate notes; one write was refused by policy."), nil
	}
	return answer("ok"), nil
}

func calls(in int, cs ...model.ToolCall) model.Response {
	return model.Response{ToolCalls: cs, Message: model.Message{Role: model.Assistant, ToolCalls: cs},
		Usage: model.Usage{InputTokens: in, OutputTokens: 24}, Cost: float64(in)*1.5e-7 + 24*6e-7, StopReason: model.StopToolCalls, Attempts: 1}
}

// lastRequest returns the last model request whose first message starts with prefix.
func (e *env) lastRequest(prefix string) (model.Request, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := len(e.requests) - 1; i >= 0; i-- {
		if r := e.requests[i]; len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Text, prefix) {
			return r, true
		}
	}
	return model.Request{}, false
}

// client is a browser-like HTTP client: it keeps cookies and follows no redirects.
func (e *env) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// page requests a Studio page (or the API, with the token) and returns its status and body.
func (e *env) page(c *http.Client, method, path string, form url.Values, hdr ...string) (int, string, http.Header) {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, e.http.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", e.http.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
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
	resp, err := c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// signedIn is a client that gave the token once.
func (e *env) signedIn() *http.Client {
	e.t.Helper()
	c := e.client()
	if e.token != "" {
		if st, body, _ := e.page(c, "GET", "/?token="+url.QueryEscape(e.token), nil); st != 200 {
			e.t.Fatalf("sign in: %d %s", st, body)
		}
	}
	return c
}

// api calls the API directly with the token and decodes the JSON answer.
func (e *env) api(method, path string, body any, want int) map[string]any {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, e.http.URL+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		e.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		e.t.Fatalf("%s %s: not JSON: %s", method, path, b)
	}
	return out
}

// run starts a pipeline through the API and waits for it to stop.
func (e *env) run(pipeline string, inputs map[string]any) map[string]any {
	e.t.Helper()
	return e.api("POST", "/api/runs?wait=20s", map[string]any{"pipeline": pipeline, "inputs": inputs}, 200)
}

// waitStatus polls the API until run id has status st.
func (e *env) waitStatus(id, st string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		m := e.api("GET", "/api/runs/"+id, nil, 200)
		if m["status"] == st {
			return m
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s is %v, want %s", id, m["status"], st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) runCount() int {
	e.t.Helper()
	m := e.api("GET", "/api/runs?limit=500", nil, 200)
	runs, _ := m["runs"].([]any)
	return len(runs)
}

func str(v any) string { return fmt.Sprint(v) }

// bigRecord is a completed run of n events: model calls, calls an agent chose and their
// tool calls, and now and then a violation, over ten stages.
func bigRecord(n int) *runtime.Record {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	rec := &runtime.Record{RunID: "b16e0000000000000000000000001000", Pipeline: "Tidy", File: "flows.halo", Status: runtime.Completed,
		Inputs: map[string]any{"task": "a big one"}, Output: "done", Started: start, Data: map[string]any{}}
	rec.Meta.RunID = rec.RunID
	prompt := strings.Repeat("Tidy the notes, carefully, one by one. ", 8)
	for i := range n {
		at := fmt.Sprintf("flows.halo:%d:5", 20+i/(n/10+1))
		e := runtime.Event{Time: start.Add(time.Duration(i) * 50 * time.Millisecond), RunID: rec.RunID, At: at, Agent: "Clerk"}
		switch i % 4 {
		case 0:
			e.Type, e.Target, e.Model, e.Prompt, e.Answer = "llm", "Clerk.work", "openai/gpt-4o-mini", prompt, fmt.Sprintf("I will read note %d.", i)
			e.Usage, e.Cost, e.DurationMs, e.Step = &model.Usage{InputTokens: 900 + i, OutputTokens: 40}, 0.00016, 640, i/4+1
			rec.Meta.Cost += e.Cost
		case 1:
			e.Type, e.Target, e.Args, e.Output, e.DurationMs = "tool", "Files.read", json.RawMessage(fmt.Sprintf(`{"path":"notes/%d.md"}`, i)), strings.Repeat("a line of the note\n", 12), 3
		case 2:
			e.Type, e.Target, e.Args, e.Decision, e.DurationMs = "agent_tool", "Files.read", json.RawMessage(fmt.Sprintf(`{"path":"notes/%d.md"}`, i)), "allowed", 3
		default:
			if i%40 == 3 {
				e.Type, e.Policy, e.Rule, e.Phase, e.Target, e.Message = "violation", "Careful", "DenyArgs", "tool", "Files.write", "argument path matches ^secret"
				rec.Meta.Violations = append(rec.Meta.Violations, runtime.ViolationInfo{Policy: "Careful", Rule: "DenyArgs", Phase: "tool", Agent: "Clerk", Target: "Files.write"})
			} else {
				e.Type, e.Target, e.Args, e.Decision, e.Detail = "agent_tool", "Files.write", json.RawMessage(`{"path":"notes/x.md","text":"merged"}`), "allowed", ""
			}
		}
		rec.Events = append(rec.Events, e)
	}
	rec.Updated = start.Add(time.Duration(n) * 50 * time.Millisecond)
	rec.Events = append(rec.Events[:n-1], runtime.Event{Type: "run", Time: rec.Updated, RunID: rec.RunID, Status: runtime.Completed})
	return rec
}
