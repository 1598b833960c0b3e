package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// script is a model that answers with its replies in order and keeps every request.
type script struct {
	t       *testing.T
	replies []model.Response
	reqs    []model.Request
}

func (s *script) Complete(_ context.Context, req model.Request) (model.Response, error) {
	// Keep a copy: the conversation's slice grows after the call.
	req.Messages = append([]model.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, req)
	if len(s.reqs) > len(s.replies) {
		s.t.Fatalf("request %d, but the script has %d replies", len(s.reqs), len(s.replies))
	}
	return s.replies[len(s.reqs)-1], nil
}

func answer(text string) model.Response {
	return model.Response{Text: text, Message: model.Message{Role: model.Assistant, Text: text}, StopReason: model.StopEnd}
}

func calls(cs ...model.ToolCall) model.Response {
	return model.Response{ToolCalls: cs, Message: model.Message{Role: model.Assistant, ToolCalls: cs}, StopReason: model.StopToolCalls}
}

func call(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// files offers Files.read (read), Files.write (write) and Tests.run (external).
func files() []Tool {
	return Offer([]Method{
		{Tool: "Files", Method: tool.Method{Name: "read", Description: "Read a file.", Effect: tool.Read,
			Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
		{Tool: "Files", Method: tool.Method{Name: "write", Description: "Write a file.", Effect: tool.Write}},
		{Tool: "Tests", Method: tool.Method{Name: "run", Description: "Run a command."}},
	})
}

func pol(t *testing.T, name string, rules ...policy.RuleSpec) *policy.Policy {
	t.Helper()
	p, err := policy.Compile(name, rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func rule(name string, args ...any) policy.RuleSpec { return policy.RuleSpec{Name: name, Args: args} }

// harness runs one conversation and records what the hooks heard.
type harness struct {
	cfg        Config
	model      *script
	ran        []Call
	events     []ToolEvent
	violations []*policy.Violation
	answers    map[string]any // by target; an error value fails the call
}

func newHarness(t *testing.T, replies ...model.Response) *harness {
	h := &harness{model: &script{t: t, replies: replies}, answers: map[string]any{}}
	h.cfg = Config{
		Agent: "Clerk", Model: h.model, Prompt: "Tidy the notes.",
		Request: model.Request{Model: "m", System: "You tidy notes."},
		Tools:   files(),
		Run: func(_ context.Context, c Call) (any, error) {
			h.ran = append(h.ran, c)
			if err, ok := h.answers[c.Target].(error); ok {
				return nil, err
			}
			if v, ok := h.answers[c.Target]; ok {
				return v, nil
			}
			return "ok", nil
		},
		OnTool:      func(e ToolEvent) { h.events = append(h.events, e) },
		OnViolation: func(v *policy.Violation, _ string) { h.violations = append(h.violations, v) },
	}
	return h
}

func (h *harness) run(t *testing.T) (any, error) {
	t.Helper()
	c, err := New(h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.Run(context.Background())
}

// results returns the tool results the model got in request i (0-based).
func (h *harness) results(i int) []model.ToolResult {
	msgs := h.model.reqs[i].Messages
	return msgs[len(msgs)-1].ToolResults
}

func TestThreeSteps(t *testing.T) {
	h := newHarness(t,
		calls(call("c1", "Files__read", `{"path":"a.md"}`), call("c2", "Files__read", `{"path":"b.md"}`)),
		calls(call("c3", "Tests__run", `{"command":"bun test"}`)),
		answer("Merged a.md and b.md."))
	h.answers["Files.read"] = map[string]any{"content": "a"}
	out, err := h.run(t)
	if err != nil || out != "Merged a.md and b.md." {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if len(h.model.reqs) != 3 {
		t.Fatalf("%d requests", len(h.model.reqs))
	}
	for i, req := range h.model.reqs {
		if len(req.Tools) != 3 || req.ToolChoice != "" || req.System != "You tidy notes." {
			t.Errorf("request %d: tools %d, choice %q, system %q", i, len(req.Tools), req.ToolChoice, req.System)
		}
		if want := 1 + 2*i; len(req.Messages) != want {
			t.Errorf("request %d has %d messages, want %d", i, len(req.Messages), want)
		}
	}
	got := h.results(1)
	if len(got) != 2 || got[0].CallID != "c1" || got[1].CallID != "c2" || got[0].Content != `{"content":"a"}` || got[0].Name != "Files__read" {
		t.Errorf("step 2 results = %+v", got)
	}
	if len(h.ran) != 3 || h.ran[0].Target != "Files.read" || string(h.ran[1].Args) != `{"path":"b.md"}` || h.ran[2].Target != "Tests.run" {
		t.Errorf("ran %+v", h.ran)
	}
	if len(h.events) != 3 || h.events[2].Decision != Allowed || h.events[2].Target != "Tests.run" {
		t.Errorf("events %+v", h.events)
	}
}

// TestWhatTheModelSees: every failure of one call becomes a message to the model, in the
// seed's words, and the conversation goes on.
func TestWhatTheModelSees(t *testing.T) {
	h := newHarness(t,
		calls(
			call("1", "Files__delete", `{}`),
			call("2", "files__read", `{"path":"a"}`),
			call("3", "Files__read", `{"path": `),
			call("4", "Files__read", `[1,2]`),
			call("5", "Files__read", `null`),
			call("6", "Tests__run", `{"command":"rm -rf /"}`),
			call("7", "Files__write", `"{\"path\":\"x\"}"`),
		),
		answer("done"))
	h.cfg.Policies = policy.Set{pol(t, "Shell", rule("DenyArgs", "Tests.run", "command", "^(?!bun test)"))}
	h.answers["Files.read"] = errors.New("no such file: a")
	h.answers["Files.write"] = &tool.Error{Code: tool.CodeToolError, Message: "disk full", Detail: json.RawMessage(`{"free":0}`)}
	if _, err := h.run(t); err != nil {
		t.Fatal(err)
	}
	got := h.results(1)
	want := []string{
		`Error: there is no tool named "Files__delete". You can call: Files__read, Files__write, Tests__run.`,
		`Error: there is no tool named "files__read". Names are case-sensitive: did you mean "Files__read"? You can call: Files__read, Files__write, Tests__run.`,
		`Error: the arguments of Files__read are not valid JSON ("{\"path\":"). Call it again with one JSON object of named arguments.`,
		`Error: the arguments of Files__read are an array, not a JSON object. Call it again with one JSON object of named arguments.`,
		`Error: no such file: a`,
		`Refused by policy "Shell": argument command "rm -rf /" matches DenyArgs("Tests.run", "command", "^(?!bun test)"). Don't try this call again.`,
		"Error: disk full\n{\"free\":0}",
	}
	for i, w := range want {
		if got[i].Content != w || !got[i].IsError {
			t.Errorf("result %d = %q (error %v)\n want %q", i+1, got[i].Content, got[i].IsError, w)
		}
	}
	// null arguments are no arguments: the call ran with {}.
	if len(h.ran) != 2 || string(h.ran[0].Args) != `{}` || string(h.ran[1].Args) != `{"path":"x"}` {
		t.Errorf("ran %+v", h.ran)
	}
	decisions := []string{}
	for _, e := range h.events {
		decisions = append(decisions, e.Decision)
	}
	if strings.Join(decisions, " ") != "error error error error error refused error" {
		t.Errorf("decisions %v", decisions)
	}
	if len(h.violations) != 1 || h.violations[0].Phase != policy.ToolPhase || h.violations[0].Rule != "DenyArgs" {
		t.Errorf("violations %+v", h.violations)
	}
}

// TestHiddenIsRefused: a method the policies hide is not offered; a call to it anyway is
// refused by the rule that hides it (decision refused, its "Tool.method" target, a tool-phase
// violation, the refusal in the model's words), while a function that exists nowhere is still
// an error.
func TestHiddenIsRefused(t *testing.T) {
	h := newHarness(t,
		calls(call("1", "Files__delete", `{"path":"a.md"}`), call("2", "Files__nope", `{}`), call("3", "Files__delete", `not json`)),
		answer("done"))
	tools := Offer([]Method{
		{Tool: "Files", Method: tool.Method{Name: "read", Effect: tool.Read}},
		{Tool: "Files", Method: tool.Method{Name: "delete", Effect: tool.Write}},
	})
	tools[1].Hidden = true
	h.cfg.Tools = tools
	h.cfg.Policies = policy.Set{pol(t, "Careful", rule("DenyTools", "Files.delete"))}
	if _, err := h.run(t); err != nil {
		t.Fatal(err)
	}
	if defs := h.model.reqs[0].Tools; len(defs) != 1 || defs[0].Name != "Files__read" {
		t.Errorf("offered %+v; Files.delete is hidden", defs)
	}
	got := h.results(1)
	refusal := `Refused by policy "Careful": Files.delete is denied by DenyTools("Files.delete"). Don't try this call again.`
	if got[0].Content != refusal || !got[0].IsError || got[2].Content != refusal {
		t.Errorf("hidden calls: %q, %q", got[0].Content, got[2].Content)
	}
	if got[1].Content != `Error: there is no tool named "Files__nope". You can call: Files__read.` {
		t.Errorf("unknown call: %q", got[1].Content)
	}
	var decisions []string
	for _, e := range h.events {
		decisions = append(decisions, e.Target+"="+e.Decision)
	}
	if strings.Join(decisions, " ") != "Files.delete=refused Files__nope=error Files.delete=refused" {
		t.Errorf("decisions %v", decisions)
	}
	if string(h.events[0].Args) != `{"path":"a.md"}` || h.events[0].Detail != `Files.delete is denied by DenyTools("Files.delete")` {
		t.Errorf("event %+v", h.events[0])
	}
	if len(h.violations) != 2 || h.violations[0].Phase != policy.ToolPhase || h.violations[0].Rule != "DenyTools" || h.violations[0].Policy != "Careful" {
		t.Errorf("violations %+v", h.violations)
	}
	if len(h.ran) != 0 {
		t.Errorf("ran %+v", h.ran)
	}
}

// TestNeverStops: a model that asks for tools on every request gets MaxSteps of them, then a
// request with tools turned off and a note; calls it still makes are ignored.
func TestNeverStops(t *testing.T) {
	var replies []model.Response
	for i := 0; i < 4; i++ {
		replies = append(replies, calls(call(fmt.Sprint(i), "Files__read", `{"path":"a"}`)))
	}
	last := calls(call("x", "Files__read", `{}`))
	last.Text = "Here is what I found."
	replies = append(replies, last)
	h := newHarness(t, replies...)
	h.cfg.MaxSteps = 3
	// Replies past the fourth are a test failure: the loop must have stopped.
	h.model.replies = append(replies[:3], last)
	out, err := h.run(t)
	if err != nil || out != "Here is what I found." {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if len(h.model.reqs) != 4 || len(h.ran) != 3 {
		t.Fatalf("%d requests, %d calls ran", len(h.model.reqs), len(h.ran))
	}
	final := h.model.reqs[3]
	if final.ToolChoice != model.ToolNone || len(final.Tools) != 3 {
		t.Errorf("final request: choice %q, %d tools", final.ToolChoice, len(final.Tools))
	}
	note := final.Messages[len(final.Messages)-1]
	if note.Role != model.Tool || !strings.Contains(note.Text, "used all 3 tool steps") {
		t.Errorf("final message %+v", note)
	}
	for i := 0; i < 3; i++ {
		if h.model.reqs[i].ToolChoice != "" {
			t.Errorf("request %d turned tools off", i)
		}
	}
}

// TestManyCalls: 500 calls in one reply all get an answer; only MaxCallsPerTurn run, and
// refused ones past the limit are still violations.
func TestManyCalls(t *testing.T) {
	var cs []model.ToolCall
	for i := 0; i < 500; i++ {
		name := "Files__read"
		if i%100 == 99 {
			name = "Files__write"
		}
		cs = append(cs, call(fmt.Sprint(i), name, `{"path":"a"}`))
	}
	h := newHarness(t, calls(cs...), answer("done"))
	h.cfg.Policies = policy.Set{pol(t, "ReadOnly", rule("DenyTools", "Files.write"))}
	if _, err := h.run(t); err != nil {
		t.Fatal(err)
	}
	got := h.results(1)
	if len(got) != 500 || len(h.ran) != MaxCallsPerTurn {
		t.Fatalf("%d results, %d ran", len(got), len(h.ran))
	}
	if !strings.Contains(got[499].Content, "Refused by policy") || !strings.Contains(got[100].Content, "at most 64 run") {
		t.Errorf("results 500: %q; 101: %q", got[499].Content, got[100].Content)
	}
	if len(h.violations) != 5 {
		t.Errorf("%d violations, want 5", len(h.violations))
	}
}

func TestResultCutAndPolicies(t *testing.T) {
	h := newHarness(t,
		calls(call("1", "Files__read", `{"path":"big"}`), call("2", "Files__read", `{"path":"pii"}`), call("3", "Tests__run", `{"command":"env"}`)),
		answer("done"))
	h.cfg.ResultChars = 60
	h.cfg.Policies = policy.Set{pol(t, "Safe", rule("Redact", policy.Ident("Email")), rule("Block", policy.Ident("APIKey")))}
	h.cfg.Run = func(_ context.Context, c Call) (any, error) {
		switch string(c.Args) {
		case `{"path":"big"}`:
			return strings.Repeat("é", 100), nil
		case `{"path":"pii"}`:
			return "bob@x.io", nil
		}
		return "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", nil
	}
	if _, err := h.run(t); err != nil {
		t.Fatal(err)
	}
	got := h.results(1)
	if want := strings.Repeat("é", 60) + "\n\n[Cut: the result has 100 characters; only the first 60 are shown.]"; got[0].Content != want {
		t.Errorf("cut = %q", got[0].Content)
	}
	if got[1].Content != "[REDACTED:Email]" {
		t.Errorf("redacted = %q", got[1].Content)
	}
	if !strings.HasPrefix(got[2].Content, `[Withheld: the result of Tests__run matched policy "Safe" (Block`) || strings.Contains(got[2].Content, "ghp_") {
		t.Errorf("blocked = %q", got[2].Content)
	}
	if len(h.violations) != 1 || h.violations[0].Phase != policy.Input {
		t.Errorf("violations %+v", h.violations)
	}
	if h.events[1].Result != "[REDACTED:Email]" {
		t.Errorf("event result %q", h.events[1].Result)
	}
}

// TestShownArgs: events show arguments with Redact applied (<, > and & as they are, not
// escaped for HTML), and withheld on a Block match.
func TestShownArgs(t *testing.T) {
	h := newHarness(t,
		calls(call("1", "Files__write", `{"path":"a","text":"mail bob@x.io <b> & c > d"}`), call("2", "Files__write", `{"text":"key 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"}`)),
		answer("done"))
	h.cfg.Policies = policy.Set{pol(t, "Safe", rule("Redact", policy.Ident("Email")), rule("Block", policy.Ident("APIKey")))}
	if _, err := h.run(t); err != nil {
		t.Fatal(err)
	}
	if got := string(h.events[0].Args); got != `{"path":"a","text":"mail [REDACTED:Email] <b> & c > d"}` {
		t.Errorf("shown args %s", got)
	}
	if got := string(h.events[1].Args); !strings.HasPrefix(got, `"[withheld: `) || strings.Contains(got, "ghp_") {
		t.Errorf("blocked args %s", got)
	}
	// The tool itself gets what the model sent.
	if !strings.Contains(string(h.ran[0].Args), "bob@x.io") {
		t.Errorf("ran with %s", h.ran[0].Args)
	}
}

func TestApprovals(t *testing.T) {
	careful := policy.Set{pol(t, "Careful", rule("ApproveEffects", policy.Ident("write")))}
	t.Run("no one to ask", func(t *testing.T) {
		h := newHarness(t, calls(call("1", "Files__write", `{}`)))
		h.cfg.Policies = careful
		_, err := h.run(t)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeApprovalNeeded || len(h.ran) != 0 {
			t.Fatalf("err = %v, ran %d", err, len(h.ran))
		}
	})
	t.Run("declined", func(t *testing.T) {
		h := newHarness(t, calls(call("1", "Files__write", `{}`), call("2", "Files__read", `{}`)), answer("ok"))
		h.cfg.Policies = careful
		var asked []ApprovalRequest
		h.cfg.Approve = func(_ context.Context, r ApprovalRequest) (Approval, error) {
			asked = append(asked, r)
			return Approval{Reason: "write to drafts/ instead"}, nil
		}
		if _, err := h.run(t); err != nil {
			t.Fatal(err)
		}
		if len(asked) != 1 || asked[0].Policy != "Careful" || asked[0].Call.Target != "Files.write" {
			t.Errorf("asked %+v", asked)
		}
		if got := h.results(1)[0].Content; got != "A person declined this call: write to drafts/ instead. Don't try it again; do without it or answer with what you have." {
			t.Errorf("declined = %q", got)
		}
		if h.events[0].Decision != Declined || h.events[1].Decision != Allowed || len(h.violations) != 0 {
			t.Errorf("events %+v violations %d", h.events, len(h.violations))
		}
	})
	// An approver that cannot answer now stops the conversation at the call; the saved state
	// resumes there, without asking the model again and without running earlier calls twice.
	t.Run("stop and resume", func(t *testing.T) {
		h := newHarness(t, calls(call("1", "Files__read", `{}`), call("2", "Files__write", `{"path":"n"}`), call("3", "Files__read", `{}`)), answer("ok"))
		h.cfg.Policies = careful
		wait := errors.New("waiting for a person")
		h.cfg.Approve = func(context.Context, ApprovalRequest) (Approval, error) { return Approval{}, wait }
		c, err := New(h.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Run(context.Background()); !errors.Is(err, wait) {
			t.Fatalf("err = %v", err)
		}
		saved, err := json.Marshal(c.State())
		if err != nil {
			t.Fatal(err)
		}
		var st State
		if err := json.Unmarshal(saved, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Pending) != 3 || len(st.Results) != 1 || st.Requests != 1 {
			t.Fatalf("state %+v", st)
		}
		h.cfg.Approve = func(context.Context, ApprovalRequest) (Approval, error) { return Approval{Approved: true}, nil }
		c, err = Resume(h.cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Run(context.Background())
		if err != nil || out != "ok" {
			t.Fatalf("Run = %v, %v", out, err)
		}
		if len(h.model.reqs) != 2 || len(h.ran) != 3 {
			t.Errorf("%d requests, %d calls ran", len(h.model.reqs), len(h.ran))
		}
		if got := h.results(1); len(got) != 3 || got[1].CallID != "2" {
			t.Errorf("results %+v", got)
		}
	})
}

func TestCorrectionSameConversation(t *testing.T) {
	h := newHarness(t, calls(call("1", "Files__read", `{}`)), answer("prose"), answer(`{"ok":true}`))
	h.cfg.Corrections = 1
	h.cfg.Accept = func(r model.Response) (any, error) {
		if !strings.HasPrefix(r.Text, "{") {
			return nil, &Correction{Note: "Answer with JSON.", Err: errors.New("not JSON")}
		}
		return r.Text, nil
	}
	out, err := h.run(t)
	if err != nil || out != `{"ok":true}` {
		t.Fatalf("Run = %v, %v", out, err)
	}
	last := h.model.reqs[2].Messages
	// prompt, tool call, results, the rejected answer, the note.
	if len(last) != 5 || last[3].Text != "prose" || last[4].Text != "Answer with JSON." || last[2].Role != model.Tool {
		t.Errorf("conversation %+v", last)
	}
	// Without corrections left, the rejection is the error.
	h = newHarness(t, answer("prose"))
	h.cfg.Accept = func(model.Response) (any, error) {
		return nil, &Correction{Note: "n", Err: errors.New("not JSON")}
	}
	if _, err := h.run(t); err == nil || err.Error() != "not JSON" {
		t.Errorf("err = %v", err)
	}
}

func TestStops(t *testing.T) {
	h := newHarness(t, calls(call("1", "Files__read", `{}`), call("2", "Files__read", `{}`)))
	h.answers["Files.read"] = &Fatal{Err: errors.New("mock used up")}
	if _, err := h.run(t); err == nil || err.Error() != "mock used up" || len(h.ran) != 1 {
		t.Errorf("fatal: err = %v, ran %d", err, len(h.ran))
	}
	ctx, cancel := context.WithCancel(context.Background())
	h = newHarness(t, calls(call("1", "Files__read", `{}`), call("2", "Files__read", `{}`)))
	h.cfg.Run = func(context.Context, Call) (any, error) { cancel(); return nil, context.Canceled }
	c, _ := New(h.cfg)
	if _, err := c.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
	model := model.ProviderFunc(func(context.Context, model.Request) (model.Response, error) {
		return model.Response{}, errors.New("HTTP 500")
	})
	h = newHarness(t)
	h.cfg.Model = model
	if _, err := h.run(t); err == nil || err.Error() != "HTTP 500" {
		t.Errorf("model error: %v", err)
	}
}

type noTools struct{ script }

func (noTools) CanCallTools() bool { return false }

func TestProviderWithoutTools(t *testing.T) {
	h := newHarness(t)
	h.cfg.Model = &noTools{}
	_, err := New(h.cfg)
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeToolConfig {
		t.Fatalf("err = %v", err)
	}
	// Without tools it is a plain completion.
	h.cfg.Tools = nil
	h.cfg.Model = &noTools{script{t: t, replies: []model.Response{answer("hi")}}}
	if out, err := h.run(t); err != nil || out != "hi" {
		t.Fatalf("Run = %v, %v", out, err)
	}
}

func TestOfferNames(t *testing.T) {
	long := strings.Repeat("m", 80)
	tools := Offer([]Method{
		{Tool: "Git", Method: tool.Method{Name: "files.read"}},
		{Tool: "Git", Method: tool.Method{Name: "files_read"}},
		{Tool: "Git", Method: tool.Method{Name: long}},
		{Tool: "Git", Method: tool.Method{Name: long + "x"}},
	})
	seen := map[string]bool{}
	for _, tl := range tools {
		if len(tl.Name) > 64 || seen[tl.Name] {
			t.Errorf("name %q (len %d) repeats or is too long", tl.Name, len(tl.Name))
		}
		seen[tl.Name] = true
		if string(tl.Params) != `{"type":"object","properties":{}}` || tl.Effect != tool.External {
			t.Errorf("%s: params %s effect %s", tl.Target, tl.Params, tl.Effect)
		}
	}
	if tools[0].Name != "Git__files_read" || tools[1].Name != "Git__files_read_2" || tools[0].Target != "Git.files.read" {
		t.Errorf("names %q %q", tools[0].Name, tools[1].Name)
	}
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 3, "hel\n\n[Cut: the result has 5 characters; only the first 3 are shown.]"},
		{"héllo", 2, "hé\n\n[Cut: the result has 5 characters; only the first 2 are shown.]"},
		{"日本語です", 4, "日本語で\n\n[Cut: the result has 5 characters; only the first 4 are shown.]"},
		{"日本", 2, "日本"},
	} {
		if got := Cut(tt.in, tt.n); got != tt.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	// Invalid UTF-8 of continuation bytes is cut too, at 4 bytes a character.
	bad := strings.Repeat("\x80", 1000)
	if got := Cut(bad, 10); !strings.HasPrefix(got, bad[:40]+"\n\n[Cut:") {
		t.Errorf("Cut of continuation bytes = %q", got)
	}
}
