package studio

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A span is one row of a run's waterfall: a stage, a model request, a tool call (an agent's
// chosen call is one span with its decision and result), a retrieval, a wait for a person,
// or a moment (a violation no call owns, a loop, a branch, an answer). Its card holds what
// its events say.
type span struct {
	// ID is the row's anchor: "s3" for stage 3, else "e" and its first event's number.
	ID   string
	Kind string
	// Class is the row's look: its kind, a decision, failed.
	Class      string
	Name, Note string
	Tags       []string
	// Dur and Cost are the span's time and cost as shown; Tokens its model tokens.
	Dur, Cost, Tokens string
	// X and W place its bar on the axis, in percent; Moment says it has no length.
	X, W   string
	Moment bool
	Facts  []fact
	Texts  []text
	// At is where it is written, Source the link to it in the source view.
	At, Source string
	// Conv is the anchor of the conversation it belongs to ("" for none).
	Conv string
	// Seqs are the numbers of the events it shows.
	Seqs []int
	// Diverged marks the span where a replay left the run.
	Diverged bool
	// Children are a stage's spans, by the time they began.
	Children []span

	start, end time.Time
	key        string // agent and target, for pairing a call with its decision
}

// An axis is a run's time as the waterfall draws it: from the start to the end, without
// the time the run waited for a person.
type axis struct {
	start, end time.Time
	gaps       [][2]time.Time
}

// at is how far into the run t is, waits left out.
func (a axis) at(t time.Time) time.Duration {
	if t.Before(a.start) {
		t = a.start
	}
	d := t.Sub(a.start)
	for _, g := range a.gaps {
		from, to := g[0], g[1]
		if !t.After(from) {
			continue
		}
		if t.Before(to) {
			to = t
		}
		d -= to.Sub(from)
	}
	return max(d, 0)
}

func (a axis) total() time.Duration { return a.at(a.end) }

// place sets s's bar from its start and end.
func (a axis) place(s *span) {
	total := a.total()
	if total <= 0 {
		s.X, s.W = "0%", "0.4%"
		return
	}
	x := 100 * float64(a.at(s.start)) / float64(total)
	w := 100 * float64(a.at(s.end)-a.at(s.start)) / float64(total)
	if w < 0.4 {
		w = 0.4 // a moment, or a sliver, stays visible
		s.Moment = s.Moment || !s.end.After(s.start)
	}
	x = math.Min(x, 100-w)
	s.X, s.W = pctOf(x), pctOf(w)
}

func pctOf(p float64) string {
	return strconv.FormatFloat(math.Round(p*10)/10, 'f', -1, 64) + "%"
}

// A message is one turn of a conversation as the model saw it.
type message struct {
	// Role is system, user, assistant or tool.
	Role  string
	Label string
	Text  text
	// HasText says Text is shown.
	HasText bool
	// Calls are an assistant turn's tool calls.
	Calls []callMsg
	// Class marks a refused, declined or failed call's result.
	Class string
}

// A callMsg is a tool call of an assistant turn, with the arguments the policies saw.
type callMsg struct {
	Name    string
	Args    text
	HasArgs bool
}

// A conversation is one agent call's exchange with its model: the system prompt, the
// prompt, each answer with its tool calls, and each result as the model read it (after the
// agent's policies).
type conversation struct {
	ID, Agent, Target, At, Source string
	Tags                          []string
	Requests                      int
	Messages                      []message
	// Stage is the number of the stage it belongs to.
	Stage int
}

// A costRow is a stage's or a model's share of the run's time, tokens and cost.
type costRow struct {
	Title, At, Source    string
	Ms                   int64
	Requests             int
	In, Out              int
	USD                  float64
	Unknown              bool
	Time, Tokens, Cost   string
	TimeWidth, CostWidth string
}

// An eventView is what a run's events make: the waterfall, the conversations and the tables of
// cost and tokens.
type eventView struct {
	Stages        []span
	Conversations []conversation
	ByStage       []costRow
	ByModel       []costRow
	// AxisEnd labels the axis' end; AxisMid its middle.
	AxisMid, AxisEnd string
}

