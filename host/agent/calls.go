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

	"halolang.dev/halo/errcode"
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
	if t == nil {
		t = c.hidden[tc.Name]
	}
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
			if t = c.byName[tc.Name]; t == nil {
				t = c.hidden[tc.Name]
			}
		}
	}
	if t == nil {
		ev.Args = ShowArgs(c.cfg.Policies, tc.Args)
		ev.Detail = fmt.Sprintf("no tool named %q", tc.Name)
		return finish(c.unknownTool(tc.Name), true)
	}
	ev.Target = t.Target
	if t.Hidden {
		// Not offered, called anyway: the rule that hides it refuses it, whatever the
		// arguments are.
		args, err := tool.ParseArgs(tc.Args)
		if err != nil {
			ev.Args = showText(c.cfg.Policies, tc.Args)
		} else {
			ev.Args = ShowValue(c.cfg.Policies, args)
		}
		if d := c.cfg.Policies.DecideArgs(t.Target, t.Effect, args); d.Verdict == policy.Refused {
			return c.refused(d, t, &ev, finish)
		}
		// The policies no longer hide it (they cannot change within a conversation): it
		// is still not offered.
		ev.Target, ev.Detail = tc.Name, fmt.Sprintf("no tool named %q", tc.Name)
		return finish(c.unknownTool(tc.Name), true)
	}
	// The arguments are decoded here, once: the policies check this value, the events and
	// the person asked show it, and the tool gets the very bytes it was decoded from.
	args, err := tool.ParseArgs(tc.Args)
	if err != nil {
		// Shown as the model wrote them: no reader's idea of their value.
		ev.Args = showText(c.cfg.Policies, tc.Args)
		ev.Detail = err.Error()
		if errcode.Code(err) == tool.CodeDuplicateKey {
			ev.Decision, ev.Code = Refused, tool.CodeDuplicateKey
			ev.Detail = "the arguments " + err.Error()
			return finish(fmt.Sprintf("Refused: the arguments of %s %s, so what the call would do is unclear. Call it again with each key once.", tc.Name, err), true)
		}
		return finish(fmt.Sprintf("Error: the arguments of %s %s. Call it again with one JSON object of named arguments.", tc.Name, err), true)
	}
	ev.Args = ShowValue(c.cfg.Policies, args)
	if i >= MaxCallsPerTurn {
		// Past the limit a call is still checked, so a refusal is recorded as one, but it
		// does not run.
		if d := c.cfg.Policies.DecideArgs(t.Target, t.Effect, args); d.Verdict == policy.Refused {
			return c.refused(d, t, &ev, finish)
		}
		ev.Detail = fmt.Sprintf("call %d of %d in one reply; at most %d run", i+1, n, MaxCallsPerTurn)
		return finish(fmt.Sprintf("Error: this reply asked for %d tool calls and at most %d run per reply, so this one did not run. Ask for it again in your next reply if you still need it.", n, MaxCallsPerTurn), true)
	}
	call := Call{ID: tc.ID, Target: t.Target, Effect: t.Effect, Args: args.Raw, Value: args.Value}
	d := c.cfg.Policies.DecideArgs(t.Target, t.Effect, args)
	if h := c.cfg.Hooks; h != nil {
		answer, answered, err := h.BeforeCall(ctx, call, d, c.st)
		if err != nil {
			return res, err
		}
		if answered && d.Verdict != policy.Refused {
			ev.Decision, ev.Detail = Skipped, "a person answered the call instead of running it"
			return finish(c.feed(t, Text(answer)), false)
		}
	}
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

// ShowArgs is ShowValue for arguments given as JSON text, read with tool.ParseArgs.
// Arguments it refuses (not JSON, a key given twice) are shown as text, a JSON string of
// what was sent with the set's Redact rules applied as to any text: never as one decoder's
// idea of their value.
func ShowArgs(set policy.Set, raw json.RawMessage) json.RawMessage {
	args, err := tool.ParseArgs(raw)
	if err != nil {
		return showText(set, raw)
	}
	return ShowValue(set, args)
}

// ShowValue is what events and the person asked show of a call's decoded arguments: with no
// policies, the bytes they were decoded from; else the value with the set's Redact rules
// applied, or a note that they were withheld when a Block rule matches them.
func ShowValue(set policy.Set, args tool.Args) json.RawMessage {
	if len(set) == 0 {
		return args.Raw
	}
	shown, err := set.InputValue(args.Value)
	if err != nil {
		return withheld(err)
	}
	b, err := ShownJSON(shown)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// Shown is what events and the person asked show of c's arguments: ShowValue of its
// decoded Value, or ShowArgs of Args for a call made without one.
func (c Call) Shown(set policy.Set) json.RawMessage {
	if c.Value != nil {
		return ShowValue(set, tool.Args{Raw: c.Args, Value: c.Value})
	}
	return ShowArgs(set, c.Args)
}

// showText shows arguments that are not one JSON object as a JSON string of their text, with
// the set's Redact rules applied (withheld on a Block match).
func showText(set policy.Set, raw json.RawMessage) json.RawMessage {
	s := string(raw)
	if len(set) > 0 {
		var err error
		if s, err = set.Input(s); err != nil {
			return withheld(err)
		}
	}
	b, err := ShownJSON(s) // invalid UTF-8 is encoded as \ufffd
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// ShownJSON encodes what people are shown: <, > and & stay as they are (json.Marshal
// escapes them for HTML pages, and an approval's question would read \u003c).
func ShownJSON(v any) (json.RawMessage, error) {
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
