package studio

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTimeline: events are grouped by the stage events that close each stage; a loop's
// second pass is a new group and the same chart row; time between a pause and the answer
// counts for no stage; each items, branch arms, retries and mocks are tagged; records
// without stage events are grouped by place.
func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	item := func(i int) *int { return &i }
	evs := []event{
		{Seq: 1, Type: "llm", Time: at(900), At: "f.halo:3:5", Target: "W.draft", Model: "openai/gpt-4o", Cost: 0.01, DurationMs: 800, Attempt: 2},
		{Seq: 2, Type: "stage", Time: at(1000), At: "f.halo:3:5", Target: "W.draft"},
		{Seq: 3, Type: "tool", Time: at(1100), At: "f.halo:4:5", Target: "T.get", Item: item(0), DurationMs: 50},
		{Seq: 4, Type: "tool", Time: at(1150), At: "f.halo:4:5", Target: "T.get", Item: item(1), DurationMs: 40, Mocked: true},
		{Seq: 5, Type: "stage", Time: at(1200), At: "f.halo:4:5", Target: "T.get"},
		{Seq: 6, Type: "loop", Time: at(1210), At: "f.halo:5:5", Agent: "W", Attempt: 2, Message: "context.data.ok != true"},
		{Seq: 7, Type: "llm", Time: at(1500), At: "f.halo:3:5", Target: "W.draft", Model: "openai/gpt-4o", Cost: 0.02, DurationMs: 280},
		{Seq: 8, Type: "stage", Time: at(1500), At: "f.halo:3:5", Target: "W.draft"},
		{Seq: 9, Type: "paused", Time: at(1600), At: "f.halo:6:5", Channel: "yield", Output: "ok?"},
		{Seq: 10, Type: "branch", Time: at(60000), At: "f.halo:7:5", Arm: "x > 1"},
		{Seq: 11, Type: "llm", Time: at(60300), At: "f.halo:8:9", Arm: "x > 1", Target: "W.fix", Cost: 0.03, DurationMs: 300},
		{Seq: 12, Type: "stage", Time: at(60400), At: "f.halo:7:5", Target: "branch"},
		{Seq: 13, Type: "llm", Time: at(60500), At: "f.halo:9:5", Target: "W.last", DurationMs: 90},
		{Seq: 14, Type: "run", Time: at(60500), Status: "failed"},
	}
	stages, bars := timeline(evs, t0)
	var got []string
	for _, st := range stages {
		var seqs []string
		for _, e := range st.Entries {
			s := fmt.Sprint(e.Seq)
			if len(e.Tags) > 0 {
				s += "[" + strings.Join(e.Tags, ",") + "]"
			}
			seqs = append(seqs, s)
		}
		got = append(got, fmt.Sprintf("%d %s @%s: %s", st.N, st.Title, st.At, strings.Join(seqs, " ")))
	}
	want := []string{
		"1 W.draft @f.halo:3:5: 1[attempt 2]",
		"2 T.get @f.halo:4:5: 3[item 0] 4[item 1,mocked]",
		"3 W.draft @f.halo:3:5: 6 7",
		"4 branch @f.halo:7:5: 9 10 11[arm x > 1]",
		"5 W.last @f.halo:9:5: 13",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("stages:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var rows []string
	for _, b := range bars {
		rows = append(rows, fmt.Sprintf("%s %dms $%.2f %s", b.Title, b.Ms, b.Cost, b.MsWidth))
	}
	// W.draft: 1000 ms (from the start) + 300 ms (its second pass); the branch: from the
	// answer (the first event after the pause) to its stage event, 400 ms; W.last is still
	// going: its calls' 90 ms.
	wantRows := []string{"W.draft 1300ms $0.03 100%", "T.get 200ms $0.00 15.4%", "branch 400ms $0.03 30.8%", "W.last 90ms $0.00 6.9%"}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("chart:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}

	// Without stage events: grouped by place, timed by calls.
	old := []event{evs[0], evs[2], evs[3], evs[6]}
	stages, bars = timeline(old, t0)
	if len(stages) != 3 || len(bars) != 2 || bars[0].Ms != 1080 || bars[1].Ms != 90 {
		t.Errorf("without stage events: %d stages, bars %+v", len(stages), bars)
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
