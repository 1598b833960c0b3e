package agent

import (
	"context"
	"errors"
	"strings"
	"testing"

	"halolang.dev/halo/host/policy"
)

// TestParseApproval: the seed's answer words. These approve: true; y, yes, approve,
// approved, allow, ok, okay in any case and with spaces around; objects with approved: true,
// action: "approve" or status: "approved". Anything else declines, with the reason taken
// from an object's reason, comment or text (the first that is not blank), or from a plain
// string, except a bare no, n, reject, deny or decline, which gives none.
func TestParseApproval(t *testing.T) {
	tests := []struct {
		in   any
		want Approval
	}{
		{true, Approval{Approved: true}},
		{false, Approval{}},
		{nil, Approval{}},
		{Approval{Approved: true}, Approval{Approved: true}},
		{&Approval{Reason: "r"}, Approval{Reason: "r"}},
		{(*Approval)(nil), Approval{}},
		{map[string]any{"approved": true}, Approval{Approved: true}},
		{map[string]any{"action": "approve"}, Approval{Approved: true}},
		{map[string]any{"status": "approved"}, Approval{Approved: true}},
		{map[string]any{"approved": true, "reason": "fine"}, Approval{Approved: true}},
		{map[string]any{"approved": false}, Approval{}},
		{map[string]any{"approved": "true"}, Approval{}},
		{map[string]any{"action": "reject"}, Approval{}},
		{map[string]any{"status": "rejected", "reason": "too risky"}, Approval{Reason: "too risky"}},
		{map[string]any{"approved": false, "reason": " too risky "}, Approval{Reason: "too risky"}},
		{map[string]any{"comment": "later"}, Approval{Reason: "later"}},
		{map[string]any{"text": "use staging"}, Approval{Reason: "use staging"}},
		{map[string]any{"reason": "r", "comment": "c", "text": "t"}, Approval{Reason: "r"}},
		{map[string]any{"reason": "  ", "comment": "c", "text": "t"}, Approval{Reason: "c"}},
		{map[string]any{"reason": 3, "text": "t"}, Approval{Reason: "t"}},
		{map[string]any{}, Approval{}},
		{42.0, Approval{Reason: "42"}},
		{[]any{"yes"}, Approval{Reason: "[yes]"}},
		{"no, write to drafts/ instead", Approval{Reason: "no, write to drafts/ instead"}},
		{"  not today  ", Approval{Reason: "not today"}},
		{"yes please", Approval{Reason: "yes please"}},
	}
	for _, w := range []string{"y", "yes", "approve", "approved", "allow", "ok", "okay"} {
		for _, form := range []string{w, strings.ToUpper(w), " " + strings.ToUpper(w[:1]) + w[1:] + "\n"} {
			tests = append(tests, struct {
				in   any
				want Approval
			}{form, Approval{Approved: true}})
		}
	}
	for _, w := range []string{"", " ", "n", "no", "reject", "deny", "decline"} {
		for _, form := range []string{w, strings.ToUpper(w), " " + w + "\n"} {
			tests = append(tests, struct {
				in   any
				want Approval
			}{form, Approval{}})
		}
	}
	for _, tt := range tests {
		if got := ParseApproval(tt.in); got != tt.want {
			t.Errorf("ParseApproval(%#v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestNoOneToAsk: an approver that says why no one can be asked ends the conversation with
// APPROVAL_NEEDED saying why; the plain ErrNoOneToAsk says there is no way here.
func TestNoOneToAsk(t *testing.T) {
	careful := policy.Set{pol(t, "Careful", rule("ApproveEffects", policy.Ident("write")))}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{ErrNoOneToAsk, "Clerk asked to call Files.write, which policy Careful sends to a person for approval (Files.write has effect write (ApproveEffects(write))), and there is no way to ask one here"},
		{NoOneToAsk("no handler answered inside a fan-out"), "Clerk asked to call Files.write, which policy Careful sends to a person for approval (Files.write has effect write (ApproveEffects(write))), but no handler answered inside a fan-out"},
	} {
		h := newHarness(t, calls(call("1", "Files__write", `{}`)))
		h.cfg.Policies = careful
		h.cfg.Approve = func(context.Context, ApprovalRequest) (Approval, error) { return Approval{}, tt.err }
		_, err := h.run(t)
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeApprovalNeeded || e.Message != tt.want || !errors.Is(err, ErrNoOneToAsk) {
			t.Errorf("err = %v\nwant %s", err, tt.want)
		}
		if len(h.ran) != 0 || len(h.events) != 1 || h.events[0].Decision != Errored {
			t.Errorf("ran %d, events %+v", len(h.ran), h.events)
		}
	}
}
