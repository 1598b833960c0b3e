package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// handle answers one call of the turn: find the tool, read the arguments, ask the policies
// (and a person, when they say so), run it, and turn its result into what the model reads.
// It returns an error only when the conversation must stop.
func (c *Conversation) handle(ctx context.Context, tc model.ToolCall, i, n int) (model.ToolResult, error) {
	res := model.ToolResult{CallID: tc.ID, Name: tc.Name}
	ev := ToolEvent{CallID: tc.ID, Target: tc.Name, Decision: Errored}
	finish := func(text string, isError bool) (model.ToolResult, error) {
		res.Content, res.IsError = nonEmpty(text), isError
		ev.Result = res.Content
		if c.cfg.OnTool != nil {
			c.cfg.OnTool(ev)
		}
		return res, nil
	}
	t := c.byName[tc.Name]
	if t == nil && c.cfg.Resolve != nil {
		rt, ok, err := c.cfg.Resolve(ctx, tc.Name)
		if err != nil {
			return res, err
		}
		if ok && rt.Name == tc.Name {
			if err := c.add(rt); err != nil {
				return res, err
			}
			sort.Strings(c.names)
			t = c.byName[tc.Name]
		}
	}
	if t == nil {
		ev.Args = ShowArgs(c.cfg.Policies, tc.Args)
		ev.Detail = fmt.Sprintf("no tool named %q", tc.Name)
		return finish(c.unknownTool(tc.Name), true)
	}
	ev.Target = t.Target
	args, problem := DecodeArgs(tc.Args)
	ev.Args = ShowArgs(c.cfg.Policies, args)
	if problem != "" {
		ev.Detail = problem
		return finish(fmt.Sprintf("Error: the arguments of %s %s. Call it again with one JSON object of named arguments.", tc.Name, problem), true)
	}
	if i >= MaxCallsPerTurn {
		// Past the limit a call is still checked, so a refusal is recorded as one, but it
		// does not run.
		if d := c.cfg.Policies.Decide(t.Target, t.Effect, args); d.Verdict == policy.Refused {
			return c.refused(d, t, &ev, finish)
		}
		ev.Detail = fmt.Sprintf("call %d of %d in one reply; at most %d run", i+1, n, MaxCallsPerTurn)
		return finish(fmt.Sprintf("Error: this reply asked for %d tool calls and at most %d run per reply, so this one did not run. Ask for it again in your next reply if you still need it.", n, MaxCallsPerTurn), true)
	}
	call := Call{ID: tc.ID, Target: t.Target, Effect: t.Effect, Args: args}
	d := c.cfg.Policies.Decide(t.Target, t.Effect, args)
	switch d.Verdict {
	case policy.Refused:
		return c.refused(d, t, &ev, finish)
	case policy.NeedsApproval:
		var a Approval
		err := ErrNoOneToAsk
		if c.cfg.Approve != nil {
			a, err = c.cfg.Approve(ctx, ApprovalRequest{Agent: c.cfg.Agent, Call: call, Policy: d.Policy, Rule: d.Rule, Reason: d.Reason})
		}
		if errors.Is(err, ErrNoOneToAsk) {
			ev.Detail = fmt.Sprintf("needs approval (policy %s: %s), and no one can be asked", d.Policy, d.Reason)
			if c.cfg.OnTool != nil {
				c.cfg.OnTool(ev)
			}
			return res, &Error{Code: CodeApprovalNeeded, Err: err, Message: fmt.Sprintf("%s asked to call %s, which policy %s sends to a person for approval (%s)%s", c.cfg.Agent, t.Target, d.Policy, d.Reason, NoOneBecause(err))}
		}
		if err != nil {
			return res, err
		}
		if !a.Approved {
			ev.Decision, ev.Detail = Declined, a.Reason
			return finish(declined(a.Reason), true)
		}
		ev.Decision = Approved
	default:
		ev.Decision = Allowed
	}
	start := c.cfg.Now()
	out, err := c.cfg.Run(ctx, call)
	ev.Duration = c.cfg.Now().Sub(start)
	if err != nil {
		var fatal *Fatal
		if ctx.Err() != nil || errors.As(err, &fatal) {
			return res, err
		}
		ev.Decision, ev.Detail = Errored, err.Error()
		text := "Error: " + err.Error()
		var te *tool.Error
		if errors.As(err, &te) && len(te.Detail) > 0 {
			text += "\n" + string(te.Detail)
		}
		return finish(c.feed(t, text), true)
	}
	return finish(c.feed(t, Text(out)), false)
}

func (c *Conversation) refused(d policy.Decision, t *Tool, ev *ToolEvent, finish func(string, bool) (model.ToolResult, error)) (model.ToolResult, error) {
	ev.Decision, ev.Detail = Refused, d.Reason
	if v := d.Violation(); v != nil && c.cfg.OnViolation != nil {
		c.cfg.OnViolation(v, t.Target)
	}
	return finish(fmt.Sprintf("Refused by policy %q: %s. Don't try this call again.", d.Policy, d.Reason), true)
}

