package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

// scripted is a model that answers each request with the next reply and keeps the requests.
type scripted struct {
	mu      sync.Mutex
	replies []func(req model.Request) (model.Response, error)
	reqs    []model.Request
}

func (s *scripted) Complete(_ context.Context, req model.Request) (model.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Messages = append([]model.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, req)
	if len(s.reqs) > len(s.replies) {
		return model.Response{}, fmt.Errorf("request %d: the script has %d replies", len(s.reqs), len(s.replies))
	}
	return s.replies[len(s.reqs)-1](req)
}

func (s *scripted) requests() []model.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Request(nil), s.reqs...)
}

func says(text string) func(model.Request) (model.Response, error) {
	return func(model.Request) (model.Response, error) {
		return model.Response{Text: text, Message: model.Message{Role: model.Assistant, Text: text}, StopReason: model.StopEnd,
			Usage: model.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
}

func asks(calls ...model.ToolCall) func(model.Request) (model.Response, error) {
	return func(model.Request) (model.Response, error) {
		return model.Response{ToolCalls: calls, Message: model.Message{Role: model.Assistant, ToolCalls: calls}, StopReason: model.StopToolCalls}, nil
	}
}

func tc(id, name, args string) model.ToolCall {
	return model.ToolCall{ID: id, Name: name, Args: json.RawMessage(args)}
}

// workspace is a tool provider type, Files, with read, write and delete, described by its
// type as built-ins are; calls land in the map.
type workspace struct {
	mu    sync.Mutex
	files map[string]string
	calls []string
}

var workspaceMethods = []tool.Method{
	{Name: "read", Description: "Read a file.", Effect: tool.Read, Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "write", Description: "Write a file.", Effect: tool.Write, Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"text":{"type":"string"}},"required":["path","text"]}`)},
	{Name: "delete", Description: "Delete a file.", Effect: tool.Write, Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "run", Description: "Run a command.", Effect: tool.External, Params: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
}

func (w *workspace) Methods(context.Context) ([]tool.Method, error) { return workspaceMethods, nil }

func (w *workspace) Call(_ context.Context, req tool.Request) (json.RawMessage, error) {
	var a struct{ Path, Text, Command string }
	if err := json.Unmarshal(req.Args, &a); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, req.Method+" "+string(req.Args))
	switch req.Method {
	case "read":
		text, ok := w.files[a.Path]
		if !ok {
			return nil, tool.Errorf(tool.CodeToolError, "no such file: %s", a.Path)
		}
		return json.Marshal(text)
	case "write":
		w.files[a.Path] = a.Text
		return json.Marshal(map[string]any{"written": len(a.Text)})
	case "run":
		return json.Marshal(map[string]any{"exitCode": 0, "output": "ran " + a.Command})
	}
	delete(w.files, a.Path)
	return json.Marshal("deleted")
}

func (w *workspace) Close() error { return nil }

func workspaceRegistry(t testing.TB, w *workspace) *tool.Registry {
	reg := tool.NewRegistry()
	err := reg.Add(tool.Type{Name: "Work", Kind: tool.KindBuiltin, Methods: workspaceMethods,
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return w, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func eventsOf(res []runtime.Event, typ string) []runtime.Event {
	var out []runtime.Event
	for _, e := range res {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

const fixerSrc = `
policy FixerTools : AllowTools("Code.*", "Shell.run")
  & DenyTools("Code.delete")
  & DenyArgs("Code.write", "path", "\\.test\\.")
  & DenyArgs("Shell.run", "rm\\s+-rf")
policy Safe : Block(APIKey) & Redact(Email)

tool Code  : Work()
tool Shell : Work()

agent Fixer [openai/gpt-4o-mini, max_steps: 5, tool_result_chars: 40]
  system "You fix the project."
  equips Code, Shell
  requires FixerTools, Safe

pipeline Fix(task: String) -> Result:
  task |> Fixer.fix("Fix it.", tools: [Code, Shell])
`

// TestToolLoopPolicies: the policies through the loop. A hidden method is never offered, and
// a call to it anyway is refused (a violation); a refused DenyArgs call (three-argument
// form, and two-argument form through look-alike folding) never runs, a Block on a result
// withholds it, a long result is cut; each is visible in events and meta.
func TestToolLoopPolicies(t *testing.T) {
	w := &workspace{files: map[string]string{"src/a.ts": "let a = 1; // " + strings.Repeat("x", 60), "secret.env": "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"}}
	m := &scripted{replies: []func(model.Request) (model.Response, error){
		asks(tc("1", "Code__read", `{"path":"src/a.ts"}`), tc("2", "Code__write", `{"path":"src/a.test.ts","text":"x"}`)),
		asks(tc("3", "Shell__run", `{"command":"ｒｍ -rf /"}`), tc("4", "Code__delete", `{"path":"src/a.ts"}`), tc("5", "Code__read", `{"path":"secret.env"}`)),
		asks(tc("6", "Code__write", `{"path":"src/a.ts","text":"mail bob@example.com"}`)),
		says("Fixed src/a.ts."),
	}}
	var events []runtime.Event
	rt := load(t, fixerSrc, runtime.Config{Tools: workspaceRegistry(t, w), OnEvent: func(e runtime.Event) { events = append(events, e) },
		Models: func(string) (model.Provider, string, error) { return m, "gpt-4o-mini", nil }})
	res := run(t, rt, "Fix", map[string]any{"task": "fix a"})
	wantCompleted(t, res)
	if res.Output != "Fixed src/a.ts." {
		t.Errorf("output %v", res.Output)
	}
	reqs := m.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	var offered []string
	for _, d := range reqs[0].Tools {
		offered = append(offered, d.Name)
	}
	if strings.Join(offered, " ") != "Code__read Code__write Code__run Shell__run" {
		t.Errorf("offered %v; Code.delete is hidden by DenyTools, Shell's read/write/delete by AllowTools", offered)
	}
	// Only the allowed calls ran, with the model's arguments alone: the flowing value
	// ("fix a") is never added to a call the model chose.
	if got := strings.Join(w.calls, "; "); strings.Contains(got, "fix a") {
		t.Errorf("the flowing value reached a chosen call: %s", got)
	}
	if got := strings.Join(w.calls, "; "); got != `read {"path":"src/a.ts"}; read {"path":"secret.env"}; write {"path":"src/a.ts","text":"mail bob@example.com"}` {
		t.Errorf("tool calls: %s", got)
	}
	results := func(i int) []model.ToolResult { msgs := reqs[i].Messages; return msgs[len(msgs)-1].ToolResults }
	r1, r2 := results(1), results(2)
	if !strings.Contains(r1[0].Content, "[Cut: the result has 74 characters; only the first 40 are shown.]") {
		t.Errorf("cut: %q", r1[0].Content)
	}
	if !strings.HasPrefix(r1[1].Content, `Refused by policy "FixerTools": argument path "src/a.test.ts" matches DenyArgs("Code.write", "path", "\\.test\\.")`) {
		t.Errorf("refused write: %q", r1[1].Content)
	}
	if !strings.HasPrefix(r2[0].Content, `Refused by policy "FixerTools": an argument "ｒｍ -rf /" matches DenyArgs("Shell.run", "rm\\s+-rf")`) {
		t.Errorf("refused run: %q", r2[0].Content)
	}
	// A hidden method the model calls anyway is refused by the rule that hides it.
	if r2[1].Content != `Refused by policy "FixerTools": Code.delete is denied by DenyTools("Code.delete"). Don't try this call again.` {
		t.Errorf("hidden: %q", r2[1].Content)
	}
	if !strings.HasPrefix(r2[2].Content, "[Withheld:") || strings.Contains(r2[2].Content, "ghp_") {
		t.Errorf("blocked: %q", r2[2].Content)
	}

	// Events: one llm per request, agent_tool per call asked for, tool per call run.
	if n := len(eventsOf(events, "llm")); n != 4 {
		t.Errorf("%d llm events", n)
	}
	var decisions []string
	for _, e := range eventsOf(events, "agent_tool") {
		decisions = append(decisions, e.Target+"="+e.Decision)
		if e.Agent != "Fixer" {
			t.Errorf("agent_tool event without the agent: %+v", e)
		}
	}
	if got := strings.Join(decisions, " "); got != "Code.read=allowed Code.write=refused Shell.run=refused Code.delete=refused Code.read=allowed Code.write=allowed" {
		t.Errorf("decisions: %s", got)
	}
	tools := eventsOf(events, "tool")
	if len(tools) != 3 {
		t.Fatalf("%d tool events", len(tools))
	}
	if tools[1].Output != "[withheld: APIKey detected]" || tools[2].Agent != "Fixer" {
		t.Errorf("tool events %+v", tools)
	}
	if got := string(tools[2].Args); got != `{"path":"src/a.ts","text":"mail [REDACTED:Email]"}` {
		t.Errorf("tool event args %s", got)
	}
	if got := string(eventsOf(events, "agent_tool")[5].Args); got != `{"path":"src/a.ts","text":"mail [REDACTED:Email]"}` {
		t.Errorf("agent_tool args %s", got)
	}
	// Meta: the calls with their agent, the violations with their phase.
	var calls []string
	for _, c := range res.Meta.Calls {
		calls = append(calls, c.Kind+":"+c.Target+":"+c.Agent)
	}
	if got := strings.Join(calls, " "); got != "llm:Fixer.fix:Fixer tool:Code.read:Fixer llm:Fixer.fix:Fixer tool:Code.read:Fixer llm:Fixer.fix:Fixer tool:Code.write:Fixer llm:Fixer.fix:Fixer" {
		t.Errorf("calls: %s", got)
	}
	var viol []string
	for _, v := range res.Meta.Violations {
		viol = append(viol, v.Phase+":"+v.Rule+":"+v.Target)
	}
	if got := strings.Join(viol, " "); got != "tool:DenyArgs:Code.write tool:DenyArgs:Shell.run tool:DenyTools:Code.delete input:Block:Code.read" {
		t.Errorf("violations: %s", got)
	}
	if n := len(eventsOf(events, "violation")); n != 4 {
		t.Errorf("%d violation events", n)
	}
	// What the model read of each call is on its agent_tool event, exactly as the next
	// request carried it: cut, refused, withheld.
	ats := eventsOf(events, "agent_tool")
	fed := append(append(append([]model.ToolResult(nil), r1...), r2...), results(3)...)
	for i, e := range ats {
		if e.Result != fed[i].Content {
			t.Errorf("agent_tool %d result %q, the model read %q", i, e.Result, fed[i].Content)
		}
	}
	// The system prompt is on the first request's llm event alone.
	for i, e := range eventsOf(events, "llm") {
		if want := map[bool]string{true: "You fix the project."}[i == 0]; e.System != want {
			t.Errorf("llm event %d system %q, want %q", i, e.System, want)
		}
	}
}

