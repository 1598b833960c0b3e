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

// A spinner is the live status line halo run shows on a terminal (stderr) while a run goes
// on: a turning wheel, the stage that runs (its number and what it calls), the step its agent
// is at, what it waits on (the tool that runs, its progress message and count when the tool
// reports one, or the model) and for how long. It is redrawn in place a few times a second
// and erased when the run ends (and while a question is asked), so it never stays behind in
// what the run prints.
//
// It learns what runs from the run's marks (a stage begins and ends) and events: an llm event
// ends one model request, with the tool calls it asked for, which the loop then runs in order,
// an agent_tool event ending each; so the call that runs, and since when, is known without
// the runtime saying when a call starts.
type spinner struct {
	w     io.Writer
	every time.Duration
	now   func() time.Time

	mu     sync.Mutex
	calls  map[string]*runningCall // calls that report progress, by target, stage and item
	order  []string                // keys in the order the calls first reported
	frame  int
	drawn  bool // the line holds a drawing
	closed bool
	held   int // questions being asked on the terminal: the line is not drawn

	pipeline string    // the run's pipeline, until a stage begins
	since    time.Time // when the run, or the stage, began
	stage    *stageLine
	// agent and step are the agent of the last model request and its step; pending are the
	// calls that request asked for, next the one that runs (len(pending): the model is asked
	// again); doing is what runs now ("Tests.run", "model"), since when it began.
	agent   string
	step    int
	pending []string
	next    int
	doing   string
	started time.Time

	stop chan struct{}
	done chan struct{}
}

type stageLine struct {
	index  int
	target string
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
	s := &spinner{w: w, every: every, now: time.Now, calls: map[string]*runningCall{}, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run()
	return s
}

// mark takes the run's marks: the run and each stage of its pipeline beginning and ending.
func (s *spinner) mark(m runtime.Mark) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case m.Kind == "run" && !m.End:
		s.pipeline, s.since = m.Pipeline, s.now()
	case m.Kind == "stage" && !m.End:
		s.stage = &stageLine{index: m.Index, target: m.Target}
		s.since = s.now()
		s.agent, s.step, s.pending, s.next, s.doing = "", 0, nil, 0, ""
	case m.Kind == "stage":
		s.stage, s.doing, s.pending, s.since = nil, "", nil, s.now()
	}
}

// event takes each event of the run: an llm event says which calls its model asked for, an
// agent_tool event that one of them ended; progress starts or updates a call's progress, the
// call's own tool event (it ended) removes it; and the run's end erases the line at once, so
// the result is printed on a clean one. Otherwise the drawing goroutine writes.
func (s *spinner) event(e runtime.Event) {
	key := e.Target + "\x00" + e.At
	if e.Item != nil {
		// The same call, once for each item of a |* each.
		key += "\x00" + strconv.Itoa(*e.Item)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case "llm":
		s.agent, s.step = e.Agent, e.Step
		s.pending, s.next = nil, 0
		for _, name := range e.ToolCalls {
			s.pending = append(s.pending, targetOf(name))
		}
		s.doing = ""
		if len(s.pending) > 0 {
			s.doing, s.started = s.pending[0], s.now()
		}
	case "agent_tool":
		if s.doing == "" {
			return
		}
		s.next++
		s.started = s.now()
		if s.next < len(s.pending) {
			s.doing = s.pending[s.next]
		} else {
			// Every call of the reply answered: the model is asked again.
			s.doing, s.step = "model", s.step+1
		}
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
		s.pipeline, s.stage, s.doing, s.pending = "", nil, "", nil
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

// targetOf turns a function name the model used ("Code__read") back into the target it
// stands for ("Code.read"), for the line.
func targetOf(function string) string {
	if t, m, ok := strings.Cut(function, "__"); ok && t != "" && m != "" {
		return t + "." + m
	}
	return function
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

// draw redraws the line: where the run is, then what it waits on and for how long; a call
// that reports progress shows its message and count, and how many others do.
func (s *spinner) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.held > 0 {
		return
	}
	line := s.line()
	if line == "" {
		s.erase()
		return
	}
	io.WriteString(s.w, "\r\x1b[K"+spinnerFrames[s.frame%len(spinnerFrames)]+" "+line)
	s.frame++
	s.drawn = true
}

// line is the status line's text after the wheel, "" when there is nothing to show; s.mu
// is held.
func (s *spinner) line() string {
	var parts []string
	where := ""
	if s.stage != nil {
		where = fmt.Sprintf("%d. %s", s.stage.index+1, terminalText(s.stage.target, 40))
	} else if s.pipeline != "" {
		where = terminalText(s.pipeline, 40)
	}
	progress, progressOf := "", ""
	if len(s.order) > 0 {
		c := s.calls[s.order[0]]
		progressOf = c.target
		progress = terminalText(c.target, 40)
		if msg := terminalText(c.message, maxSpinnerMessage); msg != "" {
			progress += ": " + msg
		}
		if c.total > 0 {
			progress += fmt.Sprintf(" (%s/%s)", number(c.filled), number(c.total))
		}
		if n := len(s.order) - 1; n > 0 {
			progress += fmt.Sprintf(" and %d more", n)
		}
		if s.stage != nil && c.target == s.stage.target {
			// The stage's own call: said once.
			where, progress = fmt.Sprintf("%d. %s", s.stage.index+1, progress), ""
		}
	}
	if where != "" {
		parts = append(parts, where)
	}
	if s.step > 0 && s.stage != nil {
		if strings.HasPrefix(s.stage.target, s.agent+".") {
			parts = append(parts, fmt.Sprintf("step %d", s.step))
		} else {
			parts = append(parts, fmt.Sprintf("%s step %d", terminalText(s.agent, 40), s.step))
		}
	}
	since := s.since
	if s.doing != "" && s.stage != nil {
		if s.doing != progressOf {
			// (A call that reports progress is named by its progress.)
			parts = append(parts, terminalText(s.doing, 40))
		}
		since = s.started
	}
	if progress != "" {
		parts = append(parts, progress)
	}
	if len(parts) == 0 {
		return ""
	}
	line := strings.Join(parts, " · ")
	if !since.IsZero() {
		line += " " + elapsed(s.now().Sub(since))
	}
	return line
}

// elapsed says how long something has run: tenths of a second under ten seconds, then
// seconds, then minutes and seconds.
func elapsed(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d >= time.Minute:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d >= 10*time.Second:
		return fmt.Sprintf("%ds", int(d/time.Second))
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
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
