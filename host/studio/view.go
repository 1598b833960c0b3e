package studio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Long text is folded: the page shows its start, and the whole of it in a <details>.
const (
	foldChars = 400
	foldLines = 10
	shortRune = 160
	shortLine = 3
)

// A text is a prompt, an answer, arguments or a result as the page shows it.
type text struct {
	Label string
	Full  string
	// Short is the start of a long text, "" for a text shown whole.
	Short string
	// Mono says the text is code or JSON.
	Mono bool
}

func newText(label, s string, mono bool) text {
	t := text{Label: label, Full: s, Mono: mono}
	if utf8.RuneCountInString(s) > foldChars || strings.Count(s, "\n") >= foldLines {
		short := s
		if lines := strings.SplitN(short, "\n", shortLine+1); len(lines) > shortLine {
			short = strings.Join(lines[:shortLine], "\n")
		}
		if utf8.RuneCountInString(short) > shortRune {
			short = string([]rune(short)[:shortRune])
		}
		t.Short = short + "…"
	}
	return t
}

// jsonText shows a JSON value indented (with <, > and & as they are: the page escapes
// them), or a string as it is.
func jsonText(label string, v any) (text, bool) {
	switch x := v.(type) {
	case nil:
		return text{}, false
	case string:
		return newText(label, x, false), true
	case json.RawMessage:
		if len(x) == 0 || string(x) == "null" {
			return text{}, false
		}
		dec := json.NewDecoder(bytes.NewReader(x))
		dec.UseNumber()
		var val any
		if dec.Decode(&val) != nil {
			return newText(label, string(x), true), true
		}
		v = val
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return newText(label, fmt.Sprint(v), true), true
	}
	return newText(label, strings.TrimSuffix(buf.String(), "\n"), true), true
}

// A fact is one "label value" of a timeline entry.
type fact struct{ Label, Value string }

// An entry is one event in the timeline.
type entry struct {
	Seq   int
	Type  string
	Class string
	// Head names the call or what happened; Note follows it.
	Head, Note string
	Facts      []fact
	Tags       []string
	Texts      []text
}

// A stage is consecutive events written at one place in the file.
type stage struct {
	N       int
	At      string
	Title   string
	Entries []entry
}

// A bar is one stage's share of the run's time and cost.
type bar struct {
	Title, At          string
	Ms                 int64
	Cost               float64
	MsPct, CostPct     float64
	MsLabel, CostLabel string
	MsWidth, CostWidth string
}

// timeline groups a run's events into its stages and makes the chart of where the time
// and the cost went. A "stage" event closes each stage of the pipeline the run started
// with: the events before it are that stage's (those of a fan-out or an each included). A
// stage a loop runs again is a new group in the timeline, and one row in the chart. Events
// after the last stage event are of the stage running (or failed). Records made before
// stage events existed are grouped by where each event is written. started is when the
// run started: the first stage's time counts from it.
func timeline(evs []event, started time.Time) ([]stage, []bar) {
	hasStages := false
	for _, e := range evs {
		if e.Type == "stage" {
			hasStages = true
			break
		}
	}
	type agg struct {
		title, at string
		ms        int64
		cost      float64
		callMs    int64
	}
	var order []string
	byKey := map[string]*agg{}
	row := func(key, title, at string) *agg {
		a := byKey[key]
		if a == nil {
			a = &agg{title: title, at: at}
			byKey[key] = a
			order = append(order, key)
		}
		return a
	}
	var stages []stage
	var cur []event
	mark := started
	flush := func(title, at string, end *event) {
		if len(cur) == 0 && end == nil {
			return
		}
		var targets []string
		for _, e := range cur {
			if t := stageName(e); t != "" && !contains(targets, t) {
				targets = append(targets, t)
			}
		}
		if title == "" {
			title = titleOf(targets)
		}
		if at == "" && len(cur) > 0 {
			at = cur[0].At
		}
		st := stage{N: len(stages) + 1, At: at, Title: title}
		a := row(at+"|"+title, title, at)
		for _, e := range cur {
			st.Entries = append(st.Entries, entryOf(e))
			if e.Type == "llm" || e.Type == "tool" { // agent_tool repeats its tool call's time
				a.cost += e.Cost
				a.callMs += e.DurationMs
			}
			if e.Type == "paused" {
				mark = time.Time{} // waiting for a person is no stage's time
			} else if mark.IsZero() {
				mark = e.Time
			}
		}
		if end != nil && !mark.IsZero() && end.Time.After(mark) {
			a.ms += end.Time.Sub(mark).Milliseconds()
		}
		if end != nil {
			mark = end.Time
		}
		if len(st.Entries) > 0 || end != nil {
			stages = append(stages, st)
		}
		cur = cur[:0]
	}
	for _, e := range evs {
		switch {
		case e.Type == "run" || e.Type == "progress":
			continue
		case e.Type == "stage":
			flush(e.Target, e.At, &e)
			continue
		case !hasStages && len(cur) > 0 && cur[len(cur)-1].At != e.At:
			flush("", "", nil)
		}
		cur = append(cur, e)
	}
	flush("", "", nil)
	var maxMs int64
	var maxCost float64
	for _, k := range order {
		a := byKey[k]
		if a.ms == 0 {
			a.ms = a.callMs // no stage events, or a stage still running: its calls' time
		}
		maxMs = max(maxMs, a.ms)
		maxCost = max(maxCost, a.cost)
	}
	var bars []bar
	for _, k := range order {
		a := byKey[k]
		b := bar{Title: a.title, At: a.at, Ms: a.ms, Cost: a.cost, MsLabel: duration(a.ms), CostLabel: money(a.cost)}
		if maxMs > 0 {
			b.MsPct = 100 * float64(a.ms) / float64(maxMs)
		}
		if maxCost > 0 {
			b.CostPct = 100 * a.cost / maxCost
		}
		b.MsWidth, b.CostWidth = pct(b.MsPct), pct(b.CostPct)
		bars = append(bars, b)
	}
	return stages, bars
}

