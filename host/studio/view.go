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
		add("cost", costOf(e.Cost, e.Unpriced))
		add("time", duration(e.DurationMs))
		if e.System != "" {
			addText(newText("system", e.System, false), true)
		}
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
		if e.Result != "" {
			addText(newText(readLabel, e.Result, false), true)
		}
	case "retrieval":
		en.Head = "Passages from " + e.Target
		en.Note = "retrieval for " + e.Agent
		add("found", e.Message)
		if e.Prompt != "" {
			addText(newText("query", e.Prompt, false), true)
		}
		addText(jsonText("hits", e.Output))
	case "embed":
		en.Head = e.Target
		en.Note = "embedding"
		if e.Agent != "" {
			en.Note = "embedding for " + e.Agent
		}
		add("model", e.Model)
		add("texts", e.Message)
		if e.Usage != nil {
			add("tokens", fmt.Sprintf("%d in", e.Usage.InputTokens))
		}
		add("cost", money(e.Cost))
		add("time", duration(e.DurationMs))
	case "violation":
		en.Head = "Policy " + e.Policy
		en.Note = "violation"
		add("policy", e.Policy)
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

// readLabel labels what an agent's model read of a call: the result after its policies,
// or the refusal it was told.
const readLabel = "what the model read"

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

// money shows dollars to four places ("$0.0000" for nothing), six for fractions of a cent.
func money(d float64) string {
	switch {
	case d == 0:
		return "$0.0000"
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