// A model the price table does not know is marked unpriced on its llm event and in
// context.meta.calls, so a reader can tell a cost of $0 from an unknown one.
func TestUnpricedModel(t *testing.T) {
	m := &scripted{replies: []func(model.Request) (model.Response, error){func(model.Request) (model.Response, error) {
		return model.Response{Text: "hi", Message: model.Message{Role: model.Assistant, Text: "hi"}, StopReason: model.StopEnd, Unpriced: true}, nil
	}}}
	var events []runtime.Event
	rt := load(t, `
agent Writer [openai/some-new-model]
pipeline P(x: String) -> Result:
  x |> Writer.say("Say {{x}}.")
`, runtime.Config{OnEvent: func(e runtime.Event) { events = append(events, e) },
		Models: func(string) (model.Provider, string, error) { return m, "some-new-model", nil }})
	res := run(t, rt, "P", map[string]any{"x": "hi"})
	wantCompleted(t, res)
	if llm := eventsOf(events, "llm"); len(llm) != 1 || !llm[0].Unpriced {
		t.Errorf("llm events %+v", llm)
	}
	if len(res.Meta.Calls) != 1 || !res.Meta.Calls[0].Unpriced {
		t.Errorf("calls %+v", res.Meta.Calls)
	}
}

// TestToolLoopMocks: a mock of an agent with tools sees the offered tools, the messages and
// the step, and calls tools with UseTool; the tools run for real (or mocked), checked by
// the policies; a mocks file writes the same with $useTool.
func TestToolLoopMocks(t *testing.T) {
	w := &workspace{files: map[string]string{"notes.md": "a\nb\n"}}
	src := `
policy Careful : AllowTools("Files.*") & DenyTools("Files.delete") & ApproveEffects(write)
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files])
`
	var seen []runtime.MockRequest
	rt := load(t, src, runtime.Config{Tools: workspaceRegistry(t, w)})
	rt.MockFunc("Clerk.work", func(r runtime.MockRequest) (any, error) {
		seen = append(seen, r)
		switch r.Step {
		case 1:
			return runtime.UseTool("Files.read", map[string]any{"path": "notes.md"}), nil
		case 2:
			return []runtime.ToolUse{runtime.UseTool("Files.write", map[string]any{"path": "notes.md", "text": "a\n"}), runtime.UseTool("Files.delete", map[string]any{"path": "x"})}, nil
		}
		return "Merged 2 notes.", nil
	})
	rt.Mock("Files.write?", "no, write to drafts/ instead")
	res := run(t, rt, "Tidy", map[string]any{"task": "merge duplicates"})
	wantCompleted(t, res)
	if res.Output != "Merged 2 notes." || len(seen) != 3 {
		t.Fatalf("output %v after %d requests", res.Output, len(seen))
	}
	if got := strings.Join(seen[0].Tools, " "); got != "Files.read Files.write Files.run" {
		t.Errorf("tools %s", got)
	}
	if len(seen[0].Messages) != 1 || len(seen[2].Messages) != 5 || seen[1].Step != 2 {
		t.Errorf("messages %d, %d; step %d", len(seen[0].Messages), len(seen[2].Messages), seen[1].Step)
	}
	last := seen[2].Messages[4].ToolResults
	if !strings.HasPrefix(last[0].Content, "A person declined this call: no, write to drafts/ instead.") || last[1].Content != `Refused by policy "Careful": Files.delete is denied by DenyTools("Files.delete"). Don't try this call again.` {
		t.Errorf("results %+v", last)
	}
	if got := seen[1].Messages[2].ToolResults[0].Content; got != "a\nb\n" {
		t.Errorf("read result %q", got)
	}
	if len(w.calls) != 1 {
		t.Errorf("tool calls %v", w.calls)
	}

	// The same from a mocks file, with the tool mocked too and approvals approved.
	mocks, err := runtime.ParseMocks([]byte(`{
  "Clerk.work": [
    {"$useTool": "Files.read", "args": {"path": "notes.md"}},
    [{"$useTool": "Files.write", "args": {"path": "notes.md", "text": "a"}}, {"$useTool": "Files.read", "args": {"path": "notes.md"}}],
    "Done."
  ],
  "Files.read": {"text": "mocked"},
  "approval": "approve"
}`))
	if err != nil {
		t.Fatal(err)
	}
	w.calls = nil
	var events []runtime.Event
	rt = load(t, src, runtime.Config{Tools: workspaceRegistry(t, w), Mocks: mocks, OnEvent: func(e runtime.Event) { events = append(events, e) }})
	res = run(t, rt, "Tidy", map[string]any{"task": "t"})
	wantCompleted(t, res)
	if res.Output != "Done." || len(w.calls) != 1 || !strings.HasPrefix(w.calls[0], "write") {
		t.Errorf("output %v, calls %v", res.Output, w.calls)
	}
	var decisions []string
	for _, e := range eventsOf(events, "agent_tool") {
		decisions = append(decisions, e.Decision)
	}
	if got := strings.Join(decisions, " "); got != "allowed approved allowed" {
		t.Errorf("decisions %s", got)
	}

	// --mock: every agent answers with text on its first request.
	rt = load(t, src, runtime.Config{Tools: workspaceRegistry(t, w), MockAgents: true})
	res = run(t, rt, "Tidy", map[string]any{"task": "t"})
	wantCompleted(t, res)
	if res.Output != "mock answer of Clerk.work" {
		t.Errorf("--mock: %v", res.Output)
	}
}