// feed turns a result into what the model reads: cut at ResultChars, then the agent's input
// policies (Redact replaces; a Block match withholds the whole result).
func (c *Conversation) feed(t *Tool, text string) string {
	text = Cut(text, c.cfg.ResultChars)
	shown, err := c.cfg.Policies.Input(text)
	var v *policy.Violation
	if errors.As(err, &v) {
		if c.cfg.OnViolation != nil {
			c.cfg.OnViolation(v, t.Target)
		}
		return fmt.Sprintf("[Withheld: the result of %s matched policy %q (%s: %s), so it is not shown.]", t.Name, v.Policy, v.Rule, v.Message)
	}
	return shown
}

// ShowArgs is what events show of a call's arguments: the set's Redact rules applied to the
// decoded values (arguments that are not JSON are redacted as text), or a note that they
// were withheld when a Block rule matches them.
func ShowArgs(set policy.Set, args json.RawMessage) json.RawMessage {
	if len(set) == 0 || len(args) == 0 {
		return args
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		s, err := set.Input(string(args))
		if err != nil {
			return withheld(err)
		}
		b, _ := marshalShown(s)
		return b
	}
	shown, err := set.InputValue(v)
	if err != nil {
		return withheld(err)
	}
	b, err := marshalShown(shown)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// marshalShown encodes what people are shown: <, > and & stay as they are (json.Marshal
// escapes them for HTML pages, and an approval's question would read \u003c).
func marshalShown(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func withheld(err error) json.RawMessage {
	msg := "[withheld]"
	var v *policy.Violation
	if errors.As(err, &v) {
		msg = "[withheld: " + v.Message + "]"
	}
	b, _ := json.Marshal(msg)
	return b
}

// unknownTool is the model's message for a function it was not offered.
func (c *Conversation) unknownTool(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Error: there is no tool named %q.", name)
	if len(c.names) == 0 {
		b.WriteString(" No tools are offered here; answer without them.")
		return b.String()
	}
	for _, n := range c.names {
		if strings.EqualFold(n, name) {
			fmt.Fprintf(&b, " Names are case-sensitive: did you mean %q?", n)
			break
		}
	}
	b.WriteString(" You can call: ")
	const most = 100
	for k, n := range c.names {
		if k == most {
			fmt.Fprintf(&b, ", and %d more", len(c.names)-most)
			break
		}
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
	}
	b.WriteString(".")
	return b.String()
}

// DecodeArgs checks the arguments a model sent for a call. It returns them as a JSON object
// ("{}" for none: empty text or null), or a problem for the model to read: text that is not
// JSON, or JSON that is not an object. The model's bytes are untrusted: DecodeArgs never
// panics and returns at most len(raw)+2 bytes.
func DecodeArgs(raw json.RawMessage) (json.RawMessage, string) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{}`), ""
	}
	if t[0] == '"' {
		// An adapter keeps arguments that were not JSON as a JSON string of the text
		// (model.ToolCall.Args); so do models that double-encode.
		var s string
		if json.Unmarshal(t, &s) == nil {
			inner := bytes.TrimSpace([]byte(s))
			if len(inner) > 0 && inner[0] == '{' && json.Valid(inner) {
				return json.RawMessage(inner), ""
			}
			return nil, fmt.Sprintf("are not valid JSON (%s)", excerpt(s))
		}
	}
	if !json.Valid(t) {
		return nil, fmt.Sprintf("are not valid JSON (%s)", excerpt(string(t)))
	}
	if t[0] != '{' {
		return nil, "are " + kind(t[0]) + ", not a JSON object"
	}
	return json.RawMessage(t), ""
}

func kind(b byte) string {
	switch b {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

func excerpt(s string) string {
	const most = 80
	if len(s) <= most {
		return fmt.Sprintf("%q", s)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}

// Text is how a result reads as a tool message: a string as it is, anything else as JSON.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.RawMessage:
		return string(x)
	case []byte:
		return string(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Cut keeps the first n characters of s and says what was left out.
func Cut(s string, n int) string {
	if n <= 0 || len(s) <= n {
		// A string of at most n bytes has at most n characters.
		return s
	}
	// Count rune starts byte by byte: faster than decoding, the same count for valid UTF-8,
	// and a cut that never splits a character.
	count, end := 0, len(s)
	for i := 0; i < len(s); i++ {
		if i == 4*n {
			// No character is longer than 4 bytes: what is left is invalid UTF-8 (a run of
			// continuation bytes), cut by bytes.
			end = i
			break
		}
		if s[i]&0xC0 != 0x80 {
			if count == n {
				end = i
				break
			}
			count++
		}
	}
	if end == len(s) {
		return s
	}
	total := count + utf8.RuneCountInString(s[end:])
	return s[:end] + fmt.Sprintf("\n\n[Cut: the result has %d characters; only the first %d are shown.]", total, n)
}

// nonEmpty keeps a tool message from being empty, which some APIs refuse.
func nonEmpty(s string) string {
	if s == "" {
		return "(empty result)"
	}
	return s
}

func declined(reason string) string {
	if reason == "" {
		return "A person declined this call. Don't try it again; do without it or answer with what you have."
	}
	return fmt.Sprintf("A person declined this call: %s. Don't try it again; do without it or answer with what you have.", reason)
}

func stepsUsed(n int) string {
	return fmt.Sprintf("You have used all %d tool steps, so tools are turned off now. Answer with what you have.", n)
}