// build makes the view of a run's events. started is when the run started; ended when it
// stopped, or now while it runs or waits. A "stage" event closes each stage of the
// pipeline the run started with: the events before it are that stage's (a fan-out's or an
// each's included); events after the last one are of the stage running, failed or waiting.
// Records made before stage events existed are grouped by where each event is written.
func build(evs []event, started, ended time.Time) eventView {
	ax := axis{start: started, end: ended}
	for i, e := range evs {
		if e.Type != "paused" {
			continue
		}
		until := ended
		if i+1 < len(evs) {
			until = evs[i+1].Time
		}
		if until.After(e.Time) {
			ax.gaps = append(ax.gaps, [2]time.Time{e.Time, until})
		}
	}
	if ax.start.IsZero() && len(evs) > 0 {
		ax.start = evs[0].Time
	}
	if ax.end.Before(ax.start) {
		ax.end = ax.start
	}
	hasStages := false
	for _, e := range evs {
		if e.Type == "stage" {
			hasStages = true
			break
		}
	}
	b := &builder{ax: ax, convs: map[string]*conversation{}, models: map[string]*costRow{}, stageRows: map[string]*costRow{}}
	var group []event
	mark := ax.start
	flush := func(end *event) {
		if len(group) == 0 && end == nil {
			return
		}
		st := span{Kind: "stage", Class: "stage", start: mark}
		if end != nil {
			st.Name, st.At, st.end = end.Target, end.At, end.Time
			st.Seqs = []int{end.Seq}
		} else {
			st.end = ended
			if n := len(group); n > 0 && group[n-1].Time.After(st.end) {
				st.end = group[n-1].Time
			}
		}
		b.stage(&st, group)
		mark = st.end
		group = group[:0]
	}
	for _, e := range evs {
		switch {
		case e.Type == "run" || e.Type == "progress":
			continue
		case e.Type == "stage":
			flush(&e)
			continue
		case !hasStages && len(group) > 0 && group[len(group)-1].At != e.At:
			flush(nil)
		}
		group = append(group, e)
	}
	flush(nil)
	v := eventView{Stages: b.stages, AxisEnd: durationOf(ax.total()), AxisMid: durationOf(ax.total() / 2)}
	for _, k := range b.rowOrder {
		r := b.stageRows[k]
		r.finish()
		v.ByStage = append(v.ByStage, *r)
	}
	for _, c := range b.convOrder {
		v.Conversations = append(v.Conversations, *c)
	}
	var maxMs int64
	var maxCost float64
	for _, r := range v.ByStage {
		maxMs, maxCost = max(maxMs, r.Ms), max(maxCost, r.USD)
	}
	for i := range v.ByStage {
		r := &v.ByStage[i]
		r.TimeWidth, r.CostWidth = "0%", "0%"
		if maxMs > 0 {
			r.TimeWidth = pct(100 * float64(r.Ms) / float64(maxMs))
		}
		if maxCost > 0 {
			r.CostWidth = pct(100 * r.USD / maxCost)
		}
	}
	names := make([]string, 0, len(b.models))
	for m := range b.models {
		names = append(names, m)
	}
	sort.Strings(names)
	for _, m := range names {
		r := b.models[m]
		r.finish()
		v.ByModel = append(v.ByModel, *r)
	}
	return v
}

// A builder makes the spans of one run, stage by stage.
type builder struct {
	ax        axis
	stages    []span
	rowOrder  []string
	stageRows map[string]*costRow
	convs     map[string]*conversation
	convOrder []*conversation
	models    map[string]*costRow
}

