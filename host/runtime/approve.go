package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/policy"
)

// An AgentPause is an agent call stopped at a tool call that waits for a person's approval,
// as a paused run's record keeps it (ResumePoint.Agent).
type AgentPause struct {
	// Target is the agent call ("Clerk.work").
	Target string `json:"target"`
	// Start says the call is the pipeline's start value, not the stage at ResumePoint.Stage.
	Start bool `json:"start,omitempty"`
	// System is the system prompt the conversation began with.
	System string `json:"system,omitempty"`
	// Conversation is where the conversation stood: host/agent's State, with the messages
	// in their provider-native form, the calls of the turn in progress and the results given
	// so far. Nil when the call paused before its conversation began (at its tool: T).
	Conversation *agent.State `json:"conversation,omitempty"`
	// Call is the tool call that waits.
	Call WaitingCall `json:"call"`
}

// A WaitingCall is a tool call that waits for approval.
type WaitingCall struct {
	// ID is the call's id in the conversation ("" for a tool: T call).
	ID     string `json:"id,omitempty"`
	Target string `json:"target"`
	// Args are the arguments as the model sent them.
	Args json.RawMessage `json:"args"`
}

// An approvalResume is a run that paused for approval being continued: the agent call that
// waits (taken by agentCall) and the payload that answers its call (taken by approve).
type approvalResume struct {
	pause   *AgentPause
	payload any
	// taken is set once agentCall took the pause; answered once approve used the payload.
	taken, answered bool
}

// approver is the approval hook of an agent call written at at, with the agent's policies.
func (rn *run) approver(at string, set policy.Set) agent.Approver {
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		return rn.approve(ctx, req, at, set)
	}
}

// approve asks about a call a policy puts up for approval. In order: the payload of the
// signal that continues a run paused at this very call; a mock for "Tool.method?", else for
// "approval"; the interrupt handler (channel "approval"). With no answer the run pauses at
// the agent's stage, where a run can pause; elsewhere no one can be asked, and the call
// fails with APPROVAL_NEEDED.
func (rn *run) approve(ctx context.Context, req agent.ApprovalRequest, at string, set policy.Set) (agent.Approval, error) {
	if rp := rn.tools.replay; rp != nil {
		// A replay asks no one: the recorded run's answer to the same call.
		shown := func(a json.RawMessage) string { return quoteArgs(agent.ShowArgs(set, a)) }
		a, err := rp.approval(req.Call.Target, req.Call.Args, rn.place(at), shown)
		if err == nil {
			return a, nil
		}
		if !errors.Is(err, errUnanswered) {
			return agent.Approval{}, &agent.Fatal{Err: err}
		}
		// The recorded run was never answered here: the replay pauses where it paused.
		return agent.Approval{}, rn.unanswered(req, at, set)
	}
	answered := func(a agent.Approval) (agent.Approval, error) {
		rn.record(Recorded{Kind: RecordedApproval, Target: req.Call.Target, At: at, Args: req.Call.Args,
			Answer: map[string]any{"approved": a.Approved, "reason": a.Reason}})
		return a, nil
	}
	if rs := rn.resume; rs != nil && rs.taken && !rs.answered && rs.pause.Call.matches(req.Call) {
		rs.answered = true
		return answered(agent.ParseApproval(rs.payload))
	}
	key := req.Call.Target + "?"
	if rn.mocks().Has(key, "approval") {
		mreq := MockRequest{Target: key, Agent: req.Agent}
		json.Unmarshal(req.Call.Args, &mreq.Args)
		v, _, err := rn.mocks().answer(mreq, key, "approval")
		if err != nil {
			return agent.Approval{}, &agent.Fatal{Err: err}
		}
		return answered(agent.ParseApproval(v))
	}
	in := approvalInterrupt(req, at, set)
	answer, ok, err := rn.ask(ctx, in)
	if err != nil {
		return agent.Approval{}, err
	}
	if ok {
		return answered(agent.ParseApproval(answer))
	}
	return agent.Approval{}, rn.unanswered(req, at, set)
}

// unanswered is what a call no one answered does: it pauses the run at the agent's stage,
// where a run can pause; elsewhere no one can be asked.
func (rn *run) unanswered(req agent.ApprovalRequest, at string, set policy.Set) error {
	if rn.where != "" {
		return agent.NoOneToAsk(fmt.Sprintf("no interrupt handler answered, and a run cannot pause %s to wait for one", rn.where))
	}
	in := approvalInterrupt(req, at, set)
	return &errPause{
		info:  PauseInfo{WaitingFor: ChannelApproval, Question: in.Message, Named: in.Named},
		agent: &AgentPause{Call: WaitingCall{ID: req.Call.ID, Target: req.Call.Target, Args: req.Call.Args}},
	}
}

