// Package plan owns halo plan's arithmetic: the worst case of a pipeline run, computed from
// the program alone, without running anything or starting any server or plugin. For each
// stage it lists the agent calls, their models and prices, the most model requests, tokens
// and dollars the calls can take, the tools each call is offered with their effects and what
// the agent's tool rules do with them (through host/policy's Offered and Explain, the rules
// the runtime decides calls by), and the tool calls the pipeline makes itself; it adds the
// stages up and sets the run's total against its MaxSpend.
//
// The worst case follows what host/runtime and host/agent do (a test runs both side by side):
// an agent call with tools is at most max_steps requests that ask for tools and one that
// answers; @correct(n) adds n more answers to the same conversation; @retry(n) sends each
// request up to n+1 times; a |<> loop runs the stages from the agent's stage to the loop up
// to max more times; a |* each runs its call once per item (Config.Items); a branch costs
// what its most expensive arm does; a fan-out, a |? fallback and a called pipeline cost all
// they can. Each request resends the conversation, which grows after every request by a full
// reply (the reply cap: max_tokens, MaxTokens(n), or the model's output limit) and, after a
// request that asked for tools, by one tool result cut at tool_result_chars. A call the
// planner does not reach (lang.Calls lists every call a pipeline makes) makes the worst case
// unknown rather than smaller.
//
// cmd/halo's plan command prints what Pipeline returns.
package plan

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"

	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
)

// DefaultValueTokens is how many tokens each value a prompt reads at run time is counted
// at, unless Config.ValueTokens says otherwise.
const DefaultValueTokens = 1000

// charsPerToken is how many characters a token is counted at, as model.EstimateInputTokens
// (the runtime's MaxSpend estimate) counts them.
const charsPerToken = 4

// Config is what a plan is computed with.
type Config struct {
	// Tools describes declarations' methods through their provider types, without opening
	// anything; tools whose methods only their server or plugin knows (MCP, module
	// packages) are shown as Tool.*. Nil means no type describes any.
	Tools *tool.Registry
	// Prices is the price table; nil means the shipped one.
	Prices model.Prices
	// Items is how many items each |* each is counted for; 0 means 1, and the plan is then
	// per item.
	Items int
	// ValueTokens is how many tokens each value a prompt reads at run time is counted at
	// (the flowing value, a parameter, an earlier stage's result, a tool: T's result); 0
	// means DefaultValueTokens.
	ValueTokens int
	// StoreBytes says how many bytes of files a store declaration's patterns match now (for
	// the cost of indexing it); nil, or false, when that is not known.
	StoreBytes func(td *lang.ToolDecl) (files int, bytes int64, ok bool)
}

// A Plan is the worst case of one pipeline.
type Plan struct {
	Pipeline string `json:"pipeline"`
	At       string `json:"at"`
	// Items is how many items each |* each was counted for; PerItem says none was given,
	// so each one was counted for one item.
	Items   int  `json:"items"`
	PerItem bool `json:"perItem"`
	// ValueTokens is what each value a prompt reads at run time was counted at.
	ValueTokens int      `json:"valueTokens"`
	Stages      []*Stage `json:"stages"`
	// Total is the whole run's worst case.
	Total Cost `json:"total"`
	// Models lists every model the run may call, with its price.
	Models []ModelPrice `json:"models"`
	// MaxSpend is the run's spending limit, when its agents have one.
	MaxSpend *Spend `json:"maxSpend,omitempty"`
	// Stores are the File and VectorStore stores the run may search or fill, with what
	// indexing their files costs (once, and again for the files that change).
	Stores []*StorePlan `json:"stores,omitempty"`
}

// A StorePlan is one store a run uses.
type StorePlan struct {
	Tool string `json:"tool"`
	Kind string `json:"kind"`
	// Embed is a VectorStore's embedding model, with its price (per million tokens).
	Embed  string  `json:"embed,omitempty"`
	Priced bool    `json:"priced"`
	Price  float64 `json:"price,omitempty"`
	// Files and Bytes are what its patterns match now (Known false: not counted);
	// IndexTokens and IndexUSD what embedding them all costs, at four bytes a token.
	Known       bool    `json:"known"`
	Files       int     `json:"files"`
	Bytes       int64   `json:"bytes"`
	IndexTokens int64   `json:"indexTokens,omitempty"`
	IndexUSD    float64 `json:"indexUsd,omitempty"`
}

// A Retrieval is what one store adds to an agent call: up to TopK passages of up to
// ChunkChars each in its prompt (PromptTokens), and for a VectorStore the embedding of its
// query (QueryTokens: the prompt, cut at the query limit), priced in the call's cost.
type Retrieval struct {
	Store        string  `json:"store"`
	Kind         string  `json:"kind"`
	TopK         int     `json:"topK"`
	PromptTokens int64   `json:"promptTokens"`
	Embed        string  `json:"embed,omitempty"`
	QueryTokens  int64   `json:"queryTokens,omitempty"`
	QueryUSD     float64 `json:"queryUsd,omitempty"`
}