// stage adds the stage span st (its start and end set) with the spans of its events.
func (b *builder) stage(st *span, evs []event) {
	n := len(b.stages) + 1
	st.ID = "s" + strconv.Itoa(n)
	var targets []string
	for _, e := range evs {
		if t := stageName(e); t != "" && !contains(targets, t) {
			targets = append(targets, t)
		}
	}
	if st.Name == "" {
		st.Name = titleOf(targets)
	}
	if st.At == "" && len(evs) > 0 {
		st.At = evs[0].At
	}
	st.Source = sourceLink(st.At)
	st.Note = "stage " + strconv.Itoa(n)
	key := st.At + "|" + st.Name // a stage a loop runs again is one row
	row := b.stageRows[key]
	if row == nil {
		row = &costRow{Title: st.Name, At: st.At, Source: st.Source}
		b.stageRows[key] = row
		b.rowOrder = append(b.rowOrder, key)
	}
	var kids []span
	// pending are the spans of calls an agent made whose decision has not come yet, and of
	// the violations that may be theirs, by agent and target.
	pending := map[string][]int{}
	var usd float64
	unknown := false
	in, out, requests, calls := 0, 0, 0, 0
	var callMs int64
	for _, e := range evs {
		en := entryOf(e)
		sp := span{ID: "e" + strconv.Itoa(e.Seq), Kind: e.Type, Class: en.Class, Name: en.Head, Note: en.Note, Tags: en.Tags,
			Facts: en.Facts, Texts: en.Texts, At: e.At, Seqs: []int{e.Seq}, end: e.Time, key: e.Agent + "\x00" + e.Target}
		sp.start = e.Time.Add(-time.Duration(e.DurationMs) * time.Millisecond)
		if e.At != st.At {
			sp.Source = sourceLink(e.At)
		}
		switch e.Type {
		case "llm":
			requests++
			usd += e.Cost
			unknown = unknown || e.Unpriced
			callMs += e.DurationMs
			sp.Dur, sp.Cost = duration(e.DurationMs), costOf(e.Cost, e.Unpriced)
			if e.Usage != nil {
				in, out = in+e.Usage.InputTokens, out+e.Usage.OutputTokens
				sp.Tokens = tokens(e.Usage.InputTokens, e.Usage.OutputTokens)
			}
			if e.Step > 0 {
				sp.Note = "model request, step " + strconv.Itoa(e.Step)
			}
			sp.Conv = b.converse(e, n)
			b.model(e)
		case "tool":
			calls++
			usd += e.Cost
			callMs += e.DurationMs
			sp.Dur = duration(e.DurationMs)
			if e.Agent != "" {
				pending[sp.key] = append(pending[sp.key], len(kids))
			}
		case "agent_tool":
			i, ok, viols := b.decided(kids, pending, sp.key, e, &en)
			if ok {
				kids[i].Conv = b.answered(e)
				continue
			}
			sp.Class, sp.Facts, sp.Texts = en.Class, en.Facts, en.Texts
			sp.Seqs = append(sp.Seqs, viols...)
			calls++
			sp.Moment = e.DurationMs == 0
			sp.Dur = duration(e.DurationMs)
			sp.Note = "call chosen by " + e.Agent + ", not run"
			sp.Conv = b.answered(e)
		case "violation":
			if e.Phase == "tool" || e.Phase == "input" {
				pending[sp.key] = append(pending[sp.key], len(kids))
			}
			sp.Moment = true
		case "paused":
			sp.Kind, sp.Moment = "wait", true
			sp.Name = "Waited for " + e.Channel
			for _, g := range b.ax.gaps {
				if g[0].Equal(e.Time) {
					sp.Dur = durationOf(g[1].Sub(g[0]))
				}
			}
		case "retrieval", "embed":
			usd += e.Cost
			callMs += e.DurationMs
			sp.Dur, sp.Cost = duration(e.DurationMs), costOf(e.Cost, e.Unpriced)
			if e.Type == "embed" {
				b.model(e)
			}
		default:
			sp.Moment = e.DurationMs == 0
		}
		kids = append(kids, sp)
	}
	// Spans merged into another are dropped; the rest go by when they began.
	var keep []span
	for _, k := range kids {
		if k.Kind != "" {
			b.ax.place(&k)
			keep = append(keep, k)
		}
	}
	sort.SliceStable(keep, func(i, j int) bool { return keep[i].start.Before(keep[j].start) })
	st.Children = keep
	if st.start.IsZero() || st.start.After(st.end) {
		st.start = st.end
	}
	b.ax.place(st)
	ms := (b.ax.at(st.end) - b.ax.at(st.start)).Milliseconds()
	if ms <= 0 {
		ms = callMs // a record without stage events: its calls' time
	}
	st.Dur, st.Cost = durationOf(time.Duration(ms)*time.Millisecond), costOf(usd, unknown)
	if requests > 0 {
		st.Tokens = tokens(in, out)
	}
	st.Facts = append(st.Facts, fact{"time", st.Dur}, fact{"cost", st.Cost})
	if requests > 0 {
		st.Facts = append(st.Facts, fact{"model requests", strconv.Itoa(requests)}, fact{"tokens", st.Tokens})
	}
	if calls > 0 {
		st.Facts = append(st.Facts, fact{"tool calls", strconv.Itoa(calls)})
	}
	for _, c := range b.convOrder {
		if c.Stage == n && st.Conv == "" {
			st.Conv = "#" + c.ID
		}
	}
	b.stages = append(b.stages, *st)

	row.Ms += ms
	row.Requests += requests
	row.In, row.Out = row.In+in, row.Out+out
	row.USD += usd
	row.Unknown = row.Unknown || unknown
}

