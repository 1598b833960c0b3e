package plan_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/plan"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
)

// prices are round numbers, so the worst cases below can be worked out by hand.
var prices = model.Prices{
	"openai/m":     {Input: 1, Output: 2, MaxOutput: 100},
	"openai/small": {Input: 1, Output: 1, MaxOutput: 20},
	"openai/wide":  {Input: 1, Output: 1},
	"ollama/*":     {},
}

// registry has Fake, a provider type that describes its methods (as built-ins and http
// packages do), and Remote, one whose methods only its server knows (as MCP).
func registry() *tool.Registry {
	reg := tool.NewRegistry()
	reg.Add(tool.Type{Name: "Fake", Kind: tool.KindBuiltin,
		Methods: []tool.Method{{Name: "get", Effect: tool.Read}, {Name: "put", Effect: tool.Write}, {Name: "zap"}, {Name: "list_tools", PipelineOnly: true}},
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
			return nil, errors.New("plan must not open tools")
		}})
	reg.Add(tool.Type{Name: "One", Kind: tool.KindBuiltin, Methods: []tool.Method{{Name: "ping", Effect: tool.Read}},
		Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
			return nil, errors.New("plan must not open tools")
		}})
	reg.Add(tool.Type{Name: "Remote", Kind: tool.KindMCP, Open: func(context.Context, tool.Declaration) (tool.Provider, error) {
		return nil, errors.New("plan must not start servers")
	}})
	for _, t := range store.Types(nil) {
		reg.Add(t)
	}
	return reg
}

func program(t *testing.T, src string) *lang.Program {
	t.Helper()
	f, diags := lang.Parse("p.halo", []byte(src))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	prog := &lang.Program{Files: []*lang.File{f}}
	if diags := runtime.Validate(prog, registry()); diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return prog
}

