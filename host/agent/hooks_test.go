package agent

import (
	"context"
	"errors"
	"testing"

	"halolang.dev/halo/host/policy"
)

// stops is a Hooks that notes each call with its verdict and answers the targets in answer.
type stops struct {
	seen   []string
	answer map[string]any
	err    error
}

func (s *stops) BeforeCall(_ context.Context, c Call, d policy.Decision, st State) (any, bool, error) {
	s.seen = append(s.seen, c.Target+" "+d.Verdict.String())
	if s.err != nil {
		return nil, false, s.err
	}
	v, ok := s.answer[c.Target]
	return v, ok, nil
}

// TestHooksAnswerCalls: Hooks hear every call with the policies' decision before anyone is
// asked; an answer stands in for running the call (no approval asked, the model reads the
// answer), except for a call the policies refused, which never runs.
func TestHooksAnswerCalls(t *testing.T) {
	h := newHarness(t,
		calls(call("c1", "Files__write", `{"path":"a.md"}`), call("c2", "Tests__run", `{"command":"rm -rf /"}`), call("c3", "Files__read", `{"path":"a.md"}`)),
		answer("Done."))
	h.cfg.Policies = policy.Set{
		pol(t, "Careful", rule("ApproveEffects", policy.Ident("write"))),
		pol(t, "Shell", rule("DenyArgs", "Tests.run", "command", "rm")),
	}
	asked := 0
	h.cfg.Approve = func(context.Context, ApprovalRequest) (Approval, error) {
		asked++
		return Approval{Approved: true}, nil
	}
	hk := &stops{answer: map[string]any{"Files.write": map[string]any{"written": true}, "Tests.run": "ran"}}
	h.cfg.Hooks = hk
	if _, err := h.run(t); err != nil {
		t.Fatal(err)
	}
	if got := hk.seen; len(got) != 3 || got[0] != "Files.write needs approval" || got[1] != "Tests.run refused" || got[2] != "Files.read allowed" {
		t.Errorf("seen %v", got)
	}
	if asked != 0 || len(h.ran) != 1 || h.ran[0].Target != "Files.read" {
		t.Errorf("asked %d, ran %+v", asked, h.ran)
	}
	res := h.results(1)
	if res[0].Content != `{"written":true}` || res[0].IsError || res[1].Content == "ran" || !res[1].IsError {
		t.Errorf("results %+v", res)
	}
	if h.events[0].Decision != Skipped || h.events[1].Decision != Refused {
		t.Errorf("events %+v", h.events)
	}
}

// TestHooksErrorStopsTheConversation: a hook's error ends the conversation before the call.
func TestHooksErrorStopsTheConversation(t *testing.T) {
	h := newHarness(t, calls(call("c1", "Files__read", `{"path":"a.md"}`)))
	stop := errors.New("stopped")
	h.cfg.Hooks = &stops{err: stop}
	if _, err := h.run(t); !errors.Is(err, stop) {
		t.Fatalf("err %v", err)
	}
	if len(h.ran) != 0 {
		t.Errorf("ran %+v", h.ran)
	}
}