// TestToolLoopDirectives: @correct adds to the same conversation (the agent keeps its tool
// results); @retry retries the failed request, not the conversation; @timeout bounds each
// request, not all of them together.
func TestToolLoopDirectives(t *testing.T) {
	w := &workspace{files: map[string]string{"a": "A"}}
	var attempts int
	m := &scripted{replies: []func(model.Request) (model.Response, error){
		asks(tc("1", "Files__read", `{"path":"a"}`)),
		func(model.Request) (model.Response, error) {
			attempts++
			return model.Response{}, &model.Error{Code: model.CodeRateLimit, Message: "slow down", Retryable: true}
		},
		func(req model.Request) (model.Response, error) {
			time.Sleep(30 * time.Millisecond)
			return says("prose")(req)
		},
		func(req model.Request) (model.Response, error) {
			time.Sleep(30 * time.Millisecond)
			return says(`{"a": "A"}`)(req)
		},
	}}
	rt := load(t, `
policy Shape : Require(JSON)
tool Files : Work()
agent A [openai/gpt-4o-mini]
  equips Files
  requires Shape
pipeline P(x: String) -> Result:
  x |> A.work("Read a.", tools: auto) @retry(1) @correct(1) @timeout(50)
`, runtime.Config{Tools: workspaceRegistry(t, w), Sleep: func(context.Context, time.Duration) error { return nil },
		Models: func(string) (model.Provider, string, error) { return m, "gpt-4o-mini", nil }})
	res := run(t, rt, "P", map[string]any{"x": "go"})
	wantCompleted(t, res)
	if out, _ := res.Output.(map[string]any); out["a"] != "A" {
		t.Errorf("output %v", res.Output)
	}
	reqs := m.requests()
	if len(reqs) != 4 || attempts != 1 {
		t.Fatalf("%d requests (%d failed)", len(reqs), attempts)
	}
	// The retried request is the same conversation; the correction follows the answer.
	if len(reqs[2].Messages) != 3 || len(reqs[3].Messages) != 5 || reqs[3].Messages[2].Role != model.Tool ||
		!strings.Contains(reqs[3].Messages[4].Text, "rejected by policy Shape (Require)") {
		t.Errorf("conversation: %d, %d messages: %+v", len(reqs[2].Messages), len(reqs[3].Messages), reqs[3].Messages)
	}
}