// decided merges the decision e on an agent's chosen call into the span of the call (its
// tool event), when it ran, and the violations of it into it too. It returns the index of
// the call's span; false when the call did not run (refused, declined, failed): then the
// violations go into en, the entry of e's own span, which the caller adds, and their
// events' numbers are returned.
func (b *builder) decided(kids []span, pending map[string][]int, key string, e event, en *entry) (int, bool, []int) {
	ran := -1
	var viols []int
	for _, i := range pending[key] {
		if kids[i].Kind == "tool" && ran < 0 {
			ran = i
		} else if kids[i].Kind == "violation" {
			viols = append(viols, i)
		}
	}
	delete(pending, key)
	if ran < 0 {
		// Not run: the refusal's violation joins the decision, whose span the caller adds.
		var seqs []int
		for _, i := range viols {
			v := &kids[i]
			en.Facts = append(en.Facts, v.Facts...)
			en.Texts = addNew(en.Texts, v.Texts)
			en.Class += " " + v.Class
			seqs = append(seqs, v.Seqs...)
			v.Kind = ""
		}
		return 0, false, seqs
	}
	k := &kids[ran]
	k.Name, k.Note = e.Target, "call chosen by "+e.Agent
	k.Class = en.Class + " " + k.Class
	k.Seqs = append(k.Seqs, e.Seq)
	// The decision first, then what the call took; the arguments as the policies saw them.
	facts := []fact{}
	for _, f := range en.Facts {
		if f.Label != "time" {
			facts = append(facts, f)
		}
	}
	facts = append(facts, k.Facts...)
	var texts []text
	returned := ""
	for _, t := range k.Texts {
		if t.Label == "result" {
			returned = t.Full
		}
	}
	for _, t := range en.Texts {
		if t.Label == readLabel && t.Full == returned {
			continue // the model read the result as the tool returned it
		}
		texts = append(texts, t)
	}
	for _, t := range k.Texts {
		if t.Label != "arguments" {
			texts = append(texts, t)
		}
	}
	for _, i := range viols {
		v := &kids[i]
		facts = append(facts, v.Facts...)
		texts = addNew(texts, v.Texts)
		k.Class += " " + v.Class
		k.Seqs = append(k.Seqs, v.Seqs...)
		v.Kind = ""
	}
	k.Facts, k.Texts = facts, texts
	return ran, true, nil
}

// addNew appends to texts those of more whose words it does not hold yet: a violation's
// message is often the refusal's detail.
func addNew(texts, more []text) []text {
	for _, m := range more {
		dup := false
		for _, t := range texts {
			dup = dup || t.Full == m.Full
		}
		if !dup {
			texts = append(texts, m)
		}
	}
	return texts
}

// converse adds llm event e, of stage n, to its agent's conversation, and returns the
// conversation's anchor.
func (b *builder) converse(e event, n int) string {
	key := convKey(e)
	c := b.convs[key]
	if c == nil || e.Step <= 1 || c.Target != e.Target {
		c = &conversation{ID: "c" + strconv.Itoa(len(b.convOrder)+1), Agent: e.Agent, Target: e.Target, At: e.At, Source: sourceLink(e.At), Stage: n}
		if e.Item != nil {
			c.Tags = append(c.Tags, fmt.Sprintf("item %d", *e.Item))
		}
		if e.Arm != "" {
			c.Tags = append(c.Tags, "arm "+e.Arm)
		}
		b.convs[key] = c
		b.convOrder = append(b.convOrder, c)
	}
	c.Requests++
	if e.System != "" {
		c.Messages = append(c.Messages, message{Role: "system", Label: "system", Text: newText("", e.System, false), HasText: true})
	}
	if e.Prompt != "" {
		c.Messages = append(c.Messages, message{Role: "user", Label: "user", Text: newText("", e.Prompt, false), HasText: true})
	}
	m := message{Role: "assistant", Label: "assistant, step " + strconv.Itoa(max(e.Step, 1))}
	if e.Error != nil {
		m.Text, m.HasText, m.Class = newText("error", "The request failed: "+e.Error.Code+" "+e.Error.Message, false), true, "failed"
	} else if e.Answer != "" {
		m.Text, m.HasText = newText("answer", e.Answer, false), true
	}
	for _, name := range e.ToolCalls {
		m.Calls = append(m.Calls, callMsg{Name: name})
	}
	c.Messages = append(c.Messages, m)
	return "#" + c.ID
}