// A Stage is one stage and what it may cost over the whole run.
type Stage struct {
	At string `json:"at"`
	// Op is the operator as written ("|>", "|*", "|* each", "|> branch", "|<>", "|?", "|!",
	// "~>"), or "start" for a pipeline's start value.
	Op string `json:"op"`
	// Text is the stage's call, shortened: "Fixer.fix", "loop(Fixer, max: 3)".
	Text string `json:"text"`
	// Runs is how many times the stage runs at most (loops; items for a |* each's call).
	Runs int64 `json:"runs"`
	// Agents are the stage's agent calls.
	Agents []*AgentCall `json:"agentCalls,omitempty"`
	// Tools are the tool calls the pipeline itself makes here: the stage's, and agent calls'
	// tool: T.
	Tools []*ToolCall `json:"toolCalls,omitempty"`
	// Pipelines are the pipelines the stage calls.
	Pipelines []*Called `json:"pipelines,omitempty"`
	// Arms are a branch's arms; the Worst one is what the stage is counted at.
	Arms []*Arm `json:"arms,omitempty"`
	// Loop is the stage a |<> loop goes back to, and how many times at most.
	Loop *Loop `json:"loop,omitempty"`
	// Cost is the stage's worst case over all its runs.
	Cost Cost `json:"cost"`
}

// A Loop is where a |<> loop goes back to.
type Loop struct {
	Agent string `json:"agent"`
	To    string `json:"to"`
	Max   int    `json:"max"`
}

// An Arm is one arm of a branch.
type Arm struct {
	At     string   `json:"at"`
	Label  string   `json:"label"`
	Stages []*Stage `json:"stages"`
	Cost   Cost     `json:"cost"`
	// Worst marks the arm the branch is counted at.
	Worst bool `json:"worst,omitempty"`
}

// A Called is a pipeline a stage calls, planned where it is called.
type Called struct {
	Pipeline string   `json:"pipeline"`
	At       string   `json:"at"`
	Stages   []*Stage `json:"stages,omitempty"`
	Cost     Cost     `json:"cost"`
	// Recursive says the pipeline calls itself (through Via): its worst case has no bound.
	Recursive bool   `json:"recursive,omitempty"`
	Via       string `json:"via,omitempty"`
}

// A ModelPrice is a model's entry in the price table.
type ModelPrice struct {
	Model string `json:"model"`
	// Priced is false when the table has no entry: the model's calls cost an unknown amount.
	Priced bool `json:"priced"`
	// Input and Output are dollars per million tokens; MaxOutput the model's own limit on a
	// reply's tokens (0: the table does not know it).
	Input     float64 `json:"input"`
	Output    float64 `json:"output"`
	MaxOutput int     `json:"maxOutput"`
}

// An AgentCall is one Agent.task call and its worst case.
type AgentCall struct {
	At     string `json:"at"`
	Target string `json:"target"`
	Agent  string `json:"agent"`
	Model  string `json:"model"`
	// Calls is how many conversations the call may have in a run; each is one call.
	Calls int64 `json:"calls"`
	// Tools says the call is offered tools; MaxSteps is then its max_steps, ResultChars its
	// tool_result_chars.
	Tools       bool `json:"tools"`
	MaxSteps    int  `json:"maxSteps,omitempty"`
	ResultChars int  `json:"resultChars,omitempty"`
	// Retry and Correct are the stage's @retry and @correct.
	Retry   int `json:"retry,omitempty"`
	Correct int `json:"correct,omitempty"`
	// Requests is the most requests one conversation sends (before @retry).
	Requests int64 `json:"requests"`
	// ReplyTokens is the reply cap each request is counted at; 0 when it is unknown.
	ReplyTokens int64 `json:"replyTokens"`
	// ReplyFrom says where the cap comes from: "max_tokens", "MaxTokens", "maxOutput" (the
	// price table's output limit), "anthropic default" or "" when unknown.
	ReplyFrom string `json:"replyFrom,omitempty"`
	// PromptTokens is the first request's input: the system prompt, the prompt, the tool
	// definitions, and ValueTokens for each value it reads at run time.
	PromptTokens int64 `json:"promptTokens"`
	// Offered are the tools the call is offered and what the agent's rules say of each.
	Offered []*Offer `json:"offered,omitempty"`
	// Retrievals are the stores the agent equips, each searched for the prompt.
	Retrievals []*Retrieval `json:"retrievals,omitempty"`
	// NoneOffered says the agent's policies leave none of its tools' methods: the call
	// fails with TOOL_CONFIG.
	NoneOffered string `json:"noneOffered,omitempty"`
	// Conversation is the worst case of one conversation (@retry included); Cost of all.
	Conversation Cost `json:"conversation"`
	Cost         Cost `json:"cost"`
}