// TestToolFirstIsPoliced: tool: T is checked by the agent's tool policies like any other
// call; its tool event names the method and shows the arguments redacted.
func TestToolFirstIsPoliced(t *testing.T) {
	w := &workspace{files: map[string]string{}}
	reg := tool.NewRegistry()
	one := []tool.Method{workspaceMethods[3]} // run only: tool: T calls it
	if err := reg.Add(tool.Type{Name: "Sh", Kind: tool.KindBuiltin, Methods: one,
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return onlyRun{w}, nil }}); err != nil {
		t.Fatal(err)
	}
	src := `
policy Tight : DenyArgs("Shell.run", "command", "^(?!bun test)") & Redact(Email)
tool Shell : Sh()
agent A [openai/gpt-4o-mini]
  requires Tight
pipeline P(cmd: String) -> Result:
  { command: cmd } |> A.explain("Explain the output.", tool: Shell)
`
	var events []runtime.Event
	rt := load(t, src, runtime.Config{Tools: reg, OnEvent: func(e runtime.Event) { events = append(events, e) }})
	rt.Mock("A.explain", "fine")
	res := run(t, rt, "P", map[string]any{"cmd": "rm -rf / # bob@example.com"})
	if res.Status != runtime.Failed || res.Error.Code != "POLICY_VIOLATION" || len(w.calls) != 0 {
		t.Fatalf("%s %+v; calls %v", res.Status, res.Error, w.calls)
	}
	if len(res.Meta.Violations) != 1 || res.Meta.Violations[0].Phase != "tool" || res.Meta.Violations[0].Target != "Shell.run" {
		t.Errorf("violations %+v", res.Meta.Violations)
	}
	events = nil
	res = run(t, rt, "P", map[string]any{"cmd": "bun test # bob@example.com"})
	wantCompleted(t, res)
	tools := eventsOf(events, "tool")
	if len(tools) != 1 || tools[0].Target != "Shell.run" || string(tools[0].Args) != `{"command":"bun test # [REDACTED:Email]"}` {
		t.Errorf("tool events %+v", tools)
	}
	// Mocked, the method comes from the provider type's description.
	rt.Mock("Shell", map[string]any{"exitCode": 0})
	res = run(t, rt, "P", map[string]any{"cmd": "rm -rf /"})
	if res.Status != runtime.Failed || res.Error.Code != "POLICY_VIOLATION" {
		t.Errorf("mocked: %s %+v", res.Status, res.Error)
	}
}

