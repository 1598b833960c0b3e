package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/store"
)

// A RetrievalInfo is one search an agent call made of a store it equips, as
// context.meta.retrievals holds it: how many passages went into the prompt, and how many the
// agent's input policies withheld.
type RetrievalInfo struct {
	Store    string `json:"store"`
	Agent    string `json:"agent"`
	Target   string `json:"target"`
	Hits     int    `json:"hits"`
	Withheld int    `json:"withheld,omitempty"`
}

// storeCaller is who a store's embedding requests are made for. The one provider a run opens
// for a store serves every caller, so each tool call carries its caller in its context, and
// the store's Meter prices each request for that caller.
type storeCaller struct {
	rn    *run
	agent string
	set   policy.Set
	at    string
}

type storeCallerKey struct{}

func withStoreCaller(ctx context.Context, c storeCaller) context.Context {
	return context.WithValue(ctx, storeCallerKey{}, c)
}

// meterStore is the Meter of the stores a run opens: each embedding request is an "embed"
// call of the run, priced from the price table, reserved against and settled in the run's
// budget under its caller's MaxSpend, and shown as an event.
func meterStore(ctx context.Context, e store.Embedding, send func(context.Context, model.EmbedRequest) (model.EmbedResponse, error)) (model.EmbedResponse, error) {
	c, ok := ctx.Value(storeCallerKey{}).(storeCaller)
	if !ok {
		return send(ctx, e.Request)
	}
	return c.rn.embedCall(ctx, c, e, send)
}

func (rn *run) embedCall(ctx context.Context, c storeCaller, e store.Embedding, send func(context.Context, model.EmbedRequest) (model.EmbedResponse, error)) (model.EmbedResponse, error) {
	target := e.Store + ".embed"
	est := policy.Estimate{}
	prov, id, _ := strings.Cut(e.Model, "/")
	if price, ok := rn.r.cfg.Prices.Lookup(prov, id); ok && !e.Mocked {
		est.InputUSD = float64(model.EstimateEmbedTokens(e.Request.Inputs)) * price.Input / 1e6
	}
	var resv *policy.Reservation
	err := rn.shares.reserve(func(int) error {
		var err error
		resv, err = c.set.Reserve(rn.budget, est)
		return err
	})
	if err != nil {
		rn.violation(ctx, err, c.agent, target, c.at)
		return model.EmbedResponse{}, err
	}
	start := rn.r.cfg.Now()
	resp, err := send(ctx, e.Request)
	if e.Mocked {
		resp.Cost = 0
	}
	settleErr := resv.Settle(resp.Cost)
	rn.shares.release()
	dur := rn.r.cfg.Now().Sub(start).Milliseconds()
	ci := CallInfo{Kind: "embed", Target: target, Agent: c.agent, Model: e.Model, Cost: resp.Cost, DurationMs: dur, Mocked: e.Mocked}
	ev := Event{Type: "embed", At: c.at, Agent: c.agent, Target: target, Model: e.Model, Cost: resp.Cost, DurationMs: dur, Mocked: e.Mocked,
		Message: plural(len(e.Request.Inputs), "text", "texts")}
	if err != nil {
		ci.Error = codeOf(err)
		ev.Error = infoOf(err, "")
	} else {
		u := resp.Usage
		ci.Usage, ev.Usage = &u, &u
	}
	rn.st.addCall(ci)
	rn.st.emit(ev)
	if err != nil {
		return model.EmbedResponse{}, err
	}
	if settleErr != nil {
		rn.violation(ctx, settleErr, c.agent, target, c.at)
		return model.EmbedResponse{}, settleErr
	}
	return resp, nil
}