func planOf(t *testing.T, src, pipeline string, cfg plan.Config) *plan.Plan {
	t.Helper()
	cfg.Tools = registry()
	if cfg.Prices == nil {
		cfg.Prices = prices
	}
	p, err := plan.Pipeline(program(t, src), pipeline, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func wantCost(t *testing.T, what string, c plan.Cost, requests, in, out int64, usd float64) {
	t.Helper()
	if c.RequestsUnknown || c.TokensUnknown || c.USDUnknown {
		t.Errorf("%s: unknown parts %+v", what, c)
	}
	if c.Requests != requests || c.InputTokens != in || c.OutputTokens != out || plan.RoundUSD(c.USD) != usd {
		t.Errorf("%s: %d requests, %d in, %d out, $%v; want %d, %d, %d, $%v", what, c.Requests, c.InputTokens, c.OutputTokens, plan.RoundUSD(c.USD), requests, in, out, usd)
	}
}

// TestToolLoopArithmetic works one agent call with tools out by hand.
func TestToolLoopArithmetic(t *testing.T) {
	p := planOf(t, `
policy Rules : DenyTools("F.zap") & ApproveEffects(write) & DenyArgs("F.put", "path", "^/")
tool F : Fake()
agent A [openai/m, max_steps: 2, tool_result_chars: 40]
  equips F
  requires Rules
pipeline P(x: String) -> Result:
  x |> A.run("hi", tools: [F]) @retry(1) @correct(1)
`, "P", plan.Config{ValueTokens: 10})
	ac := p.Stages[0].Agents[0]
	// The prompt: the tool definitions the model is offered (F.get and F.put; F.zap is
	// hidden, list_tools is for pipelines only), each its function name, description,
	// parameter schema and 16: F__get + "" + {"type":"object","properties":{}} + 16 =
	// 6+0+33+16 = 55, twice; the message "hi" + 16 = 18. (110+18+3)/4 = 32 tokens, and one
	// value (the flowing value) at 10: 42.
	if ac.PromptTokens != 42 {
		t.Errorf("prompt %d tokens, want 42", ac.PromptTokens)
	}
	// Requests: max_steps 2 + 1 + @correct(1) = 4. A reply is the model's output limit, 100
	// tokens; a tool result 40 chars, 10 tokens. Each request sends what the ones before it
	// added: after each of the two tool steps a reply and a result (110), after the
	// rejected answer a reply (100):
	//   42, 42+110 = 152, 42+220 = 262, 262+100 = 362: 818 tokens in; 4 x 100 = 400 out.
	// @retry(1) sends each request twice: 8 requests, 1636 in, 800 out,
	// 1636 x $1/M + 800 x $2/M = $0.003236.
	if ac.Requests != 4 || ac.ReplyTokens != 100 || ac.ReplyFrom != "maxOutput" {
		t.Errorf("requests %d, reply %d (%s)", ac.Requests, ac.ReplyTokens, ac.ReplyFrom)
	}
	wantCost(t, "call", ac.Cost, 8, 1636, 800, 0.003236)
	wantCost(t, "total", p.Total, 8, 1636, 800, 0.003236)

	got := map[string]string{}
	for _, o := range ac.Offered {
		s := o.Effect + " " + o.Verdict
		if o.Rule != nil {
			s += " " + o.Rule.Text
		}
		for _, r := range o.ArgRules {
			s += " args:" + r.Text
		}
		got[o.Target] = s
	}
	want := map[string]string{
		"F.get": "read allowed",
		"F.put": `write approval ApproveEffects(write) args:DenyArgs("F.put", "path", "^/")`,
		"F.zap": `external refused DenyTools("F.zap")`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("offered:\n got %v\nwant %v", got, want)
	}
}

// TestLoopsEachBranch: loops add passes, |* each multiplies by items, a branch is counted at
// its most expensive arm, a |? after an each runs per item.
func TestLoopsEachBranch(t *testing.T) {
	src := `
agent S [openai/small]
pipeline P(xs: List) -> Result:
  xs
    |* each S.one("a")
    |? S.two("b")
    |> S.three("c") as r
    |> S.four("d")
    |<> loop(S, "true", max: 2)
    |<> loop(S, "true", max: 3)
    |> branch {
         "true": S.five("e") |> S.six("f") |<> loop(S, "true", max: 1),
         else: S.seven("g")
       }
`
	p := planOf(t, src, "P", plan.Config{Items: 3, ValueTokens: 10})
	// Every call: one request; the prompt is the one-letter text + 16 = 17 chars, (17+3)/4 =
	// 5 tokens, and the flowing value at 10: 15 in; the reply is small's output limit, 20.
	runs := []int64{}
	for _, s := range p.Stages {
		runs = append(runs, s.Runs)
	}
	// each: 3 items; |? after it: per item; three: once; four: the two loops go back to it
	// (the last stage before them calling S): 1 + 2 + 3 = 6 passes, not 3 x 4; the first
	// loop is under the second, 1 + 3; the second loop and the branch once.
	if fmt.Sprint(runs) != "[3 3 1 6 4 1 1]" {
		t.Errorf("runs %v", runs)
	}
	// A pass after the first of four carries the loop's feedback: its previous answer (20)
	// and the value at the loop (10): 45 tokens in. Five passes do.
	//   four: 1 x 15 + 5 x 45 = 240 in, 6 x 20 = 120 out.
	wantCost(t, "four", p.Stages[3].Cost, 6, 240, 120, 0.00036)
	br := p.Stages[6]
	// Arm "true": five once, six twice (its loop), the second time with feedback:
	// 15 + 15 + 45 = 75 in, 60 out. else: 15 in, 20 out.
	if len(br.Arms) != 2 || !br.Arms[0].Worst || br.Arms[1].Worst {
		t.Fatalf("arms %+v", br.Arms)
	}
	wantCost(t, "arm", br.Arms[0].Cost, 3, 75, 60, 0.000135)
	wantCost(t, "else", br.Arms[1].Cost, 1, 15, 20, 0.000035)
	wantCost(t, "branch", br.Cost, 3, 75, 60, 0.000135)
	// Total: each 3 + fallback 3 + three 1 + four 6 + branch 3 = 16 requests;
	// in 45 + 45 + 15 + 240 + 75 = 420; out 60 + 60 + 20 + 120 + 60 = 320; $0.00074.
	wantCost(t, "total", p.Total, 16, 420, 320, 0.00074)

	per := planOf(t, src, "P", plan.Config{ValueTokens: 10})
	if !per.PerItem || per.Items != 1 || per.Stages[0].Runs != 1 {
		t.Errorf("without items: per item %v, items %d, runs %d", per.PerItem, per.Items, per.Stages[0].Runs)
	}
}

func TestCalledPipelinesAndUnknowns(t *testing.T) {
	src := `
agent S [openai/small]
agent U [openai/unlisted, max_tokens: 20]
agent W [openai/wide]
agent L [ollama/llama3]
pipeline Inner(x: String) -> Result:
  x |> S.one("a")
pipeline Outer(x: String) -> Result:
  x |> Inner() @retry(2) |> Inner()
pipeline Again(x: String) -> Result:
  x |> S.one("a") |> Again()
pipeline Unpriced(x: String) -> Result:
  x |> U.go("a") |> S.one("a")
pipeline Uncapped(x: String) -> Result:
  x |> W.go("a")
pipeline Local(x: String) -> Result:
  x |> L.go("a")
`
	// Inner is one request, 15 in, 20 out ($0.000035); @retry(2) runs the whole call up to
	// three times: 4 in all.
	outer := planOf(t, src, "Outer", plan.Config{ValueTokens: 10})
	wantCost(t, "outer", outer.Total, 4, 60, 80, 0.00014)

	again := planOf(t, src, "Again", plan.Config{ValueTokens: 10})
	if !again.Total.RequestsUnknown || !again.Total.USDUnknown || !strings.Contains(strings.Join(again.Total.Unknown, "\n"), "pipeline Again calls itself (Again -> Again)") {
		t.Errorf("recursion: %+v", again.Total)
	}

	// A model the table does not list is unknown, never free; the priced call is still
	// counted, and JSON says null.
	un := planOf(t, src, "Unpriced", plan.Config{ValueTokens: 10})
	if !un.Total.USDUnknown || un.Total.TokensUnknown || plan.RoundUSD(un.Total.USD) != 0.000035 {
		t.Errorf("unpriced: %+v", un.Total)
	}
	b, _ := json.Marshal(un.Total)
	if !strings.Contains(string(b), `"usd":null,"knownUsd":0.000035,"unknown":["no price for openai/unlisted in the price table"]`) {
		t.Errorf("json %s", b)
	}
	// A priced model without an output limit and no max_tokens: its tokens are unknown.
	wide := planOf(t, src, "Uncapped", plan.Config{ValueTokens: 10})
	if !wide.Total.TokensUnknown || !wide.Total.USDUnknown {
		t.Errorf("uncapped: %+v", wide.Total)
	}
	// A local model costs nothing even when its replies are not capped.
	local := planOf(t, src, "Local", plan.Config{ValueTokens: 10})
	if !local.Total.TokensUnknown || local.Total.USDUnknown || local.Total.USD != 0 {
		t.Errorf("local: %+v", local.Total)
	}
}

func TestReplyCapAndMaxSpend(t *testing.T) {
	src := `
policy Budget : MaxSpend(0.0001)
policy Short : MaxTokens(30)
agent A [openai/wide, max_tokens: 50]
  requires Budget
agent B [openai/wide, max_tokens: 50]
  requires Short
agent C [anthropic/claude-sonnet-4-5]
agent D [openai/m]
  requires Budget
pipeline P(x: String) -> Result:
  x |> A.a("a") |> B.b("b") |> C.c("c") |> D.d("d", max_tokens: 500)
`
	p := planOf(t, src, "P", plan.Config{ValueTokens: 10, Prices: model.Prices{
		"openai/wide": {Input: 1, Output: 1}, "openai/m": {Input: 1, Output: 2, MaxOutput: 100},
		"anthropic/claude-sonnet-4-5": {Input: 3, Output: 15, MaxOutput: 64000}}})
	caps := []string{}
	for _, s := range p.Stages {
		a := s.Agents[0]
		caps = append(caps, fmt.Sprintf("%d %s", a.ReplyTokens, a.ReplyFrom))
	}
	want := "[50 max_tokens 30 MaxTokens 4096 anthropic default 100 maxOutput]"
	if fmt.Sprint(caps) != want {
		t.Errorf("caps %v, want %s", caps, want)
	}
	// A: 15 in, 50 out: $0.000065; B: 15, 30: $0.000045; C: 15 x 3 + 4096 x 15 = $0.061485;
	// D: 15 + 200 = $0.000215. The smallest MaxSpend is Budget's $0.0001; B and C have none.
	s := p.MaxSpend
	if s == nil || s.USD != 0.0001 || s.Policy != "Budget" || !s.Over || fmt.Sprint(s.Unlimited) != "[B C]" {
		t.Errorf("maxSpend %+v", s)
	}
	wantCost(t, "total", p.Total, 4, 60, 4276, 0.06181)
}

// TestUndescribedAndNoneOffered: a tool whose methods only its server knows shows as Tool.*
// with the rules that may apply; policies that leave nothing make the call fail.
func TestUndescribedAndNoneOffered(t *testing.T) {
	src := `
policy OnlyGit : AllowTools("G.list_prs", "F.get", "O.ping") & ApproveTools("G.merge", "O.ping")
policy Nothing : DenyTools("F")
tool F : Fake()
tool G : Remote()
tool O : One()
agent A [openai/m]
  equips F, G
  requires OnlyGit
agent N [openai/m]
  equips F
  requires Nothing
pipeline P(x: String) -> Result:
  x |> A.a("a", tools: auto) |> N.n("n", tools: [F]) |> A.b("b", tool: O, tools: none)
`
	p := planOf(t, src, "P", plan.Config{ValueTokens: 10})
	var got []string
	for _, o := range p.Stages[0].Agents[0].Offered {
		s := o.Target + " " + o.Verdict
		for _, r := range o.Rules {
			s += " " + r.Text
		}
		got = append(got, s)
	}
	want := `[F.get allowed F.put refused F.zap refused G.* depends AllowTools("G.list_prs", "F.get", "O.ping") ApproveTools("G.merge", "O.ping")]`
	if fmt.Sprint(got) != want {
		t.Errorf("offered %v\nwant %s", got, want)
	}
	if n := p.Stages[1].Agents[0]; !strings.Contains(n.NoneOffered, "allow none of its 3 tool methods") {
		t.Errorf("none offered: %q", n.NoneOffered)
	}
	// tool: O is a call the pipeline makes for A: its only method, which OnlyGit puts up for
	// approval.
	tc := p.Stages[2].Tools
	if len(tc) != 1 || tc[0].Target != "O.ping" || tc[0].Effect != "read" || tc[0].For != "A.b" || tc[0].Verdict != "approval" || p.Stages[2].Agents[0].Tools {
		t.Errorf("tool: F %+v", tc)
	}
}

// counting is a model that always asks for a tool while tools are offered, fails the first
// attempt of every request with a retryable error, and records the reply cap of each
// request.
type counting struct {
	mu       sync.Mutex
	attempts int
	caps     []int
	seen     map[string]bool
}

func (c *counting) Complete(_ context.Context, req model.Request) (model.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.attempts++
	// Requests are told apart by the conversation they send (|* each items run at once).
	key := fmt.Sprint(len(req.Messages), req.Messages[len(req.Messages)-1].Text, req.Messages[0].Text)
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if !c.seen[key] {
		c.seen[key] = true
		return model.Response{}, &model.Error{Code: "HTTP_ERROR", Message: "busy", Status: 503, Retryable: true}
	}
	c.caps = append(c.caps, req.MaxTokens)
	if len(req.Tools) > 0 && req.ToolChoice != model.ToolNone {
		call := model.ToolCall{ID: fmt.Sprint("c", c.attempts), Name: "F__get", Args: json.RawMessage(`{}`)}
		return model.Response{ToolCalls: []model.ToolCall{call}, Message: model.Message{Role: model.Assistant, ToolCalls: []model.ToolCall{call}}}, nil
	}
	return model.Response{Text: "nope", Message: model.Message{Role: model.Assistant, Text: "nope"}}, nil
}

// TestAgreesWithRuntime runs pipelines for real (mocked tools, a model that takes every step
// it may and whose answers a policy always rejects) and checks that the runtime makes
// exactly as many model requests as the plan's worst case, with the reply caps it says.
func TestAgreesWithRuntime(t *testing.T) {
	src := `
policy Never : MatchRegex("^never$") & MaxSpend(100)
policy Short : MaxTokens(30)
tool F : Fake()
agent A [openai/m, max_steps: 3]
  equips F
  requires Never
agent S [openai/m]
  requires Short
pipeline Tools(x: String) -> Result:
  x |> A.run("go", tools: [F]) @correct(2) @retry(1)
pipeline Flow(xs: List) -> Result:
  xs
    |* each S.one("a") @retry(1)
    |> S.two("b") @retry(1)
    |<> loop(S, "true", max: 2)
    |> branch { "true": S.three("c") @retry(1) |> S.four("d") @retry(1), else: S.five("e") }
`
	for _, tt := range []struct {
		pipeline string
		inputs   map[string]any
		items    int
		wantCap  int
	}{
		// max_steps 3 + 1 + @correct(2) = 6 requests, each sent twice: 12. MaxSpend caps
		// each reply at the model's output limit, 100.
		{"Tools", map[string]any{"x": "go"}, 0, 100},
		// each: 3 items; two: 3 passes; the true arm: 2; each request twice: 16. MaxTokens(30).
		{"Flow", map[string]any{"xs": []any{"1", "2", "3"}}, 3, 30},
	} {
		m := &counting{}
		rt, err := runtime.New(program(t, src), runtime.Config{Tools: registry(), Prices: prices, Mocks: runtime.NewMocks(),
			Models: func(string) (model.Provider, string, error) { return m, "m", nil },
			Sleep:  func(context.Context, time.Duration) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		rt.Mock("F.get", "ok")
		res, err := rt.Run(context.Background(), tt.pipeline, tt.inputs)
		if err != nil {
			t.Fatal(err)
		}
		p := planOf(t, src, tt.pipeline, plan.Config{Items: tt.items})
		if int64(m.attempts) != p.Total.Requests {
			t.Errorf("%s: the runtime made %d requests (%s %+v), the plan says at most %d", tt.pipeline, m.attempts, res.Status, res.Error, p.Total.Requests)
		}
		for _, c := range m.caps {
			if c != tt.wantCap {
				t.Errorf("%s: a request capped at %d, the plan counts %d", tt.pipeline, c, tt.wantCap)
				break
			}
		}
	}
}

// TestFanOutStartAndFallback: a start value that calls an agent, every call of a fan-out,
// and a |? handler (counted as if the stage before failed) all count.
func TestFanOutStartAndFallback(t *testing.T) {
	p := planOf(t, `
tool F : Fake()
agent S [openai/small]
pipeline P(x: String) -> Result:
  S.first("a") |* { S.one("b"), S.two("c"), F.get() } |? S.three("d") @retry(1)
`, "P", plan.Config{ValueTokens: 10})
	if len(p.Stages) != 3 || p.Stages[0].Op != "start" || len(p.Stages[1].Agents) != 2 || len(p.Stages[1].Tools) != 1 {
		t.Fatalf("stages %+v", p.Stages)
	}
	if tc := p.Stages[1].Tools[0]; tc.Target != "F.get" || tc.Effect != "read" || tc.For != "" {
		t.Errorf("fan-out tool call %+v", tc)
	}
	// Each call: 15 in, 20 out ($0.000035), but the start value's, which no value flows
	// into: 5 in. Start 1, fan-out 2, the handler 1 sent twice: 5 requests,
	// 5 + 30 + 30 = 65 in, 100 out, $0.000165.
	wantCost(t, "total", p.Total, 5, 65, 100, 0.000165)
}

// TestCallsNotCounted: a stage the planner does not know (a construct added to the language
// and not yet to halo plan) makes the worst case unknown; it is never left out.
func TestCallsNotCounted(t *testing.T) {
	prog := program(t, `
agent S [openai/small]
pipeline P(x: String) -> Result:
  x |* { S.one("a"), S.two("b") }
`)
	st := prog.Pipeline("P").Stages[0]
	st.Op = "|new"
	p, err := plan.Pipeline(prog, "P", plan.Config{Tools: registry(), Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Total.USDUnknown || !p.Total.RequestsUnknown || !strings.Contains(strings.Join(p.Total.Unknown, "\n"), "halo plan cannot count the call S.one at p.halo:4:10") {
		t.Errorf("total %+v", p.Total)
	}
}

// TestHugeNumbers: settings written to be absurd are counted at once, and a count too large
// to hold is unknown, never wrapped around.
func TestHugeNumbers(t *testing.T) {
	src := `
tool F : Fake()
agent A [openai/m, max_steps: 100000000000]
  equips F
pipeline P(x: String) -> Result:
  x |> A.run("go", tools: [F]) @retry(1000000)
    |<> loop(A, "true", max: 1000000000000)
`
	start := time.Now()
	p := planOf(t, src, "P", plan.Config{ValueTokens: 10})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("planning took %s", d)
	}
	if !p.Total.TokensUnknown || !p.Total.USDUnknown || !strings.Contains(strings.Join(p.Total.Unknown, "\n"), "too large to hold") {
		t.Errorf("total %+v", p.Total)
	}
	// A large but countable conversation is exact: max_steps 1000000 + 1 requests of a
	// 100-token reply, from a prompt of 42 (as in TestToolLoopArithmetic, with one tool
	// whose definitions are F.get, F.put and F.zap: 55 x 3 + 18 = 183, 186/4 = 46, + 10 = 56)
	// and results of 4000 tokens (tool_result_chars 16000): S = 1000001, a = 1000000,
	// in = S x 56 + 4100 x (a x S - a(a+1)/2) + 100 x 0 = 56000056 + 4100 x 500000500000.
	p = planOf(t, `
tool F : Fake()
agent A [openai/m, max_steps: 1000000]
  equips F
pipeline P(x: String) -> Result:
  x |> A.run("go", tools: [F])
`, "P", plan.Config{ValueTokens: 10})
	ac := p.Stages[0].Agents[0]
	if ac.PromptTokens != 56 {
		t.Fatalf("prompt %d", ac.PromptTokens)
	}
	want := int64(56000056) + 4100*int64(500000500000)
	if ac.Cost.InputTokens != want || ac.Cost.OutputTokens != 100000100 || ac.Cost.TokensUnknown {
		t.Errorf("in %d out %d, want %d, 100000100", ac.Cost.InputTokens, ac.Cost.OutputTokens, want)
	}
}

// Stores: retrieval adds top_k passages to each agent call's prompt, a VectorStore's query
// embedding is priced into the call, tools: auto offers no store, and indexing is priced from
// the files' bytes.
func TestPlanStores(t *testing.T) {
	src := `
tool Docs : File("docs/*.md", top_k: 2, chunk_chars: 400)
tool Notes : VectorStore(embed: "openai/emb", from: "notes/*.md", top_k: 1, chunk_chars: 800)
tool F : Fake()

agent A [openai/m, max_tokens: 10, tools: auto]
  equips Docs, Notes, F

pipeline P(x: String):
  x |> A.go()
`
	reg := registry()
	pr := model.Prices{"openai/m": prices["openai/m"], "openai/emb": {Input: 1000}}
	p := planOf(t, src, "P", plan.Config{Tools: reg, Prices: pr, ValueTokens: 10,
		StoreBytes: func(td *lang.ToolDecl) (int, int64, bool) { return 3, 4000, true }})
	ac := p.Stages[0].Agents[0]
	for _, o := range ac.Offered {
		if strings.HasPrefix(o.Target, "Docs.") || strings.HasPrefix(o.Target, "Notes.") {
			t.Errorf("tools: auto offered %s", o.Target)
		}
	}
	if len(ac.Retrievals) != 2 {
		t.Fatalf("retrievals %+v", ac.Retrievals)
	}
	docs, notes := ac.Retrievals[0], ac.Retrievals[1]
	// (400 + 80) / 4 = 120 tokens a passage, 2 of them; (800 + 80) / 4 = 220, 1 of them.
	if docs.PromptTokens != 240 || notes.PromptTokens != 220 || docs.Embed != "" {
		t.Errorf("docs %+v notes %+v", docs, notes)
	}
	// The query is the prompt (at most 2048 tokens): the whole prompt here.
	if notes.QueryTokens != ac.PromptTokens || notes.QueryUSD != float64(ac.PromptTokens)*1000/1e6 {
		t.Errorf("query %+v with prompt %d", notes, ac.PromptTokens)
	}
	if got, want := ac.Cost.USD, ac.Conversation.USD+notes.QueryUSD; fmt.Sprintf("%.9f", got) != fmt.Sprintf("%.9f", want) {
		t.Errorf("cost %v, want %v", got, want)
	}
	if len(p.Stores) != 2 || p.Stores[1].Tool != "Notes" || p.Stores[1].IndexTokens != 1000 || p.Stores[1].IndexUSD != 1 || p.Stores[0].IndexUSD != 0 {
		t.Errorf("stores %+v %+v", p.Stores[0], p.Stores[1])
	}
}
