package run

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/tool"
)

func TestTerminalText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"reading the index", "reading the index"},
		{"\x1b]52;c;aGFsbw==\x07 copied", `\u001b]52;c;aGFsbw==\u0007 copied`},
		{"line one\r\nline two\rthree", `line one line two\u000dthree`},
		{"csi \u009b31m red, \u202egnp.exe", `csi \u009b31m red, \u202egnp.exe`},
		{"  spaced\t\tout  ", "spaced out"},
		{strings.Repeat("é", 70), strings.Repeat("é", 60) + "…"},
	}
	for _, tt := range tests {
		if got := terminalText(tt.in, 60); got != tt.want {
			t.Errorf("terminalText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The line shows the first running call and counts the others; the call's tool event takes
// it off, and the run's end erases the line at once.
func TestSpinnerLine(t *testing.T) {
	var out lockedBuffer
	s := newSpinner(&out, time.Hour) // drawn by hand below
	defer s.close()
	s.event(runtime.Event{Type: "progress", Target: "A.x", At: "f:1:1", Progress: &tool.Progress{Filled: 1, Total: 4, Message: "one"}})
	s.event(runtime.Event{Type: "progress", Target: "B.y", At: "f:2:1", Progress: &tool.Progress{Message: "two"}})
	s.draw()
	if got := out.String(); got != "\r\x1b[K⠋ A.x: one (1/4) and 1 more" {
		t.Errorf("line %q", got)
	}
	s.event(runtime.Event{Type: "tool", Target: "A.x", At: "f:1:1"})
	s.draw()
	if got := out.String(); !strings.HasSuffix(got, "\r\x1b[K⠙ B.y: two") {
		t.Errorf("after A.x ended: %q", got)
	}
	s.event(runtime.Event{Type: "run", Status: runtime.Completed})
	if got := out.String(); !strings.HasSuffix(got, "two\r\x1b[K") {
		t.Errorf("the run's end did not erase the line: %q", got)
	}
	s.draw()
	if got := out.String(); !strings.HasSuffix(got, "two\r\x1b[K") {
		t.Errorf("drawn again after the end: %q", got)
	}
}

// The line says where the run is: its pipeline, then the stage that runs; the agent's step
// and the call its model asked for that runs now, the model once every call of a reply has
// ended; a call's progress; and for how long each has run. The run's end erases it.
func TestStatusLine(t *testing.T) {
	var out lockedBuffer
	s := newSpinner(&out, time.Hour) // drawn by hand below
	defer s.close()
	clock := time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return clock }
	tick := func(d time.Duration) string {
		clock = clock.Add(d)
		s.draw()
		got := out.String()
		_, line, _ := strings.Cut(got[strings.LastIndex(got, "\r\x1b[K"):], " ")
		return line
	}
	for _, step := range []struct {
		do   func()
		wait time.Duration
		want string
	}{
		{func() { s.mark(runtime.Mark{Kind: "run", Pipeline: "Fix"}) }, 300 * time.Millisecond, "Fix 0.3s"},
		{func() { s.mark(runtime.Mark{Kind: "stage", Index: 0, Target: "Fixer.fix"}) }, 1200 * time.Millisecond, "1. Fixer.fix 1.2s"},
		{func() {
			s.event(runtime.Event{Type: "llm", Agent: "Fixer", Target: "Fixer.fix", Step: 1, ToolCalls: []string{"Code__read", "Tests__run"}})
		}, 500 * time.Millisecond, "1. Fixer.fix · step 1 · Code.read 0.5s"},
		{func() { s.event(runtime.Event{Type: "agent_tool", Agent: "Fixer", Target: "Code.read"}) }, 12 * time.Second, "1. Fixer.fix · step 1 · Tests.run 12s"},
		{func() {
			s.event(runtime.Event{Type: "progress", Target: "Tests.run", At: "f:3:5", Progress: &tool.Progress{Filled: 3, Total: 8, Message: "3 of 8 pass"}})
		}, 65 * time.Second, "1. Fixer.fix · step 1 · Tests.run: 3 of 8 pass (3/8) 1m17s"},
		{func() {
			s.event(runtime.Event{Type: "tool", Target: "Tests.run", At: "f:3:5"})
			s.event(runtime.Event{Type: "agent_tool", Agent: "Fixer", Target: "Tests.run"})
		}, 800 * time.Millisecond, "1. Fixer.fix · step 2 · model 0.8s"},
		{func() {
			s.event(runtime.Event{Type: "llm", Agent: "Fixer", Target: "Fixer.fix", Step: 2})
			s.mark(runtime.Mark{Kind: "stage", End: true, Index: 0})
			s.mark(runtime.Mark{Kind: "stage", Index: 1, Target: "Tests.run"})
		}, 2 * time.Second, "2. Tests.run 2.0s"},
		{func() {
			s.event(runtime.Event{Type: "progress", Target: "Tests.run", At: "f:4:5", Progress: &tool.Progress{Message: "\x1b[2Jrunning"}})
		}, 0, `2. Tests.run: \u001b[2Jrunning 2.0s`},
	} {
		step.do()
		if got := tick(step.wait); got != step.want {
			t.Errorf("line %q, want %q", got, step.want)
		}
	}
	s.event(runtime.Event{Type: "run", Status: runtime.Completed})
	if got := out.String(); !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("the run's end did not erase the line: %q", got)
	}
}

// While a question is asked on the terminal the line is erased and not drawn; once it is
// answered, the line comes back.
func TestSpinnerHeldForAQuestion(t *testing.T) {
	var out lockedBuffer
	s := newSpinner(&out, time.Hour)
	defer s.close()
	s.event(runtime.Event{Type: "progress", Target: "A.x", At: "f:1:1", Progress: &tool.Progress{Message: "one"}})
	s.draw()
	p := newPrompter(strings.NewReader("y\n"), &out)
	p.hold = s.hold
	before := out.String()
	var during string
	p.out = writerFunc(func(b []byte) (int, error) {
		s.draw() // a tick while the question is on the terminal
		during = out.String()
		return out.Write(b)
	})
	if _, ok, _ := p.ask(t.Context(), runtime.Interrupt{Channel: runtime.ChannelApproval, Message: "m"}); !ok {
		t.Fatal("no answer")
	}
	if during != before+"\r\x1b[K" {
		t.Errorf("the line was drawn while asking: %q", strings.TrimPrefix(during, before))
	}
	s.draw()
	if got := out.String(); !strings.HasSuffix(got, "\r\x1b[K⠙ A.x: one") {
		t.Errorf("not drawn again after the answer: %q", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