// stores returns the set a run opens its stores from: the Runtime's (shared by its runs), or
// one of the run's own, closed with its tools.
func (ts *toolSet) stores() *store.Set {
	if s := ts.r.cfg.Stores; s != nil {
		return s
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.ownStores == nil {
		ts.ownStores = store.NewSet(store.Config{Dir: ts.r.cfg.Dir, Mock: ts.r.cfg.MockAgents, Logger: ts.r.cfg.Logger,
			Model: model.Config{Env: ts.r.cfg.Env, Logger: ts.r.cfg.Logger}})
	}
	return ts.ownStores
}

// OfferedTools is the tools an agent call with settings st is offered: those it names, and
// for tools: auto every tool its agent equips but the stores (which add to its prompt, and
// are offered only when named: tools: [Handbook]).
func (r *Runtime) OfferedTools(st lang.CallSettings) []string {
	if !st.Auto {
		return st.Tools
	}
	var out []string
	for _, name := range st.Tools {
		if !isStore(r.prog.Tool(name)) {
			out = append(out, name)
		}
	}
	return out
}

// isStore reports whether td declares a File or VectorStore.
func isStore(td *lang.ToolDecl) bool { return td != nil && store.IsStore(td.Provider.Name) }

// maxRetrievalQuery is how much of an agent call's prompt its stores are searched with: a
// store's query limit, cut at a character.
const maxRetrievalQuery = store.MaxQueryBytes

// retrieve searches each store agent a equips with the call's prompt (after its input
// policies) and adds the hits to the prompt, each with its source. Each hit passes through
// the agent's input policies on its own: Redact replaces, and a Block match withholds that hit
// (a violation), as for a tool result. Each search is a tool call of the store's search (so
// mocks, recordings and replays answer it as any call), a "retrieval" event and an entry of
// context.meta.retrievals.
func (rn *run) retrieve(ctx context.Context, a *lang.AgentDecl, prompt string, at string, set policy.Set) (string, error) {
	agentName := a.Name.Name
	var b strings.Builder
	b.WriteString(prompt)
	for _, id := range a.Equips {
		td := rn.r.prog.Tool(id.Name)
		if !isStore(td) {
			continue
		}
		name := td.Name.Name
		query := prompt
		if len(query) > maxRetrievalQuery {
			cut := maxRetrievalQuery
			for cut > 0 && !utf8.RuneStart(query[cut]) {
				cut--
			}
			query = query[:cut]
		}
		out, err := rn.toolCall(ctx, toolReq{td: td, method: "search", named: map[string]any{"query": query}, at: at, agent: agentName, set: set})
		if err != nil {
			return "", err
		}
		hits := retrieved(out)
		shown := make([]any, 0, len(hits))
		info := RetrievalInfo{Store: name, Agent: agentName, Target: name + ".search"}
		var section strings.Builder
		for _, h := range hits {
			text, verr := set.Input(h.Text)
			var v *policy.Violation
			withheld := errors.As(verr, &v)
			shown = append(shown, map[string]any{"source": h.Source, "score": h.Score, "withheld": withheld})
			if withheld {
				rn.violation(ctx, v, agentName, info.Target, at)
				info.Withheld++
				continue
			}
			info.Hits++
			section.WriteString("\n\n[" + h.Source + "]")
			if h.Title != "" {
				section.WriteString(" " + h.Title)
			}
			section.WriteString("\n" + text)
		}
		rn.st.addRetrieval(info)
		rn.st.emit(Event{Type: "retrieval", At: at, Agent: agentName, Target: name, Prompt: shownText(set, query), Output: shown,
			Message: fmt.Sprintf("%d in the prompt, %d withheld", info.Hits, info.Withheld)})
		if info.Hits > 0 {
			b.WriteString("\n\nPassages from " + name + " that may answer this request (each names its source):")
			b.WriteString(section.String())
		}
	}
	return b.String(), nil
}

// retrieved reads a store search's result (or a mock's): a list of hits, each an object with
// text, source (or id), title and score, or a plain string; or one such hit alone.
func retrieved(out any) []store.Hit {
	list, ok := out.([]any)
	if !ok && out != nil {
		list = []any{out}
	}
	hits := make([]store.Hit, 0, len(list))
	for i, x := range list {
		switch v := x.(type) {
		case string:
			hits = append(hits, store.Hit{Text: v, Source: strconv.Itoa(i + 1)})
		case map[string]any:
			h := store.Hit{}
			h.Text, _ = v["text"].(string)
			h.Title, _ = v["title"].(string)
			h.Source, _ = v["source"].(string)
			if h.Source == "" {
				h.Source, _ = v["id"].(string)
			}
			if h.Source == "" {
				h.Source = strconv.Itoa(i + 1)
			}
			h.Score, _ = v["score"].(float64)
			hits = append(hits, h)
		}
	}
	return hits
}

// plural is n and the noun that goes with it.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
