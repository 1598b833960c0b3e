package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/halo-lang/halo/host/model"
	"github.com/halo-lang/halo/host/runtime"
	"github.com/halo-lang/halo/host/tool"
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

// TestToolLoopPolicies: the policies through the loop. A hidden method is never offered, a
// refused DenyArgs call (three-argument form, and two-argument form through look-alike
// folding) never runs, a Block on a result withholds it, a long result is cut; each is
// visible in events and meta.
func TestToolLoopPolicies(t *testing.T) {
	w := &workspace{files: map[string]string{"src/a.ts": "let a = 1; // " + strings.Repeat("x", 60), "secret.env": "KEY=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"}}
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
	// Only the allowed calls ran.
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
	if !strings.HasPrefix(r2[1].Content, `Error: there is no tool named "Code__delete".`) {
		t.Errorf("hidden: %q", r2[1].Content)
	}
	if !strings.HasPrefix(r2[2].Content, "[Withheld:") || strings.Contains(r2[2].Content, "sk-proj") {
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
	if got := strings.Join(decisions, " "); got != "Code.read=allowed Code.write=refused Shell.run=refused Code__delete=error Code.read=allowed Code.write=allowed" {
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
	if got := strings.Join(viol, " "); got != "tool:DenyArgs:Code.write tool:DenyArgs:Shell.run input:Block:Code.read" {
		t.Errorf("violations: %s", got)
	}
	if n := len(eventsOf(events, "violation")); n != 3 {
		t.Errorf("%d violation events", n)
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
	if !strings.HasPrefix(last[0].Content, "A person declined this call: no, write to drafts/ instead.") || !strings.HasPrefix(last[1].Content, `Error: there is no tool named "Files__delete"`) {
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

// TestToolLoopApprovalNeeded: without an approval mock, a call that needs approval fails
// the run with APPROVAL_NEEDED (approvals that reach a person come later).
func TestToolLoopApprovalNeeded(t *testing.T) {
	rt := load(t, `
policy Careful : ApproveEffects(write)
tool Files : Work()
agent Clerk [openai/gpt-4o]
  equips Files
  requires Careful
pipeline Tidy(task: String) -> Result:
  task |> Clerk.work(tools: auto)
`, runtime.Config{Tools: workspaceRegistry(t, &workspace{files: map[string]string{}})})
	rt.Mock("Clerk.work", []any{map[string]any{"$useTool": "Files.write", "args": map[string]any{"path": "a", "text": "b"}}, "done"})
	res := run(t, rt, "Tidy", map[string]any{"task": "t"})
	if res.Status != runtime.Failed || res.Error.Code != runtime.CodeApprovalNeeded {
		t.Fatalf("%s %+v", res.Status, res.Error)
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