type onlyRun struct{ *workspace }

func (o onlyRun) Methods(context.Context) ([]tool.Method, error) {
	return []tool.Method{workspaceMethods[3]}, nil
}

// TestFlowingValueByTemplate: the flowing value is left out of the prompt only when the call
// names it (an argument or a template), not when its text happens to occur in the prompt.
func TestFlowingValueByTemplate(t *testing.T) {
	src := `
agent A [openai/gpt-4o-mini]
pipeline Sub(n: Number) -> Result:
  n |> A.count("Count to 100.")
pipeline Named(n: Number) -> Result:
  n |> A.count("Count to {{n}}.")
pipeline Arg(n: Number) -> Result:
  n |> A.count("Count to:", n)
pipeline After(n: Number) -> Result:
  n |> System.Value("x") as r |> A.count("Use {{r}}.")
`
	rt := load(t, src, runtime.Config{})
	var prompts []string
	rt.MockFunc("A.count", func(r runtime.MockRequest) (any, error) { prompts = append(prompts, r.Prompt); return "ok", nil })
	for _, p := range []string{"Sub", "Named", "Arg", "After"} {
		wantCompleted(t, run(t, rt, p, map[string]any{"n": "10"}))
	}
	want := []string{"Count to 100.\n\nInput:\n10", "Count to 10.", "Count to:\n\n10", "Use x."}
	for i, w := range want {
		if prompts[i] != w {
			t.Errorf("prompt %d = %q, want %q", i, prompts[i], w)
		}
	}
}