// An Offer is one method an agent call may be offered, or Tool.* for a tool whose methods
// are known only when it starts.
type Offer struct {
	Target string `json:"target"`
	// Effect is the method's effect; "" when not described (Described false).
	Effect    string `json:"effect,omitempty"`
	Described bool   `json:"described"`
	// Verdict is "allowed", "approval" (calls wait for a person), "refused" (hidden: never
	// offered, and refused if called) or "depends" (a tool whose methods are unknown).
	Verdict string `json:"verdict"`
	// Rule is the rule behind a refused or approval verdict.
	Rule *policy.RuleRef `json:"rule,omitempty"`
	// Reason says why, as the runtime would.
	Reason string `json:"reason,omitempty"`
	// ArgRules are the DenyArgs rules that may refuse a call for its arguments.
	ArgRules []policy.RuleRef `json:"argRules,omitempty"`
	// Rules are the rules that may apply to an undescribed tool's methods.
	Rules []policy.RuleRef `json:"rules,omitempty"`
}

// A ToolCall is a tool call the pipeline makes itself: tool rules do not apply to it, except
// to an agent call's tool: T, which the agent's policies check.
type ToolCall struct {
	At     string `json:"at"`
	Target string `json:"target"`
	// Effect is the method's effect; "" when the provider does not describe it without
	// starting.
	Effect string `json:"effect,omitempty"`
	// Runs is how many times it runs at most.
	Runs int64 `json:"runs"`
	// For is the agent call whose tool: T it is.
	For string `json:"for,omitempty"`
	// Verdict, Rule and Reason are what the agent's policies say of a tool: T call.
	Verdict string          `json:"verdict,omitempty"`
	Rule    *policy.RuleRef `json:"rule,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// Spend is the run's MaxSpend and the worst case against it.
type Spend struct {
	// USD is the smallest MaxSpend of the run's agents, set by Policy.
	USD    float64 `json:"usd"`
	Policy string  `json:"policy"`
	// Over says the worst case costs more: the run stops when it has spent USD. It is false
	// when the worst case is unknown (see Total.Unknown).
	Over bool `json:"over"`
	// Unlimited lists the run's agents that require no MaxSpend: their calls go on past it.
	Unlimited []string `json:"unlimited,omitempty"`
}

// Pipeline plans the pipeline called name. prog must have passed host/check.
func Pipeline(prog *lang.Program, name string, cfg Config) (*Plan, error) {
	pd := prog.Pipeline(name)
	if pd == nil {
		var names []string
		for _, d := range prog.Decls() {
			if p, ok := d.(*lang.PipelineDecl); ok {
				names = append(names, p.Name.Name)
			}
		}
		return nil, fmt.Errorf("no pipeline %s (have: %s)", name, strings.Join(names, ", "))
	}
	pols := map[string]*policy.Policy{}
	for _, d := range prog.Decls() {
		if pd, ok := d.(*lang.PolicyDecl); ok {
			p, err := policy.Compile(pd.Name.Name, check.RuleSpecs(pd))
			if err != nil {
				return nil, err
			}
			pols[pd.Name.Name] = p
		}
	}
	if cfg.Prices == nil {
		cfg.Prices = model.DefaultPrices()
	}
	if cfg.Tools == nil {
		cfg.Tools = tool.NewRegistry()
	}
	items, perItem := cfg.Items, cfg.Items <= 0
	if perItem {
		items = 1
	}
	if cfg.ValueTokens <= 0 {
		cfg.ValueTokens = DefaultValueTokens
	}
	pl := &planner{prog: prog, cfg: cfg, policies: pols, items: int64(items), models: map[string]ModelPrice{}, agents: map[string]bool{}, seen: map[*lang.Call]bool{}}
	out := &Plan{Pipeline: pd.Name.Name, At: pd.Pos.String(), Items: items, PerItem: perItem, ValueTokens: cfg.ValueTokens}
	out.Stages, out.Total = pl.pipeline(pd, 1, []string{pd.Name.Name})
	for _, m := range pl.models {
		out.Models = append(out.Models, m)
	}
	sort.Slice(out.Models, func(i, j int) bool { return out.Models[i].Model < out.Models[j].Model })
	out.MaxSpend = pl.spend(out.Total)
	out.Stores = pl.storePlans(pd)
	return out, nil
}

type planner struct {
	prog     *lang.Program
	cfg      Config
	policies map[string]*policy.Policy
	items    int64
	models   map[string]ModelPrice
	// agents are the agents the run may call; limits their MaxSpend, where they have one.
	agents map[string]bool
	// seen are the calls planned, so that a call the planner does not reach (a construct
	// added to the language and not to the plan) makes the worst case unknown instead of
	// leaving it out.
	seen map[*lang.Call]bool
}

// pipeline plans pd's start value and stages, run times times.
func (pl *planner) pipeline(pd *lang.PipelineDecl, times int64, stack []string) ([]*Stage, Cost) {
	var stages []*Stage
	var total Cost
	if c, ok := pd.Start.(*lang.Call); ok {
		st := &Stage{At: c.Pos().String(), Op: "start", Text: callText(c), Runs: times}
		pl.call(st, c, nil, times, 0, stack)
		stages = append(stages, st)
		total = total.Add(st.Cost)
	}
	more, cost := pl.stages(pd.Stages, times, stack)
	total = total.Add(cost)
	for _, c := range lang.Calls(pd.Stages) {
		if !pl.seen[c] {
			total = total.Add(Cost{RequestsUnknown: true, TokensUnknown: true, USDUnknown: true,
				Unknown: []string{fmt.Sprintf("halo plan cannot count the call %s at %s", c.Target(), c.Pos())}})
		}
	}
	return append(stages, more...), total
}

// stages plans a list of stages (a pipeline's, or a branch arm's) that runs times times.
func (pl *planner) stages(list []*lang.Stage, times int64, stack []string) ([]*Stage, Cost) {
	// A loop at i that goes back to stage j runs stages j..i-1 up to max more times. Its
	// count is kept for the whole run (a loop that the run passes again does not start
	// over), so the stages under several loops run once plus each loop's max: the passes
	// add up, they do not multiply.
	extra := make([]int64, len(list))
	feedback := make([]int64, len(list))
	loops := make([]*Loop, len(list))
	for i, st := range list {
		if st.Op != lang.OpLoop {
			continue
		}
		ag, max := loopArgs(st)
		to := -1
		for j := i - 1; j >= 0; j-- {
			if callsAgent(list[j], ag) {
				to = j
				break
			}
		}
		loops[i] = &Loop{Agent: ag, Max: max}
		if to < 0 {
			continue
		}
		loops[i].To = list[to].Pos.String()
		for k := to; k < i; k++ {
			extra[k] = satAdd(extra[k], int64(max))
		}
		feedback[to] = satAdd(feedback[to], int64(max))
	}
	var out []*Stage
	var total Cost
	for i, st := range list {
		runs := satMul(times, satAdd(1, extra[i]))
		s := &Stage{At: st.Pos.String(), Op: string(st.Op), Runs: runs}
		switch st.Op {
		case lang.OpLoop:
			s.Text = callText(st.Call)
			s.Loop = loops[i]
			pl.seen[st.Call] = true
		case lang.OpYield, lang.OpListen:
			s.Text = callText(st.Call)
			pl.seen[st.Call] = true
		case lang.OpFanOut:
			var parts []string
			for _, c := range st.Calls {
				parts = append(parts, callText(c))
				pl.call(s, c, st, runs, 0, stack)
			}
			s.Text = "{ " + strings.Join(parts, ", ") + " }"
		case lang.OpEach:
			s.Text = callText(st.Call)
			s.Runs = satMul(runs, pl.items)
			pl.call(s, st.Call, st, s.Runs, 0, stack)
		case lang.OpBranch:
			var worst *Arm
			for _, arm := range st.Arms {
				a := &Arm{At: arm.Pos.String(), Label: arm.Label()}
				a.Stages, a.Cost = pl.stages(arm.Stages, runs, stack)
				s.Arms = append(s.Arms, a)
				if worst == nil || worst.Cost.less(a.Cost) {
					worst = a
				}
			}
			if worst != nil {
				worst.Worst = true
				s.Cost = worst.Cost
			}
		case lang.OpFallback:
			s.Text = callText(st.Call)
			if i > 0 && list[i-1].Op == lang.OpEach {
				// After a |* each, the handler runs for each item that failed.
				s.Runs = satMul(runs, pl.items)
			}
			pl.call(s, st.Call, st, s.Runs, feedback[i], stack)
		default:
			if st.Call != nil {
				s.Text = callText(st.Call)
				pl.call(s, st.Call, st, runs, feedback[i], stack)
			}
		}
		out = append(out, s)
		total = total.Add(s.Cost)
	}
	return out, total
}

// call plans one call c of stage s (st is the stage as written, nil for a start value),
// made n times; fb of them may carry a loop's feedback.
func (pl *planner) call(s *Stage, c *lang.Call, st *lang.Stage, n, fb int64, stack []string) {
	pl.seen[c] = true
	retry, correct := directives(st)
	if c.Recv == nil {
		pl.callPipeline(s, c, satMul(n, int64(1+retry)), stack)
		return
	}
	recv := c.Recv.Name
	if a := pl.prog.Agent(recv); a != nil {
		ac := pl.agentCall(s, a, c, n, fb, retry, correct, st != nil)
		s.Agents = append(s.Agents, ac)
		s.Cost = s.Cost.Add(ac.Cost)
		return
	}
	if td := pl.prog.Tool(recv); td != nil {
		tc := &ToolCall{At: c.Pos().String(), Target: c.Target(), Runs: satMul(n, int64(1+retry))}
		if m, ok := pl.method(td, c.Method.Name); ok {
			tc.Effect = string(m.EffectOrDefault())
		}
		s.Tools = append(s.Tools, tc)
	}
	// System calls cost nothing.
}

func (pl *planner) callPipeline(s *Stage, c *lang.Call, n int64, stack []string) {
	pd := pl.prog.Pipeline(c.Method.Name)
	if pd == nil {
		return
	}
	called := &Called{Pipeline: pd.Name.Name, At: c.Pos().String()}
	for _, name := range stack {
		if name == pd.Name.Name {
			called.Recursive = true
			called.Via = strings.Join(append(append([]string{}, stack...), pd.Name.Name), " -> ")
			called.Cost = Cost{RequestsUnknown: true, TokensUnknown: true, USDUnknown: true,
				Unknown: []string{fmt.Sprintf("pipeline %s calls itself (%s): nothing bounds how often", pd.Name.Name, called.Via)}}
			s.Pipelines = append(s.Pipelines, called)
			s.Cost = s.Cost.Add(called.Cost)
			return
		}
	}
	called.Stages, called.Cost = pl.pipeline(pd, n, append(append([]string{}, stack...), pd.Name.Name))
	s.Pipelines = append(s.Pipelines, called)
	s.Cost = s.Cost.Add(called.Cost)
}

// method returns td's method called name as its provider type describes it.
func (pl *planner) method(td *lang.ToolDecl, name string) (tool.Method, bool) {
	ms, ok := pl.methods(td)
	if !ok {
		return tool.Method{}, false
	}
	if name == "" {
		var callable []tool.Method
		for _, m := range ms {
			if !m.PipelineOnly {
				callable = append(callable, m)
			}
		}
		if len(callable) == 1 {
			return callable[0], true
		}
		return tool.Method{}, false
	}
	return tool.FindMethod(ms, name)
}

// methods describes td without opening it: what its provider type declares this
// declaration offers (a read-only Workspace has no write).
func (pl *planner) methods(td *lang.ToolDecl) ([]tool.Method, bool) {
	args, named := td.StaticArgs()
	return pl.cfg.Tools.DeclaredMethods(tool.Declaration{Name: td.Name.Name, Provider: td.Provider.Name, Args: args, Named: named})
}

func (pl *planner) policySet(a *lang.AgentDecl) policy.Set {
	var s policy.Set
	for _, id := range a.Requires {
		if p := pl.policies[id.Name]; p != nil {
			s = append(s, p)
		}
	}
	return s
}

// agentCall plans Agent.task(...) made n times, fb of them with a loop's feedback; flowing
// says a value flows into it (every stage; not a pipeline's start value).
func (pl *planner) agentCall(s *Stage, a *lang.AgentDecl, c *lang.Call, n, fb int64, retry, correct int, flowing bool) *AgentCall {
	set := pl.policySet(a)
	st := a.SettingsOf(c)
	if st.Auto {
		// tools: auto offers no store, as the runtime does.
		var names []string
		for _, name := range st.Tools {
			if td := pl.prog.Tool(name); td == nil || !store.IsStore(td.Provider.Name) {
				names = append(names, name)
			}
		}
		st.Tools = names
	}
	pl.agents[a.Name.Name] = true
	ref := a.Model.String()
	ac := &AgentCall{At: c.Pos().String(), Target: c.Target(), Agent: a.Name.Name, Model: ref, Calls: n,
		Retry: retry, Correct: correct}

	// tool: T is a call the pipeline makes for the agent; the agent's policies check it.
	values := int64(0)
	if flowing {
		values = 1 // the flowing value
	}
	if arg := c.Named("tool"); arg != nil {
		if id, ok := arg.Value.(*lang.Ident); ok {
			if td := pl.prog.Tool(id.Name); td != nil {
				tc := &ToolCall{At: arg.Position().String(), Target: id.Name, Runs: satMul(n, int64(1+retry)), For: ac.Target}
				m, described := pl.method(td, "")
				effect := tool.External
				if described {
					tc.Target = id.Name + "." + m.Name
					effect = m.EffectOrDefault()
					tc.Effect = string(effect)
				}
				e := set.Explain(tc.Target, effect)
				tc.Verdict, tc.Rule, tc.Reason = verdict(e)
				if !described {
					tc.Verdict, tc.Rule, tc.Reason = "depends", nil, ""
				}
				s.Tools = append(s.Tools, tc)
				values++ // its result is in the prompt
			}
		}
	}

	// The tools offered, and what the rules say of each.
	var defs []model.ToolDef
	if len(st.Tools) > 0 {
		ac.Tools = true
		ac.MaxSteps, ac.ResultChars = st.MaxSteps, st.ResultChars
		if ac.MaxSteps <= 0 {
			ac.MaxSteps = agent.DefaultMaxSteps
		}
		if ac.ResultChars <= 0 {
			ac.ResultChars = agent.DefaultResultChars
		}
		// The described methods first, so Offered sees them all at once, as the runtime's
		// offer does; then each tool's entries in the order the tools are named.
		var methods []agent.Method
		var tms []policy.ToolMethod
		undescribed := 0
		for _, name := range st.Tools {
			if td := pl.prog.Tool(name); td != nil {
				ms, ok := pl.methods(td)
				if !ok {
					undescribed++
				}
				for _, m := range ms {
					if !m.PipelineOnly {
						methods = append(methods, agent.Method{Tool: name, Method: m})
						tms = append(tms, policy.ToolMethod{Target: name + "." + m.Name, Effect: m.EffectOrDefault()})
					}
				}
			}
		}
		kept, err := set.Offered(tms)
		if err != nil && undescribed == 0 {
			ac.NoneOffered = err.Error()
		}
		keep := map[string]bool{}
		for _, k := range kept {
			keep[k.Target] = true
		}
		var visible []agent.Method
		for i, m := range methods {
			if keep[tms[i].Target] {
				visible = append(visible, m)
			}
		}
		k := 0
		for _, name := range st.Tools {
			td := pl.prog.Tool(name)
			if td == nil {
				continue
			}
			if _, ok := pl.methods(td); !ok {
				e := set.ExplainTool(name)
				o := &Offer{Target: name + ".*", Verdict: "depends", Rules: e.Rules}
				if e.Hidden != nil {
					o.Verdict, o.Rule, o.Reason, o.Rules = "refused", ruleOf(e.Hidden), e.Hidden.Reason, nil
				}
				ac.Offered = append(ac.Offered, o)
				continue
			}
			for ; k < len(methods) && methods[k].Tool == name; k++ {
				tm := tms[k]
				e := set.Explain(tm.Target, tm.Effect)
				o := &Offer{Target: tm.Target, Effect: string(tm.Effect), Described: true, ArgRules: e.ArgRules}
				o.Verdict, o.Rule, o.Reason = verdict(e)
				ac.Offered = append(ac.Offered, o)
			}
		}
		for _, t := range agent.Offer(visible) {
			defs = append(defs, model.ToolDef{Name: t.Name, Description: t.Description, Params: t.Params})
		}
	}

	// The first request: the system prompt, the prompt as written, the tool definitions,
	// and each value it reads at run time.
	var parts []string
	for _, arg := range c.Args {
		if arg.Name != nil {
			switch arg.Name.Name {
			case "tools", "tool", "temp", "temperature", "max_tokens", "max_steps", "tool_result_chars":
				continue
			}
		}
		text, v := exprText(arg.Value)
		if arg.Name != nil {
			text = arg.Name.Name + ": " + text
		}
		parts = append(parts, text)
		values += v
	}
	system := ""
	if a.System != nil {
		system = a.System.Value
		values += int64(len(a.System.Templates()))
	}
	req := model.Request{System: system, Messages: []model.Message{{Role: model.User, Text: strings.Join(parts, "\n\n")}}, Tools: defs}
	vt := int64(pl.cfg.ValueTokens)
	ac.PromptTokens = satAdd(int64(model.EstimateInputTokens(req)), satMul(values, vt))
	queries := pl.retrievals(ac, a)

	// The reply cap, as the runtime and the model adapters set it.
	prov, id, _ := strings.Cut(ref, "/")
	price, priced := pl.cfg.Prices.Lookup(prov, id)
	pl.models[ref] = ModelPrice{Model: ref, Priced: priced, Input: price.Input, Output: price.Output, MaxOutput: price.MaxOutput}
	replyCap, from := st.MaxTokens, ""
	if replyCap > 0 {
		from = "max_tokens"
	}
	if lim, ok := set.TokenLimit(); ok && (replyCap == 0 || lim < replyCap) {
		replyCap, from = lim, "MaxTokens"
	}
	if _, limited := set.SpendLimit(); limited && priced && replyCap == 0 && price.MaxOutput > 0 {
		// Under MaxSpend every request is capped, at the model's output limit at most.
		replyCap, from = price.MaxOutput, "maxOutput"
	}
	if replyCap == 0 {
		if canon, _ := model.Canonical(prov); canon == model.Anthropic {
			replyCap, from = model.DefaultAnthropicMaxTokens, "anthropic default"
		}
	}
	if priced && price.MaxOutput > 0 && (replyCap == 0 || replyCap > price.MaxOutput) {
		replyCap, from = price.MaxOutput, "maxOutput"
	}
	ac.ReplyTokens, ac.ReplyFrom = int64(replyCap), from

	// One conversation: max_steps requests that ask for tools, then the answer, then one
	// more answer per @correct. Each request resends everything before it.
	steps := int64(0)
	if ac.Tools {
		steps = int64(ac.MaxSteps)
	}
	ac.Requests = satAdd(satAdd(steps, 1), int64(correct))
	resultTokens := int64(0)
	if ac.Tools {
		resultTokens = (int64(ac.ResultChars) + charsPerToken - 1) / charsPerToken
	}
	one := func(prompt int64) Cost {
		return conversation(prompt, ac.ReplyTokens, resultTokens, steps, ac.Requests, int64(1+retry), price, priced, ref, replyCap == 0)
	}
	ac.Conversation = one(ac.PromptTokens)
	// A loop's pass sends the agent its previous answer and the value at the loop.
	fb = min(fb, n)
	withFeedback := one(satAdd(satAdd(ac.PromptTokens, ac.ReplyTokens), vt))
	ac.Cost = ac.Conversation.Times(n - fb).Add(withFeedback.Times(fb)).Add(queries.Times(n))
	return ac
}

// retrievals adds to ac what the stores its agent equips put in its prompt (the most
// passages of the largest size), and returns the cost of one call's query embeddings.
func (pl *planner) retrievals(ac *AgentCall, a *lang.AgentDecl) Cost {
	var c Cost
	for _, id := range a.Equips {
		td := pl.prog.Tool(id.Name)
		if td == nil || !store.IsStore(td.Provider.Name) {
			continue
		}
		spec, _ := store.ParseSpec(staticDecl(td), true)
		r := &Retrieval{Store: td.Name.Name, Kind: spec.Kind, TopK: spec.TopK}
		// Each passage: its text, and 80 characters for its source and headings.
		r.PromptTokens = int64(spec.TopK) * int64((spec.ChunkChars+80+charsPerToken-1)/charsPerToken)
		ac.PromptTokens = satAdd(ac.PromptTokens, r.PromptTokens)
		if spec.Kind == store.VectorStore && spec.Embed != "" {
			r.Embed = spec.Embed
			r.QueryTokens = min(ac.PromptTokens, int64(store.MaxQueryBytes/charsPerToken))
			q := Cost{Requests: 1, InputTokens: r.QueryTokens}
			prov, mid, _ := strings.Cut(spec.Embed, "/")
			if price, ok := pl.cfg.Prices.Lookup(prov, mid); ok {
				r.QueryUSD = float64(r.QueryTokens) * price.Input / 1e6
				q.USD = r.QueryUSD
			} else {
				q.USDUnknown = true
				q.Unknown = []string{fmt.Sprintf("no price for %s in the price table", spec.Embed)}
			}
			c = c.Add(q)
		}
		ac.Retrievals = append(ac.Retrievals, r)
	}
	return c
}

// storePlans lists the stores pd's run may use (equipped by an agent it calls, or called as
// a tool), with the cost of indexing their files.
func (pl *planner) storePlans(pd *lang.PipelineDecl) []*StorePlan {
	seen := map[string]bool{}
	var out []*StorePlan
	add := func(td *lang.ToolDecl) {
		if td == nil || !store.IsStore(td.Provider.Name) || seen[td.Name.Name] {
			return
		}
		seen[td.Name.Name] = true
		spec, _ := store.ParseSpec(staticDecl(td), true)
		sp := &StorePlan{Tool: td.Name.Name, Kind: spec.Kind, Embed: spec.Embed}
		if pl.cfg.StoreBytes != nil {
			sp.Files, sp.Bytes, sp.Known = pl.cfg.StoreBytes(td)
		}
		if spec.Kind == store.VectorStore && spec.Embed != "" {
			prov, mid, _ := strings.Cut(spec.Embed, "/")
			price, ok := pl.cfg.Prices.Lookup(prov, mid)
			sp.Priced, sp.Price = ok, price.Input
			if sp.Known {
				sp.IndexTokens = (sp.Bytes + charsPerToken - 1) / charsPerToken
				sp.IndexUSD = float64(sp.IndexTokens) * price.Input / 1e6
			}
		}
		out = append(out, sp)
	}
	var walk func(pd *lang.PipelineDecl, stack map[string]bool)
	walk = func(pd *lang.PipelineDecl, stack map[string]bool) {
		if stack[pd.Name.Name] {
			return
		}
		stack[pd.Name.Name] = true
		for _, c := range pd.Calls() {
			if c.Recv == nil {
				if sub := pl.prog.Pipeline(c.Method.Name); sub != nil {
					walk(sub, stack)
				}
				continue
			}
			if a := pl.prog.Agent(c.Recv.Name); a != nil {
				for _, id := range a.Equips {
					add(pl.prog.Tool(id.Name))
				}
				continue
			}
			add(pl.prog.Tool(c.Recv.Name))
		}
	}
	walk(pd, map[string]bool{})
	return out
}

// staticDecl is td's declaration as far as it is known before a run.
func staticDecl(td *lang.ToolDecl) tool.Declaration {
	d := tool.Declaration{Name: td.Name.Name, Provider: td.Provider.Name, Named: map[string]any{}}
	for _, a := range td.Args {
		if a.Name == nil {
			d.Args = append(d.Args, lang.StaticValue(a.Value))
		} else {
			d.Named[a.Name.Name] = lang.StaticValue(a.Value)
		}
	}
	return d
}

// conversation is the worst case of one conversation of requests requests (@retry sends each
// up to attempts times): the first steps ask for tools and grow the conversation by a reply
// and a tool result each, the rest by a reply.
func conversation(prompt, reply, result, steps, requests, attempts int64, price model.Price, priced bool, ref string, replyUnknown bool) Cost {
	c := Cost{Requests: satMul(requests, attempts)}
	if replyUnknown {
		c.TokensUnknown = true
		c.Unknown = append(c.Unknown, fmt.Sprintf("nothing caps %s's replies (no max_tokens, and the price table has no maxOutput for it)", ref))
		if !priced || price.Input != 0 || price.Output != 0 {
			c.USDUnknown = true
		}
	}
	if !priced {
		c.USDUnknown = true
		c.Unknown = append(c.Unknown, fmt.Sprintf("no price for %s in the price table", ref))
	}
	if replyUnknown {
		return c.checked()
	}
	// Request k (from 1) sends prompt plus what the k-1 requests before it added: g(j) =
	// reply+result for j <= steps, reply after. Summed over k, what came before is
	// sum over j < requests of g(j)*(requests-j); with a = min(steps, requests-1):
	//   (reply+result) * (a*requests - a(a+1)/2) + reply * (requests-1-a)(requests-a)/2.
	// Big integers keep a huge max_steps exact; a sum past int64 is too large to hold.
	S, P := big.NewInt(requests), big.NewInt(prompt)
	a := big.NewInt(min(steps, requests-1))
	one := big.NewInt(1)
	sum := new(big.Int).Mul(S, P)
	t1 := new(big.Int).Mul(a, S)
	t1.Sub(t1, new(big.Int).Rsh(new(big.Int).Mul(a, new(big.Int).Add(a, one)), 1))
	sum.Add(sum, t1.Mul(t1, big.NewInt(satAdd(reply, result))))
	rest := new(big.Int).Sub(S, a) // requests - a
	t2 := new(big.Int).Mul(new(big.Int).Sub(rest, one), rest)
	t2.Rsh(t2, 1)
	sum.Add(sum, t2.Mul(t2, big.NewInt(reply)))
	in := int64(math.MaxInt64)
	if sum.IsInt64() {
		in = sum.Int64()
	}
	c.InputTokens = satMul(in, attempts)
	c.OutputTokens = satMul(satMul(reply, requests), attempts)
	if priced {
		c.USD = (float64(c.InputTokens)*price.Input + float64(c.OutputTokens)*price.Output) / 1e6
	}
	return c.checked()
}

// verdict turns an Explanation into an Offer's verdict.
func verdict(e policy.Explanation) (string, *policy.RuleRef, string) {
	switch {
	case e.Hidden != nil:
		return "refused", ruleOf(e.Hidden), e.Hidden.Reason
	case e.Approval != nil:
		return "approval", ruleOf(e.Approval), e.Approval.Reason
	}
	return "allowed", nil, ""
}

func ruleOf(d *policy.Decision) *policy.RuleRef {
	r := d.Ref()
	return &r
}

// spend sets the run's total against the smallest MaxSpend of its agents.
func (pl *planner) spend(total Cost) *Spend {
	var sp *Spend
	var unlimited []string
	names := make([]string, 0, len(pl.agents))
	for n := range pl.agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := pl.prog.Agent(name)
		limit, ok := pl.policySet(a).SpendLimit()
		if !ok {
			unlimited = append(unlimited, name)
			continue
		}
		if sp == nil || limit < sp.USD {
			sp = &Spend{USD: limit, Policy: pl.spendPolicy(a, limit)}
		}
	}
	if sp == nil {
		return nil
	}
	sp.Unlimited = unlimited
	sp.Over = !total.USDUnknown && RoundUSD(total.USD) > sp.USD
	return sp
}

// spendPolicy names the policy of a that sets its MaxSpend to limit.
func (pl *planner) spendPolicy(a *lang.AgentDecl, limit float64) string {
	for _, id := range a.Requires {
		pd := pl.prog.Policy(id.Name)
		if pd == nil {
			continue
		}
		for _, r := range pd.Rules {
			if r.Name.Name == "MaxSpend" && len(r.Args) == 1 {
				if n, ok := r.Args[0].Value.(*lang.NumberLit); ok && n.Value == limit {
					return pd.Name.Name
				}
			}
		}
	}
	return ""
}
