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