// priced answers with usage priced as the real table prices gpt-4o-mini, and records the
// max_tokens each request sent.
type priced struct {
	mu   sync.Mutex
	caps []int
}

func (p *priced) Complete(_ context.Context, req model.Request) (model.Response, error) {
	p.mu.Lock()
	p.caps = append(p.caps, req.MaxTokens)
	p.mu.Unlock()
	time.Sleep(5 * time.Millisecond) // both branches in flight at once
	u := model.Usage{InputTokens: 20, OutputTokens: 30}
	return model.Response{Text: "ok", Message: model.Message{Role: model.Assistant, Text: "ok"}, StopReason: model.StopEnd,
		Usage: u, Cost: model.Price{Input: 0.15, Output: 0.6}.Cost(u)}, nil
}

// TestMaxSpendFanOut: a fan-out that fits the budget runs: each branch reserves its share of
// what is left, not all of it, and no cap is above the model's output limit.
func TestMaxSpendFanOut(t *testing.T) {
	p := &priced{}
	rt := load(t, `
policy Budget : MaxSpend(0.01)
agent B [openai/gpt-4o-mini]
  requires Budget
pipeline Both(x: String) -> Result:
  x |* { B.a("One."), B.b("Two.") }
`, runtime.Config{Models: func(string) (model.Provider, string, error) { return p, "gpt-4o-mini", nil }})
	res := run(t, rt, "Both", map[string]any{"x": "go"})
	wantCompleted(t, res)
	if len(p.caps) != 2 {
		t.Fatalf("caps %v", p.caps)
	}
	for _, c := range p.caps {
		if c <= 0 || c > 16384 {
			t.Errorf("max_tokens %d: want a cap within gpt-4o-mini's 16384", c)
		}
	}
	// A model whose output limit the table does not know: the budget alone would let the
	// first branch reserve all of it (1000 reply tokens); each gets about half.
	p = &priced{}
	rt = load(t, `
policy Budget : MaxSpend(0.01)
agent B [openai/big]
  requires Budget
pipeline Both(x: String) -> Result:
  x |* { B.a("One."), B.b("Two.") }
`, runtime.Config{Prices: model.Prices{"openai/big": {Input: 1, Output: 10}},
		Models: func(string) (model.Provider, string, error) { return p, "big", nil }})
	res = run(t, rt, "Both", map[string]any{"x": "go"})
	wantCompleted(t, res)
	if len(p.caps) != 2 || p.caps[0] > 500 || p.caps[1] > 500 || p.caps[0] < 400 || p.caps[1] < 400 {
		t.Errorf("caps %v, want each branch about half of 1000", p.caps)
	}
}

func TestMocksKeysChecked(t *testing.T) {
	src := `
tool Files : Work()
tool Git : Remote()
agent Clerk [openai/gpt-4o]
  equips Files
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Files])
`
	reg := workspaceRegistry(t, &workspace{})
	reg.Add(tool.Type{Name: "Remote", Kind: tool.KindMCP, Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return nil, errors.New("no") }})
	for key, want := range map[string]string{
		"Clerk.wrok":   "mocks: Clerk.wrok names no call of agent Clerk in this file; did you mean Clerk.work?",
		"Flies.read":   "mocks: Flies.read names no agent call, tool or method declared in this file",
		"Files.raed":   "mocks: Files.raed: tool Files (Work) has no method raed; did you mean Files.read?",
		"Files?":       "mocks: Files?: an approval mock names a method, as in Files.write?",
		"Files.write?": "",
		"Files":        "",
		"Git.anything": "",
		"approval":     "",
		"Clerk.work":   "",
	} {
		rt := load(t, src, runtime.Config{Tools: reg})
		rt.Mock(key, "x")
		_, err := rt.Run(context.Background(), "Tidy", map[string]any{"task": "t"})
		switch {
		case want == "" && errcode.Code(err) == runtime.CodeMock:
			t.Errorf("%s: %v", key, err)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want) || errcode.Code(err) != runtime.CodeMock):
			t.Errorf("%s: err = %v, want %q", key, err, want)
		}
	}
}

