package agent

import "testing"

func TestParseApproval(t *testing.T) {
	tests := []struct {
		in   any
		want Approval
	}{
		{true, Approval{Approved: true}},
		{false, Approval{}},
		{"approve", Approval{Approved: true}},
		{" Yes ", Approval{Approved: true}},
		{"OK", Approval{Approved: true}},
		{"no", Approval{}},
		{"Deny", Approval{}},
		{"no, write to drafts/ instead", Approval{Reason: "no, write to drafts/ instead"}},
		{map[string]any{"approved": true}, Approval{Approved: true}},
		{map[string]any{"action": "approve"}, Approval{Approved: true}},
		{map[string]any{"status": "approved"}, Approval{Approved: true}},
		{map[string]any{"approved": false, "reason": "too risky"}, Approval{Reason: "too risky"}},
		{map[string]any{"comment": "later"}, Approval{Reason: "later"}},
		{map[string]any{"text": "use staging"}, Approval{Reason: "use staging"}},
		{nil, Approval{}},
		{42.0, Approval{Reason: "42"}},
	}
	for _, tt := range tests {
		if got := ParseApproval(tt.in); got != tt.want {
			t.Errorf("ParseApproval(%#v) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}
