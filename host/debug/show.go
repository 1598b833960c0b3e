package debug

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
)

// Bounds of what is shown of one value, in characters: in a stop's summary, and by p.
const (
	maxSummary = 400
	maxPrinted = 64 << 10
)

// ParseValue reads a value a person typed: JSON when it parses as JSON ("5", "true",
// "{\"a\":1}", "\"text\""), else the text itself.
func ParseValue(s string) any {
	s = strings.TrimSpace(s)
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		return v
	}
	return s
}

// compact shows v as JSON on one line (text as JSON too, so its quotes and escapes show
// where it starts and ends), cut at max characters.
func compact(v any, max int) string {
	b, err := encode(v, "")
	if err != nil {
		return fmt.Sprintf("(a value that is not JSON: %v)", err)
	}
	return cut(string(b), max)
}

// pretty shows v as indented JSON, or text as it is, cut at max characters.
func pretty(v any, max int) string {
	if s, ok := v.(string); ok {
		return cut(s, max)
	}
	b, err := encode(v, "  ")
	if err != nil {
		return fmt.Sprintf("(a value that is not JSON: %v)", err)
	}
	return cut(string(b), max)
}

// encode is JSON for people: <, > and & as they are.
func encode(v any, indent string) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		var x any
		if json.Unmarshal(raw, &x) == nil {
			v = x
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// cut keeps the first max characters of s and says how long it was.
func cut(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == max {
			break
		}
		k++
	}
	return fmt.Sprintf("%s… (%d characters)", s[:i], n)
}

// decisionText says what the policies decided about a call.
func decisionText(d *policy.Decision) string {
	if d == nil {
		return "no policy checks it (the pipeline makes the call itself)"
	}
	switch d.Verdict {
	case policy.Refused:
		return fmt.Sprintf("refused by policy %s: %s; it will not run", d.Policy, d.Reason)
	case policy.NeedsApproval:
		return fmt.Sprintf("needs a person's approval (policy %s: %s)", d.Policy, d.Reason)
	}
	return "allowed"
}

// plainMessages is a conversation as plain values: role, text, the calls asked for, the
// results given.
func plainMessages(msgs []model.Message) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		pm := map[string]any{"role": string(m.Role)}
		if m.Text != "" {
			pm["text"] = m.Text
		}
		if len(m.ToolCalls) > 0 {
			calls := make([]any, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				var args any
				if json.Unmarshal(c.Args, &args) != nil {
					args = string(c.Args)
				}
				calls[j] = map[string]any{"name": c.Name, "args": args}
			}
			pm["toolCalls"] = calls
		}
		if len(m.ToolResults) > 0 {
			res := make([]any, len(m.ToolResults))
			for j, r := range m.ToolResults {
				x := map[string]any{"name": r.Name, "content": r.Content}
				if r.IsError {
					x["isError"] = true
				}
				res[j] = x
			}
			pm["toolResults"] = res
		}
		out[i] = pm
	}
	return out
}

// lastMessage says what the last message of a conversation is, in a line.
func lastMessage(msgs []model.Message) string {
	if len(msgs) == 0 {
		return "(none)"
	}
	m := msgs[len(msgs)-1]
	switch {
	case len(m.ToolResults) > 0:
		parts := make([]string, len(m.ToolResults))
		for i, r := range m.ToolResults {
			parts[i] = r.Name + ": " + r.Content
		}
		return fmt.Sprintf("(%s) %s", m.Role, compact(strings.Join(parts, "; "), maxSummary))
	case len(m.ToolCalls) > 0:
		names := make([]string, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			names[i] = c.Name
		}
		return fmt.Sprintf("(%s) asks for %s", m.Role, strings.Join(names, ", "))
	}
	return fmt.Sprintf("(%s) %s", m.Role, compact(m.Text, maxSummary))
}
