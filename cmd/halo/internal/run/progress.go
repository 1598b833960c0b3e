package run

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/runtime"
)

// A spinner shows, on one line of a terminal, the tool calls of a run that report progress
// while they run: a turning wheel, the call, and the tool's last message and count. The line
// is redrawn in place a few times a second and erased when no such call runs any more, so it
// never stays behind in what the run prints.
type spinner struct {
	w     io.Writer
	every time.Duration

	mu     sync.Mutex
	calls  map[string]*runningCall // by target, stage and each item
	order  []string                // keys in the order the calls first reported
	frame  int
	drawn  bool // the line holds a drawing
	closed bool
	held   int // questions being asked on the terminal: the line is not drawn

	stop chan struct{}
	done chan struct{}
}

type runningCall struct {
	target  string
	message string
	filled  float64
	total   float64
}

// spinnerFrames turn once a second at the default rate.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// maxSpinnerMessage bounds the tool's message on the line, in runes.
const maxSpinnerMessage = 60

func newSpinner(w io.Writer, every time.Duration) *spinner {
	s := &spinner{w: w, every: every, calls: map[string]*runningCall{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// event takes each event of the run: progress starts or updates a call's line, the call's
// own tool event (it ended) removes it, and the run's end erases the line at once, so the
// result is printed on a clean one. Otherwise the drawing goroutine writes.
func (s *spinner) event(e runtime.Event) {
	key := e.Target + "\x00" + e.At
	if e.Item != nil {
		// The same call, once for each item of a |* each.
		key += "\x00" + strconv.Itoa(*e.Item)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case "progress":
		if e.Progress == nil {
			return
		}
		c := s.calls[key]
		if c == nil {
			c = &runningCall{target: e.Target}
			s.calls[key] = c
			s.order = append(s.order, key)
		}
		c.message, c.filled, c.total = e.Progress.Message, e.Progress.Filled, e.Progress.Total
	case "run", "paused":
		// The run's last event: what comes next is its result, on a clean line.
		s.calls = map[string]*runningCall{}
		s.order = nil
		s.erase()
	case "tool":
		if _, ok := s.calls[key]; ok {
			delete(s.calls, key)
			for i, k := range s.order {
				if k == key {
					s.order = append(s.order[:i], s.order[i+1:]...)
					break
				}
			}
		}
	}
}

func (s *spinner) run() {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.draw()
		}
	}
}

// draw redraws the line: the call that reported first, and how many others run.
func (s *spinner) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.held > 0 {
		return
	}
	if len(s.order) == 0 {
		s.erase()
		return
	}
	c := s.calls[s.order[0]]
	var b strings.Builder
	b.WriteString("\r\x1b[K")
	b.WriteString(spinnerFrames[s.frame%len(spinnerFrames)])
	b.WriteString(" ")
	b.WriteString(terminalText(c.target, 40))
	if msg := terminalText(c.message, maxSpinnerMessage); msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	if c.total > 0 {
		fmt.Fprintf(&b, " (%s/%s)", number(c.filled), number(c.total))
	}
	if n := len(s.order) - 1; n > 0 {
		fmt.Fprintf(&b, " and %d more", n)
	}
	s.frame++
	io.WriteString(s.w, b.String())
	s.drawn = true
}

// erase clears the line; s.mu is held.
func (s *spinner) erase() {
	if s.drawn {
		io.WriteString(s.w, "\r\x1b[K")
		s.drawn = false
	}
}

// hold erases the line and keeps it from being drawn until release is called: a question
// is being asked on the terminal.
func (s *spinner) hold() (release func()) {
	s.mu.Lock()
	s.held++
	s.erase()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		s.held--
		s.mu.Unlock()
	}
}

// close stops drawing and erases the line. It is safe to call twice.
func (s *spinner) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.erase()
	s.mu.Unlock()
	close(s.stop)
	<-s.done
}

func number(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", f), "0"), ".")
}

// terminalText makes text from a tool fit for one terminal line: what a terminal would act on
// is shown as its escape (termsafe), white space runs (newlines and tabs included) become one
// space, and the text is cut to at most n runes.
func terminalText(s string, n int) string {
	var b strings.Builder
	count := 0
	space := false
	for _, r := range termsafe.String(s) {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if count >= n {
			b.WriteString("…")
			return b.String()
		}
		if space {
			b.WriteByte(' ')
			count++
			space = false
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}