type toolless struct{ scripted }

func (*toolless) CanCallTools() bool { return false }

// TestProviderWithoutToolCalling: a custom model provider that says it cannot call tools
// fails an agent call with tools with TOOL_CONFIG.
func TestProviderWithoutToolCalling(t *testing.T) {
	rt := load(t, `
tool Files : Work()
agent A [openai/custom]
  equips Files
pipeline P(x: String) -> Result:
  x |> A.work(tools: auto)
`, runtime.Config{Tools: workspaceRegistry(t, &workspace{}), Models: func(string) (model.Provider, string, error) { return &toolless{}, "custom", nil }})
	res := run(t, rt, "P", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != tool.CodeToolConfig {
		t.Errorf("%s %+v", res.Status, res.Error)
	}
}

// lister is a provider whose methods only it knows (an MCP server, say); it counts opens.
type lister struct {
	opened *int
}

func (l lister) Methods(context.Context) ([]tool.Method, error) {
	return []tool.Method{{Name: "list_prs", Description: "List pull requests."}, {Name: "list_tools", PipelineOnly: true}}, nil
}
func (l lister) Call(context.Context, tool.Request) (json.RawMessage, error) {
	return json.RawMessage(`["#12"]`), nil
}
func (l lister) Close() error { return nil }

// TestServerToolsOfAMockedAgent: a mocked agent's tools whose methods only their server
// knows are not started unless the mock calls one of them.
func TestServerToolsOfAMockedAgent(t *testing.T) {
	opened := 0
	reg := tool.NewRegistry()
	reg.Add(tool.Type{Name: "Remote", Kind: tool.KindMCP, Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
		opened++
		return lister{&opened}, nil
	}})
	src := `
tool Git : Remote()
agent M [anthropic/claude-sonnet-4-5]
  equips Git
pipeline Tend(repo: String) -> Result:
  repo |> M.review("Review {{repo}}.", tools: [Git])
`
	rt := load(t, src, runtime.Config{Tools: reg})
	rt.Mock("M.review", "PR #12 fails.")
	wantCompleted(t, run(t, rt, "Tend", map[string]any{"repo": "a/b"}))
	if opened != 0 {
		t.Errorf("the server was started %d times for a mock that called nothing", opened)
	}
	rt = load(t, src, runtime.Config{Tools: reg})
	var results []string
	rt.MockFunc("M.review", func(r runtime.MockRequest) (any, error) {
		if r.Step == 1 {
			return []runtime.ToolUse{runtime.UseTool("Git.list_prs", nil), runtime.UseTool("Git.list_tools", nil)}, nil
		}
		for _, res := range r.Messages[len(r.Messages)-1].ToolResults {
			results = append(results, res.Content)
		}
		return "done", nil
	})
	wantCompleted(t, run(t, rt, "Tend", map[string]any{"repo": "a/b"}))
	if opened != 1 || len(results) != 2 || results[0] != `["#12"]` || !strings.HasPrefix(results[1], `Error: there is no tool named "Git__list_tools"`) {
		t.Errorf("opened %d, results %q", opened, results)
	}
}