// answered adds what the model read of the call e decided to its agent's conversation: the
// arguments to the call in the answer that asked for it, and the result. It returns the
// conversation's anchor.
func (b *builder) answered(e event) string {
	c := b.convs[convKey(e)]
	if c == nil {
		return ""
	}
	// The call is the first of the last answer's calls without arguments yet.
	for i := len(c.Messages) - 1; i >= 0; i-- {
		m := &c.Messages[i]
		if m.Role != "assistant" {
			continue
		}
		for j := range m.Calls {
			if !m.Calls[j].HasArgs {
				m.Calls[j].Name = e.Target
				m.Calls[j].Args, m.Calls[j].HasArgs = jsonText("arguments", e.Args)
				m.Calls[j].HasArgs = true
				break
			}
		}
		break
	}
	m := message{Role: "tool", Label: e.Target + " · " + e.Decision}
	switch {
	case e.Result != "":
		m.Text, m.HasText = newText("result", e.Result, false), true
	case e.Detail != "":
		m.Text, m.HasText = newText(detailLabel(e.Decision), e.Detail, false), true
	}
	if e.Decision != "allowed" && e.Decision != "approved" {
		m.Class = "decision-" + e.Decision
	}
	c.Messages = append(c.Messages, m)
	return "#" + c.ID
}

func convKey(e event) string {
	k := e.Agent
	if e.Item != nil {
		k += "#" + strconv.Itoa(*e.Item)
	}
	return k + "?" + e.Arm
}

// model counts an llm (or embed) event in its model's row.
func (b *builder) model(e event) {
	name := e.Model
	if name == "" {
		name = "(mocked)"
	}
	r := b.models[name]
	if r == nil {
		r = &costRow{Title: name}
		b.models[name] = r
	}
	r.Requests++
	r.Ms += e.DurationMs
	if e.Usage != nil {
		r.In, r.Out = r.In+e.Usage.InputTokens, r.Out+e.Usage.OutputTokens
	}
	r.USD += e.Cost
	r.Unknown = r.Unknown || e.Unpriced
}

func (r *costRow) finish() {
	r.Time = durationOf(time.Duration(r.Ms) * time.Millisecond)
	r.Tokens = tokens(r.In, r.Out)
	r.Cost = costOf(r.USD, r.Unknown)
}

func tokens(in, out int) string { return fmt.Sprintf("%d in, %d out", in, out) }

// costOf shows a cost: "—" when a price is unknown and nothing else is known, "≥ $…" when
// part of it is.
func costOf(usd float64, unknown bool) string {
	switch {
	case unknown && usd == 0:
		return "—"
	case unknown:
		return "≥ " + money(usd)
	}
	return money(usd)
}

// sourceFile is the source view's address of a whole file ("" for none).
func sourceFile(file string) string {
	if file == "" || file == "." {
		return ""
	}
	return "/source?" + url.Values{"file": {file}}.Encode()
}

// sourceLink is the source view's address of a place "file:line:col" ("" for none).
func sourceLink(at string) string {
	file, line, col, ok := splitAt(at)
	if !ok {
		return ""
	}
	q := url.Values{"file": {file}, "line": {strconv.Itoa(line)}, "col": {strconv.Itoa(col)}}
	return "/source?" + q.Encode() + "#L" + strconv.Itoa(line)
}

// splitAt reads "file:line:col" (the file may hold colons).
func splitAt(at string) (file string, line, col int, ok bool) {
	rest, c, found := cutLast(at, ":")
	if !found {
		return "", 0, 0, false
	}
	file, l, found := cutLast(rest, ":")
	line, err1 := strconv.Atoi(l)
	col, err2 := strconv.Atoi(c)
	if !found || file == "" || err1 != nil || err2 != nil || line <= 0 || col <= 0 {
		return "", 0, 0, false
	}
	return file, line, col, true
}

func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}
