package run

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"halolang.dev/halo/cmd/halo/internal/termsafe"
	"halolang.dev/halo/host/runtime"
)

// ApprovalPrompt is what halo run asks at a terminal after printing an approval's message.
const ApprovalPrompt = "Allow? [y/N, or say why not] "

// maxAnswer bounds one typed answer, in bytes.
const maxAnswer = 4096

// autoApprove is the interrupt handler of --auto-approve: every approval is approved, and
// every other question is left for the run to pause at.
func autoApprove(_ context.Context, in runtime.Interrupt) (any, bool, error) {
	if in.Channel != runtime.ChannelApproval {
		return nil, false, nil
	}
	return true, true, nil
}

// A prompter asks the person at the terminal about each call that needs approval, one at a
// time (fan-out branches may ask at once): the message, then ApprovalPrompt, then one line.
// What they type is the answer, read by the answer words (y approves; Enter alone declines;
// other text declines with it as the reason). At the end of input it gives no answer, so
// the run pauses as it would without a terminal.
type prompter struct {
	out io.Writer
	// hold, when set, keeps the progress line off the terminal while a question is asked.
	hold func() (release func())

	mu  sync.Mutex
	in  *bufio.Reader
	eof bool
	// reading is a line being read: a read the run stopped waiting for (it was cancelled)
	// is taken up by the next question rather than starting a second reader.
	reading chan line
}

type line struct {
	text string
	err  error
}

func newPrompter(in io.Reader, out io.Writer) *prompter {
	return &prompter{in: bufio.NewReader(in), out: termsafe.Writer(out)}
}

func (p *prompter) ask(ctx context.Context, in runtime.Interrupt) (any, bool, error) {
	if in.Channel != runtime.ChannelApproval {
		return nil, false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eof {
		return nil, false, nil
	}
	if p.hold != nil {
		defer p.hold()()
	}
	// The message quotes the model's arguments: termsafe shows its control characters.
	fmt.Fprintf(p.out, "%s\n%s", in.Message, ApprovalPrompt)
	if p.reading == nil {
		ch := make(chan line, 1)
		p.reading = ch
		// The read cannot be interrupted: when the run is cancelled first (Ctrl-C), it
		// ends with the process, or is taken up by the next question.
		go func() {
			s, err := ReadLine(p.in)
			ch <- line{s, err}
		}()
	}
	var l line
	select {
	case l = <-p.reading:
		p.reading = nil
	case <-ctx.Done():
		fmt.Fprintln(p.out)
		return nil, false, ctx.Err()
	}
	if l.err != nil && l.text == "" {
		// End of input: nobody is there to answer.
		p.eof = true
		fmt.Fprintln(p.out)
		if errors.Is(l.err, io.EOF) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading the answer: %w", l.err)
	}
	return strings.TrimSpace(l.text), true, nil
}

// ReadLine reads one line a person typed, of at most maxAnswer bytes (the rest of a longer
// one is dropped); halo debug reads its commands with it too.
func ReadLine(r *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		chunk, err := r.ReadSlice('\n')
		if b.Len() < maxAnswer {
			b.Write(chunk[:min(len(chunk), maxAnswer-b.Len())])
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		s := strings.TrimRight(b.String(), "\r\n")
		if err != nil && s != "" && errors.Is(err, io.EOF) {
			return s, nil
		}
		return s, err
	}
}
