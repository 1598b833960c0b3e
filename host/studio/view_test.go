package studio

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestWaterfall: events are grouped by the stage events that close each stage; a loop's
// second pass is a new stage and the same row of the cost table; the time between a pause
// and the answer is on no axis; an agent's chosen call is one span with its decision, its
// result and the violation that refused it; each items, branch arms, retries and mocks are
// tagged; records without stage events are grouped by place.
func TestWaterfall(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	item := func(i int) *int { return &i }
	evs := []event{
		{Seq: 1, Type: "llm", Time: at(900), At: "f.halo:3:5", Target: "W.draft", Agent: "W", Model: "openai/gpt-4o", Cost: 0.01, DurationMs: 800, Attempt: 2, Step: 1,
			System: "Be brief.", Prompt: "Draft it.", ToolCalls: []string{"T__get", "T__put"}, Usage: &usage{100, 10}},
		{Seq: 2, Type: "tool", Time: at(910), At: "f.halo:3:5", Target: "T.get", Agent: "W", Args: []byte(`{"k":1}`), Output: "raw", DurationMs: 10},
		{Seq: 3, Type: "agent_tool", Time: at(911), At: "f.halo:3:5", Target: "T.get", Agent: "W", Args: []byte(`{"k":1}`), Decision: "allowed", Result: "raw", DurationMs: 10},
		{Seq: 4, Type: "violation", Time: at(912), At: "f.halo:3:5", Target: "T.put", Agent: "W", Policy: "P", Rule: "DenyArgs", Phase: "tool", Message: "no"},
		{Seq: 5, Type: "agent_tool", Time: at(912), At: "f.halo:3:5", Target: "T.put", Agent: "W", Args: []byte(`{"k":2}`), Decision: "refused", Detail: "no", Result: "Refused by policy P"},
		{Seq: 6, Type: "llm", Time: at(990), At: "f.halo:3:5", Target: "W.draft", Agent: "W", Model: "openai/gpt-4o", Cost: 0.002, DurationMs: 70, Step: 2, Answer: "Done.", Usage: &usage{200, 5}},
		{Seq: 7, Type: "stage", Time: at(1000), At: "f.halo:3:5", Target: "W.draft"},
		{Seq: 8, Type: "tool", Time: at(1100), At: "f.halo:4:5", Target: "T.get", Item: item(0), DurationMs: 50},
		{Seq: 9, Type: "tool", Time: at(1150), At: "f.halo:4:5", Target: "T.get", Item: item(1), DurationMs: 40, Mocked: true},
		{Seq: 10, Type: "stage", Time: at(1200), At: "f.halo:4:5", Target: "T.get"},
		{Seq: 11, Type: "loop", Time: at(1210), At: "f.halo:5:5", Agent: "W", Attempt: 2, Message: "context.data.ok != true"},
		{Seq: 12, Type: "llm", Time: at(1500), At: "f.halo:3:5", Target: "W.draft", Agent: "W", Model: "openai/gpt-4o", Cost: 0.02, DurationMs: 280, Step: 1, Prompt: "Again."},
		{Seq: 13, Type: "stage", Time: at(1500), At: "f.halo:3:5", Target: "W.draft"},
		{Seq: 14, Type: "paused", Time: at(1600), At: "f.halo:6:5", Channel: "yield", Output: "ok?"},
		{Seq: 15, Type: "branch", Time: at(60000), At: "f.halo:7:5", Arm: "x > 1"},
		{Seq: 16, Type: "llm", Time: at(60300), At: "f.halo:8:9", Arm: "x > 1", Target: "V.fix", Agent: "V", Model: "ollama/new", DurationMs: 300, Unpriced: true},
		{Seq: 17, Type: "stage", Time: at(60400), At: "f.halo:7:5", Target: "branch"},
		{Seq: 18, Type: "llm", Time: at(60500), At: "f.halo:9:5", Target: "W.last", DurationMs: 90},
		{Seq: 19, Type: "run", Time: at(60500), Status: "failed"},
	}
	v := build(evs, t0, at(60500))
	var got []string
	for _, st := range v.Stages {
		var kids []string
		for _, k := range st.Children {
			s := fmt.Sprint(k.Seqs)
			if len(k.Tags) > 0 {
				s += "[" + strings.Join(k.Tags, ",") + "]"
			}
			kids = append(kids, k.Kind+s)
		}
		got = append(got, fmt.Sprintf("%s %s @%s %s: %s", st.ID, st.Name, st.At, st.Dur, strings.Join(kids, " ")))
	}
	want := []string{
		"s1 W.draft @f.halo:3:5 1.0 s: llm[1][attempt 2] tool[2 3] agent_tool[5 4] llm[6]",
		"s2 T.get @f.halo:4:5 200 ms: tool[8][item 0] tool[9][item 1,mocked]",
		"s3 W.draft @f.halo:3:5 300 ms: loop[11] llm[12]",
		"s4 branch @f.halo:7:5 500 ms: wait[14] branch[15] llm[16][arm x > 1]",
		"s5 W.last @f.halo:9:5 100 ms: llm[18]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The call that ran is one span: the decision, the arguments, the result.
	ran := v.Stages[0].Children[1]
	if ran.Name != "T.get" || ran.Note != "call chosen by W" || !strings.Contains(ran.Class, "decision-allowed") || fmt.Sprint(ran.Facts) != "[{decision allowed} {time 10 ms}]" {
		t.Errorf("the call that ran: %+v", ran)
	}
	var labels []string
	for _, tx := range ran.Texts {
		labels = append(labels, tx.Label)
	}
	if strings.Join(labels, ",") != "arguments,result" { // the model read the result as returned: said once
		t.Errorf("texts of the call that ran: %v", labels)
	}
	// The refused call is one span with its violation.
	refused := v.Stages[0].Children[2]
	if !strings.Contains(refused.Class, "decision-refused") || !strings.Contains(fmt.Sprint(refused.Facts), "{rule DenyArgs}") || !refused.Moment {
		t.Errorf("the refused call: %+v", refused)
	}
	said := 0
	for _, tx := range refused.Texts {
		if tx.Full == "no" {
			said++
		}
	}
	if said != 1 { // the violation's message is the refusal's detail: said once
		t.Errorf("the refusal is said %d times: %+v", said, refused.Texts)
	}
	// The axis leaves the wait out: 60.5 s of clock less the 58.4 s waited.
	if v.AxisEnd != "2.1 s" {
		t.Errorf("axis end %s", v.AxisEnd)
	}
	if w := v.Stages[3].Children[0]; w.Name != "Waited for yield" || w.Dur != "58.4 s" {
		t.Errorf("the wait: %+v", w)
	}
	// Cost and tokens by stage (a loop's pass is the same row) and by model.
	var rows []string
	for _, r := range v.ByStage {
		rows = append(rows, fmt.Sprintf("%s %s %d %s %s", r.Title, r.Time, r.Requests, r.Tokens, r.Cost))
	}
	wantRows := []string{"W.draft 1.3 s 3 300 in, 15 out $0.0320", "T.get 200 ms 0 0 in, 0 out $0.0000", "branch 500 ms 1 0 in, 0 out —", "W.last 100 ms 1 0 in, 0 out $0.0000"}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("by stage:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
	rows = nil
	for _, r := range v.ByModel {
		rows = append(rows, fmt.Sprintf("%s %d %s %s", r.Title, r.Requests, r.Tokens, r.Cost))
	}
	wantRows = []string{"(mocked) 1 0 in, 0 out $0.0000", "ollama/new 1 0 in, 0 out —", "openai/gpt-4o 3 300 in, 15 out $0.0320"}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("by model:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}
	// The conversations: W's first, as its model saw it; its second pass is another.
	if len(v.Conversations) != 4 {
		t.Fatalf("%d conversations", len(v.Conversations))
	}
	var turns []string
	for _, m := range v.Conversations[0].Messages {
		s := m.Role
		if m.HasText {
			s += "=" + m.Text.Full
		}
		for _, c := range m.Calls {
			s += " " + c.Name + ":" + c.Args.Full
		}
		turns = append(turns, s)
	}
	wantTurns := []string{"system=Be brief.", "user=Draft it.", "assistant T.get:{\n  \"k\": 1\n} T.put:{\n  \"k\": 2\n}", "tool=raw", "tool=Refused by policy P", "assistant=Done."}
	if strings.Join(turns, "|") != strings.Join(wantTurns, "|") {
		t.Errorf("conversation:\n%s\nwant:\n%s", strings.Join(turns, "\n"), strings.Join(wantTurns, "\n"))
	}
	if v.Stages[0].Conv != "#c1" || v.Stages[0].Children[1].Conv != "#c1" || v.Stages[2].Conv != "#c2" {
		t.Errorf("conversation links: %q %q %q", v.Stages[0].Conv, v.Stages[0].Children[1].Conv, v.Stages[2].Conv)
	}

	// Without stage events: grouped by place, timed by calls.
	old := []event{evs[0], evs[7], evs[8], evs[11]}
	v = build(old, t0, at(1500))
	if len(v.Stages) != 3 || len(v.ByStage) != 2 {
		t.Errorf("without stage events: %d stages, %d rows", len(v.Stages), len(v.ByStage))
	}
}

// Places link to the source view; a file name may hold colons.
func TestSourceLink(t *testing.T) {
	for at, want := range map[string]string{
		"flows.halo:12:5": "/source?col=5&file=flows.halo&line=12#L12",
		`C:\x\f.halo:3:1`: "/source?col=1&file=C%3A%5Cx%5Cf.halo&line=3#L3",
		"f.halo:7":        "",
		"":                "",
		"f.halo":          "",
		":3:4":            "",
		"f.halo:x:2":      "",
		"<script>:1:1":    "/source?col=1&file=%3Cscript%3E&line=1#L1",
	} {
		if got := sourceLink(at); got != want {
			t.Errorf("sourceLink(%q) = %q, want %q", at, got, want)
		}
	}
}

// TestFold: long text shows its start, whole in a fold.
func TestFold(t *testing.T) {
	if tx := newText("p", "short", false); tx.Short != "" {
		t.Errorf("short text folded: %+v", tx)
	}
	long := strings.Repeat("word ", 200)
	if tx := newText("p", long, false); !strings.HasSuffix(tx.Short, "…") || len([]rune(tx.Short)) != shortRune+1 || tx.Full != long {
		t.Errorf("long text: %q", tx.Short)
	}
	lines := strings.Repeat("line\n", 20)
	if tx := newText("p", lines, false); tx.Short != "line\nline\nline…" {
		t.Errorf("many lines: %q", tx.Short)
	}
}

// A store's retrieval and its embeddings have timeline entries of their own: the store, the
// query and the hits; the embedding's model, texts, tokens and cost (counted in the stage's).
func TestRetrievalEntries(t *testing.T) {
	r := entryOf(event{Type: "retrieval", Agent: "Support", Target: "Handbook", Prompt: "when is my refund paid",
		Output: []any{map[string]any{"source": "docs/refunds.md:1-4", "score": 0.8, "withheld": false}}, Message: "1 in the prompt, 0 withheld"})
	if r.Head != "Passages from Handbook" || r.Note != "retrieval for Support" || len(r.Texts) != 2 || !strings.Contains(r.Texts[1].Full, "docs/refunds.md:1-4") {
		t.Errorf("retrieval entry %+v", r)
	}
	e := entryOf(event{Type: "embed", Agent: "Support", Target: "Notes.embed", Model: "openai/text-embedding-3-small", Message: "1 text",
		Usage: &usage{InputTokens: 12}, Cost: 0.000001, DurationMs: 40})
	facts := fmt.Sprint(e.Facts)
	for _, want := range []string{"openai/text-embedding-3-small", "12 in", "$0.000001", "40 ms"} {
		if !strings.Contains(facts, want) {
			t.Errorf("embed entry lacks %s: %s", want, facts)
		}
	}
}