func TestMockToolUseWithoutTools(t *testing.T) {
	rt := load(t, `
agent A [openai/gpt-4o-mini]
pipeline P(x: String) -> Result:
  x |> A.work()
`, runtime.Config{})
	rt.Mock("A.work", map[string]any{"$useTool": "Files.read"})
	res := run(t, rt, "P", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeMock || !strings.Contains(res.Error.Message, "offers no tools") {
		t.Errorf("%s %+v", res.Status, res.Error)
	}
}

// TestToolLoopInEach: each item of a |* each is its own conversation; the item's name in a
// template is the flowing value, so no Input: line is added.
func TestToolLoopInEach(t *testing.T) {
	w := &workspace{files: map[string]string{"a": "A", "b": "B"}}
	rt := load(t, `
tool Files : Work()
agent A [openai/gpt-4o-mini]
  equips Files
pipeline P(docs: List) -> Result:
  docs |* each doc: A.read("Read {{doc}}.", tools: [Files]) @limit(2)
`, runtime.Config{Tools: workspaceRegistry(t, w)})
	var mu sync.Mutex
	var prompts []string
	rt.MockFunc("A.read", func(r runtime.MockRequest) (any, error) {
		if r.Step == 1 {
			mu.Lock()
			prompts = append(prompts, r.Prompt)
			mu.Unlock()
			return runtime.UseTool("Files.read", map[string]any{"path": r.Input}), nil
		}
		return "read " + r.Messages[len(r.Messages)-1].ToolResults[0].Content, nil
	})
	res := run(t, rt, "P", map[string]any{"docs": []any{"a", "b"}})
	wantCompleted(t, res)
	if out, _ := res.Output.([]any); len(out) != 2 || out[0] != "read A" || out[1] != "read B" {
		t.Errorf("output %v", res.Output)
	}
	for _, p := range prompts {
		if strings.Contains(p, "Input:") {
			t.Errorf("prompt %q repeats the item", p)
		}
	}
}

// TestToolLoopBudget: a model that never stops asking for tools is stopped by MaxSpend
// before its steps run out; each request is checked before it is sent.
func TestToolLoopBudget(t *testing.T) {
	var n int
	m := model.ProviderFunc(func(_ context.Context, req model.Request) (model.Response, error) {
		n++
		c := tc(fmt.Sprint(n), "Files__read", `{"path":"a"}`)
		return model.Response{ToolCalls: []model.ToolCall{c}, Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{c}},
			StopReason: model.StopToolCalls, Usage: model.Usage{InputTokens: 1000, OutputTokens: 100}, Cost: 0.03}, nil
	})
	rt := load(t, `
policy Budget : MaxSpend(0.10)
tool Files : Work()
agent A [openai/gpt-4o-mini, max_steps: 50]
  equips Files
  requires Budget
pipeline P(x: String) -> Result:
  x |> A.work(tools: auto)
`, runtime.Config{Tools: workspaceRegistry(t, &workspace{files: map[string]string{"a": "A"}}),
		Models: func(string) (model.Provider, string, error) { return m, "gpt-4o-mini", nil }})
	res := run(t, rt, "P", map[string]any{"x": "go"})
	if res.Status != runtime.Failed || res.Error.Code != "POLICY_VIOLATION" || !strings.Contains(res.Error.Message, "MaxSpend") {
		t.Fatalf("%s %+v", res.Status, res.Error)
	}
	if n < 3 || n > 4 || res.Meta.Cost > 0.13 {
		t.Errorf("%d requests, cost %v; want the budget to stop it at about 0.10", n, res.Meta.Cost)
	}
}

// TestMockedAgentIsOfferedTheDeclaration: a mocked agent's tools are described without
// opening anything, as the declaration offers them (its type's MethodsOf: a read-only
// workspace has no write), not as every method its type has.
func TestMockedAgentIsOfferedTheDeclaration(t *testing.T) {
	w := &workspace{files: map[string]string{"a.md": "a"}}
	reg := tool.NewRegistry()
	reg.Add(tool.Type{Name: "Work", Kind: tool.KindBuiltin, Methods: workspaceMethods,
		MethodsOf: func(d tool.Declaration) []tool.Method {
			if d.Named["write"] == true {
				return workspaceMethods
			}
			return workspaceMethods[:1]
		},
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) { return w, nil }})
	src := `
tool Notes : Work()
tool Drafts : Work(write: true)
agent Clerk [openai/gpt-4o]
  equips Notes, Drafts
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: [Notes, Drafts])
`
	var offered []string
	rt := load(t, src, runtime.Config{Tools: reg})
	rt.MockFunc("Clerk.work", func(r runtime.MockRequest) (any, error) {
		offered = r.Tools
		return "done", nil
	})
	wantCompleted(t, run(t, rt, "Tidy", map[string]any{"task": "x"}))
	if got := strings.Join(offered, " "); got != "Notes.read Drafts.read Drafts.write Drafts.delete Drafts.run" {
		t.Errorf("offered %s", got)
	}
}
