package run

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// TestPrompter: the prompter answers approvals alone, one line each, trimmed; a line is
// read to its end but kept to maxAnswer bytes; at the end of input it stops asking.
func TestPrompter(t *testing.T) {
	long := strings.Repeat("x", 3*maxAnswer)
	var out bytes.Buffer
	p := newPrompter(strings.NewReader(" y \n\n"+long+"\nno, later\r\n"), &out)
	approval := runtime.Interrupt{Channel: runtime.ChannelApproval, Message: "Allow A to call F.w with {}? (policy P)"}
	if _, ok, err := p.ask(context.Background(), runtime.Interrupt{Channel: runtime.ChannelYield, Message: "q?"}); ok || err != nil {
		t.Errorf("a yield was answered: %v %v", ok, err)
	}
	for _, want := range []string{"y", "", long[:maxAnswer], "no, later"} {
		got, ok, err := p.ask(context.Background(), approval)
		if !ok || err != nil || got != want {
			t.Errorf("answer %.20q (%d bytes) %v %v, want %.20q", got, len(got.(string)), ok, err, want)
		}
	}
	if _, ok, err := p.ask(context.Background(), approval); ok || err != nil {
		t.Errorf("at the end of input: %v %v", ok, err)
	}
	if n := strings.Count(out.String(), ApprovalPrompt); n != 5 {
		t.Errorf("asked %d times on the terminal, want 5:\n%s", n, out.String())
	}
	if !strings.HasPrefix(out.String(), approval.Message+"\n"+ApprovalPrompt) {
		t.Errorf("terminal %q", out.String())
	}
	// Once at the end of input, it no longer asks.
	before := out.Len()
	p.ask(context.Background(), approval)
	if out.Len() != before {
		t.Errorf("asked again after the end of input")
	}
}

// TestPrompterCancelled: a cancelled run stops waiting for the answer; the line typed later
// answers the next question instead of being lost to a second reader.
func TestPrompterCancelled(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	p := newPrompter(r, io.Discard)
	approval := runtime.Interrupt{Channel: runtime.ChannelApproval, Message: "m"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok, err := p.ask(ctx, approval); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v %v", ok, err)
	}
	go w.Write([]byte("yes\n"))
	if got, ok, err := p.ask(context.Background(), approval); !ok || err != nil || got != "yes" {
		t.Errorf("next question: %v %v %v", got, ok, err)
	}
}

func TestAutoApprove(t *testing.T) {
	if v, ok, err := autoApprove(context.Background(), runtime.Interrupt{Channel: runtime.ChannelApproval}); v != true || !ok || err != nil {
		t.Errorf("approval: %v %v %v", v, ok, err)
	}
	if _, ok, _ := autoApprove(context.Background(), runtime.Interrupt{Channel: runtime.ChannelYield}); ok {
		t.Errorf("a yield was answered")
	}
}