// matches reports whether c is the call w waits for.
func (w WaitingCall) matches(c agent.Call) bool {
	return w.ID == c.ID && w.Target == c.Target && sameJSON(w.Args, c.Args)
}

// sameJSON reports whether a and b are the same JSON value. They are compared decoded: a
// record's JSON escapes <, > and & in strings (\u003c), and spells numbers as it likes.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// quoteJSON shows raw in a message for people: compact JSON on one line, with the escapes
// of <, > and & that JSON encoders write for HTML pages (\u003c; a record's JSON has them)
// spelt as the characters, cut at max bytes on a character boundary. Text that is not JSON
// is shown as it is, cut alike.
func quoteJSON(raw json.RawMessage, max int) string {
	var b bytes.Buffer
	s := string(raw)
	if json.Compact(&b, raw) == nil {
		s = unescapeHTML(b.Bytes())
	}
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// unescapeHTML spells \u003c, \u003e and \u0026 in valid JSON as <, > and &. In valid JSON
// every backslash is in a string and begins an escape, so escapes are read two bytes at a
// time and no other escape (\\u003c is a backslash, then text) is mistaken for one.
func unescapeHTML(j []byte) string {
	if !bytes.Contains(j, []byte(`\u00`)) {
		return string(j)
	}
	out := make([]byte, 0, len(j))
	for i := 0; i < len(j); i++ {
		if j[i] != '\\' || i+1 >= len(j) {
			out = append(out, j[i])
			continue
		}
		if j[i+1] == 'u' && i+6 <= len(j) {
			switch strings.ToLower(string(j[i+2 : i+6])) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, j[i], j[i+1]), i+1
	}
	return string(out)
}

// Bounds of what an approval's message shows of each argument, in characters: a value whose
// JSON is at most maxShownValue long is shown whole, a longer one cut to shownPiece with its
// length said; a name is cut at maxShownName. Named.args has every argument in full.
const (
	maxShownValue = 200
	shownPiece    = 160
	maxShownName  = 64
)

// approvalInterrupt is the request an approval puts to the interrupt handler: the message
// a person reads, and named {target, args, policy, agent}. The arguments are shown as
// events show them: with the agent's Redact rules applied, withheld on a Block match.
func approvalInterrupt(req agent.ApprovalRequest, at string, set policy.Set) Interrupt {
	shown := req.Call.Shown(set)
	var args any
	if json.Unmarshal(shown, &args) != nil {
		args = string(shown)
	}
	return Interrupt{
		Channel: ChannelApproval,
		Message: fmt.Sprintf("Allow %s to call %s with %s? (policy %s)", req.Agent, req.Call.Target, describeArgs(shown), req.Policy),
		Named:   map[string]any{"target": req.Call.Target, "args": args, "policy": req.Policy, "agent": req.Agent},
		At:      at,
	}
}

// describeArgs is how an approval's message shows a call's arguments (as ShowValue made
// them): every argument's name, in order, each with its value whole when it is short and
// otherwise its first characters and its length, so that no argument, however long, pushes
// another out of the person's sight. What is not an object (a note that the arguments were
// withheld) is quoted as it is, cut alike.
func describeArgs(shown json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(shown))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || obj == nil {
		return quoteJSON(shown, 4*maxShownValue)
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(shownPart(k, maxShownName, maxShownName))
		b.WriteByte(':')
		b.WriteString(shownPart(obj[k], maxShownValue, shownPiece))
	}
	b.WriteByte('}')
	return b.String()
}

// shownPart is v's JSON when it has at most whole characters, else its first piece
// characters (a string's, inside its quotes) and, after them, how long it is.
func shownPart(v any, whole, piece int) string {
	j := string(shownJSON(v))
	n := utf8.RuneCountInString(j)
	if n <= whole {
		return j
	}
	if s, ok := v.(string); ok {
		n = utf8.RuneCountInString(s)
		q := shownJSON(firstRunes(s, piece))
		return fmt.Sprintf("%s…\" (%d characters)", q[:len(q)-1], n)
	}
	return fmt.Sprintf("%s… (%d characters)", firstRunes(j, piece), n)
}

// firstRunes is the first n characters of s.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// shownJSON is v as JSON for people (agent.ShownJSON), null when it cannot be encoded.
func shownJSON(v any) []byte {
	b, err := agent.ShownJSON(v)
	if err != nil {
		return []byte(`null`)
	}
	return b
}
