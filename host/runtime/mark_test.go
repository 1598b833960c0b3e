package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// Marks tell a run and each stage of its own pipeline beginning and ending, in order; the
// stages of a called pipeline or a branch arm have none; a failed stage's end mark says why,
// a paused one's does not.
func TestMarks(t *testing.T) {
	var mu sync.Mutex
	var marks []string
	rt := load(t, `
tool T : Fake()
pipeline P(x: String) -> Result:
  x |> T.work() |> Q(y: x) |> branch { "true": T.work() |> T.work() } |> T.fail()
pipeline Q(y: String) -> Result:
  y |> T.work() |> T.work()
`, runtime.Config{Tools: registry(t, &fakeProvider{methods: map[string]func(context.Context, map[string]any) (any, error){
		"work": func(context.Context, map[string]any) (any, error) { return "ok", nil },
		"fail": func(context.Context, map[string]any) (any, error) { return nil, fmt.Errorf("no") },
	}}, nil), OnMark: func(ctx context.Context, m runtime.Mark) {
		mu.Lock()
		defer mu.Unlock()
		s := m.Kind + " " + map[bool]string{false: "begin", true: "end"}[m.End]
		if m.Kind == "stage" {
			s += fmt.Sprintf(" %d %s %s", m.Index, m.Op, m.Target)
		} else {
			s += " " + m.Pipeline + " " + string(m.Status)
		}
		if m.Error != nil {
			s += " " + m.Error.Code
		}
		if m.RunID == "" || m.Time.IsZero() || ctx == nil {
			t.Errorf("mark %+v lacks its run, time or context", m)
		}
		marks = append(marks, s)
	}})
	res := run(t, rt, "P", map[string]any{"x": "a"})
	if res.Status != runtime.Failed {
		t.Fatalf("status %s", res.Status)
	}
	want := strings.Join([]string{
		"run begin P ",
		"stage begin 0 |> T.work", "stage end 0 |> T.work",
		"stage begin 1 |> Q", "stage end 1 |> Q",
		"stage begin 2 |> branch ", "stage end 2 |> branch ",
		"stage begin 3 |> T.fail", "stage end 3 |> T.fail INTERNAL",
		"run end P failed INTERNAL",
	}, "\n")
	if got := strings.Join(marks, "\n"); got != want {
		t.Errorf("marks:\n%s\nwant:\n%s", got, want)
	}

	// A paused stage ends without an error; the resumed run begins marked resumed.
	marks = nil
	var resumed []bool
	rt = load(t, `
pipeline Ask(x: String) -> Result:
  x |! yield("Go on?") |> System.Value("done")
`, runtime.Config{Store: newStore(), OnMark: func(ctx context.Context, m runtime.Mark) {
		if m.Kind == "run" && !m.End {
			resumed = append(resumed, m.Resumed)
		}
		if m.End && m.Error != nil {
			t.Errorf("mark %+v has an error", m)
		}
	}})
	res = run(t, rt, "Ask", map[string]any{"x": "a"})
	if res.Status != runtime.Paused {
		t.Fatalf("status %s", res.Status)
	}
	if _, err := rt.Resume(context.Background(), res.RunID, "yes"); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(resumed) != "[false true]" {
		t.Errorf("resumed flags %v", resumed)
	}
}
