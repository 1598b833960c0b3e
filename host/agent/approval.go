package agent

import (
	"fmt"
	"strings"
)

// ParseApproval reads a person's (or a mock's) answer to an approval request. These
// approve: true; the words y, yes, approve, approved, allow, ok and okay (any case); objects
// with approved: true, action: "approve" or status: "approved". Anything else declines, with
// its reason when it gives one: an object's reason, comment or text, or a plain string other
// than a bare no, n, reject, deny or decline. An Approval is taken as it is.
func ParseApproval(v any) Approval {
	switch x := v.(type) {
	case Approval:
		return x
	case *Approval:
		if x == nil {
			return Approval{}
		}
		return *x
	case bool:
		return Approval{Approved: x}
	case string:
		w := strings.ToLower(strings.TrimSpace(x))
		switch w {
		case "y", "yes", "approve", "approved", "allow", "ok", "okay":
			return Approval{Approved: true}
		case "", "n", "no", "reject", "deny", "decline":
			return Approval{}
		}
		return Approval{Reason: strings.TrimSpace(x)}
	case map[string]any:
		if x["approved"] == true || x["action"] == "approve" || x["status"] == "approved" {
			return Approval{Approved: true}
		}
		for _, k := range []string{"reason", "comment", "text"} {
			if s, ok := x[k].(string); ok && strings.TrimSpace(s) != "" {
				return Approval{Reason: strings.TrimSpace(s)}
			}
		}
		return Approval{}
	case nil:
		return Approval{}
	}
	return Approval{Reason: fmt.Sprint(v)}
}