func pct(p float64) string {
	if p > 0 && p < 0.5 {
		p = 0.5 // a sliver stays visible
	}
	return strconv.FormatFloat(math.Round(p*10)/10, 'f', -1, 64) + "%"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// stageName is what names a stage: the agent call or tool call its events are of.
func stageName(e event) string {
	switch e.Type {
	case "llm":
		return e.Target
	case "tool":
		if e.Agent == "" {
			return e.Target
		}
	case "paused":
		return "wait for " + e.Channel
	case "branch":
		return "branch"
	}
	return ""
}

func titleOf(targets []string) string {
	if len(targets) == 0 {
		return "stage"
	}
	if len(targets) > 3 {
		return strings.Join(targets[:3], ", ") + ", …"
	}
	return strings.Join(targets, ", ")
}

// entryOf makes the timeline entry of one event.
func entryOf(e event) entry {
	en := entry{Seq: e.Seq, Type: e.Type, Class: e.Type}
	if e.Item != nil {
		en.Tags = append(en.Tags, fmt.Sprintf("item %d", *e.Item))
	}
	if e.Arm != "" && e.Type != "branch" {
		en.Tags = append(en.Tags, "arm "+e.Arm)
	}
	if e.Attempt > 1 && e.Type != "loop" {
		en.Tags = append(en.Tags, fmt.Sprintf("attempt %d", e.Attempt))
	}
	if e.Mocked {
		en.Tags = append(en.Tags, "mocked")
	}
	add := func(label, value string) {
		if value != "" {
			en.Facts = append(en.Facts, fact{label, value})
		}
	}
	addText := func(t text, ok bool) {
		if ok {
			en.Texts = append(en.Texts, t)
		}
	}
	switch e.Type {
	case "llm":
		en.Head = e.Target
		en.Note = "model call"
		add("model", e.Model)
		if e.Step > 0 {
			add("step", strconv.Itoa(e.Step))
		}
		if e.Usage != nil {
			add("tokens", fmt.Sprintf("%d in, %d out", e.Usage.InputTokens, e.Usage.OutputTokens))
		}
		add("cost", money(e.Cost))
		add("time", duration(e.DurationMs))
		if e.Prompt != "" {
			addText(newText("prompt", e.Prompt, false), true)
		}
		if e.Answer != "" {
			addText(newText("answer", e.Answer, false), true)
		}
		if len(e.ToolCalls) > 0 {
			add("asked for", strings.Join(e.ToolCalls, ", "))
		}
	case "tool":
		en.Head = e.Target
		en.Note = "tool call"
		if e.Agent != "" {
			en.Note = "tool call for " + e.Agent
		}
		add("time", duration(e.DurationMs))
		addText(jsonText("arguments", e.Args))
		addText(jsonText("result", e.Output))
	case "agent_tool":
		en.Head = e.Target
		en.Note = e.Agent + " chose this call"
		en.Class = "agent_tool decision-" + e.Decision
		add("decision", e.Decision)
		add("time", duration(e.DurationMs))
		addText(jsonText("arguments", e.Args))
		if e.Detail != "" {
			addText(newText(detailLabel(e.Decision), e.Detail, false), true)
		}
	case "violation":
		en.Head = "Policy " + e.Policy
		en.Note = "violation"
		add("rule", e.Rule)
		add("phase", e.Phase)
		add("agent", e.Agent)
		add("target", e.Target)
		if e.Message != "" {
			addText(newText("message", e.Message, false), true)
		}
	case "loop":
		en.Head = "Back to " + e.Agent
		en.Note = "loop"
		if e.Attempt > 0 {
			add("pass", strconv.Itoa(e.Attempt))
		}
		if e.Message != "" {
			addText(newText("because", e.Message, true), true)
		}
	case "branch":
		if e.Arm != "" {
			en.Head = "Branch took " + e.Arm
		} else {
			en.Head = "Branch took no arm"
		}
		en.Note = "branch"
		if e.Message != "" {
			addText(newText("message", e.Message, false), true)
		}
	case "paused":
		en.Head = "Paused, waiting for " + e.Channel
		en.Note = "pause"
		addText(jsonText("question", e.Output))
	case "answered":
		en.Head = "Answered on " + e.Channel
		en.Note = "answer"
		addText(jsonText("answer", e.Output))
	default:
		en.Head = e.Target
		en.Note = e.Type
		if e.Message != "" {
			addText(newText("message", e.Message, false), true)
		}
	}
	if e.Error != nil {
		en.Class += " failed"
		add("error", e.Error.Code)
		if e.Error.Message != "" {
			addText(newText("error", e.Error.Message, false), true)
		}
	}
	return en
}

func detailLabel(decision string) string {
	switch decision {
	case "declined":
		return "reason"
	case "refused":
		return "refusal"
	case "error":
		return "error"
	}
	return "detail"
}

// money shows dollars: "$0" for nothing, more digits for fractions of a cent.
func money(d float64) string {
	switch {
	case d == 0:
		return ""
	case d >= 0.01:
		return "$" + strconv.FormatFloat(d, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(d, 'f', 6, 64)
}

// duration shows milliseconds as a person reads them.
func duration(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return durationOf(time.Duration(ms) * time.Millisecond)
}

func durationOf(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
}

// clock shows a time in UTC, to the second.
func clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}
