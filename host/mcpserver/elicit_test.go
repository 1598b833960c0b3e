package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/host/runtime"
)

// person answers elicitations: with action and, when accepting, the answer.
type person struct {
	mu     sync.Mutex
	action mcp.ElicitationResponseAction
	answer any
	asked  []mcp.ElicitationParams
}

func (p *person) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Params)
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: p.action}}
	if p.action == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"answer": p.answer}
	}
	return res, nil
}

// TestElicitYield: when the client can ask its user, a |! yield is asked through it, and
// the run goes on with the answer; declined, the run stays paused for halo resume. Over
// stdio (any version) and over HTTP with protocol 2026-07-28 (the question is a result the
// client answers by calling again); an older client over HTTP cannot be asked, so the run
// pauses.
func TestElicitYield(t *testing.T) {
	type mk func(f *fixture, p *person) *client.Client
	transports := map[string]mk{
		"stdio 2026-07-28": func(f *fixture, p *person) *client.Client { return f.stdio(t, "", client.WithElicitationHandler(p)) },
		"stdio 2025-06-18": func(f *fixture, p *person) *client.Client {
			return f.stdio(t, "2025-06-18", client.WithElicitationHandler(p))
		},
		"http 2026-07-28": func(f *fixture, p *person) *client.Client {
			return f.httpClient(t, HTTPConfig{}, "", client.WithElicitationHandler(p))
		},
	}
	for name, connect := range transports {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, flow, greeter())
			p := &person{action: mcp.ElicitationResponseActionAccept, answer: "yes, ship it"}
			c := connect(f, p)

			res := callTool(t, c, "Publish", map[string]any{"draft": "hi"})
			if res.IsError || textOfResult(res) != `{"answer":"yes, ship it","text":"HI"}` {
				t.Fatalf("accepted: isError %v, %q", res.IsError, textOfResult(res))
			}
			if len(p.asked) != 1 || !strings.HasSuffix(p.asked[0].Message, "asks: Publish HI?") || !strings.HasPrefix(p.asked[0].Message, "Publish (run ") {
				t.Errorf("asked %+v", p.asked)
			}
			runID := res.Meta.AdditionalFields["halo/runId"].(string)
			if rec := f.record(t, runID); rec.Status != runtime.Completed {
				t.Errorf("run %s is %s", runID, rec.Status)
			}

			// An answer that is JSON is used as JSON, as halo resume --payload reads it.
			p.answer = `{"ok": true}`
			res = callTool(t, c, "Publish", map[string]any{"draft": "hi"})
			if textOfResult(res) != `{"answer":{"ok":true},"text":"HI"}` {
				t.Errorf("JSON answer: %q", textOfResult(res))
			}

			for _, action := range []mcp.ElicitationResponseAction{mcp.ElicitationResponseActionDecline, mcp.ElicitationResponseActionCancel} {
				p.action = action
				res = callTool(t, c, "Publish", map[string]any{"draft": "hi"})
				txt := textOfResult(res)
				runID = res.Meta.AdditionalFields["halo/runId"].(string)
				if res.IsError || !strings.HasPrefix(txt, "Paused waiting for yield, run id "+runID) || !strings.Contains(txt, "was "+string(action)) ||
					!strings.Contains(txt, "halo resume flow.halo "+runID) {
					t.Errorf("%s: isError %v, %q", action, res.IsError, txt)
				}
				if rec := f.record(t, runID); rec.Status != runtime.Paused {
					t.Errorf("%s: run %s is %s, want paused", action, runID, rec.Status)
				}
			}
			// The declined run is still there to answer.
			done, err := f.rt.Resume(context.Background(), runID, "later")
			if err != nil || done.Status != runtime.Completed {
				t.Errorf("resume a declined run: %v %+v", err, done)
			}
		})
	}

	t.Run("http 2025-06-18", func(t *testing.T) {
		f := newFixture(t, flow, greeter())
		p := &person{action: mcp.ElicitationResponseActionAccept, answer: "yes"}
		c := f.httpClient(t, HTTPConfig{}, "2025-06-18", client.WithElicitationHandler(p))
		res := callTool(t, c, "Publish", map[string]any{"draft": "hi"})
		if !strings.HasPrefix(textOfResult(res), "Paused waiting for yield") || len(p.asked) != 0 {
			t.Errorf("%q, asked %d times", textOfResult(res), len(p.asked))
		}
	})
}

// TestRequestState: an answer with a request state the server did not make, or of another
// tool, or for a run that no longer waits, continues nothing.
func TestRequestState(t *testing.T) {
	f := newFixture(t, flow, greeter())
	r := f.raw(t)
	r.send(initLine)
	r.next()
	answer := func(id int, tool, state string) map[string]any {
		params := map[string]any{"name": tool, "arguments": map[string]any{"draft": "x"}, "requestState": state,
			"inputResponses": map[string]any{"answer": map[string]any{"action": "accept", "content": map[string]any{"answer": "yes"}}}}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
		r.send(string(b))
		m := r.next()
		res, _ := m["result"].(map[string]any)
		return res
	}
	paused, err := f.rt.Run(context.Background(), "Publish", map[string]any{"draft": "x"})
	if err != nil || paused.Status != runtime.Paused {
		t.Fatal(err, paused)
	}
	good := f.srv.seal(question{Run: paused.RunID, Tool: "Publish", For: "yield"})
	forged := f.srv.seal(question{Run: paused.RunID, Tool: "Publish", For: "yield"})[:10] + "AAAA" + good[14:]
	other, _ := (&Server{key: []byte("another server's key")}).seal(question{Run: paused.RunID, Tool: "Publish", For: "yield"}), 0
	for i, state := range []string{"", "nonsense", forged, other, strings.Repeat("a", 5000) + "." + "b"} {
		res := answer(10+i, "Publish", state)
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "BAD_REQUEST_STATE") {
			t.Errorf("state %.20q: %v", state, res)
		}
	}
	if res := answer(20, "Hello", good); res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "of tool Publish, not Hello") {
		t.Errorf("another tool's state: %v", res)
	}
	if rec := f.record(t, paused.RunID); rec.Status != runtime.Paused {
		t.Fatalf("a refused answer changed the run: %s", rec.Status)
	}
	if res := answer(21, "Publish", good); res["isError"] == true || !strings.Contains(fmt.Sprint(res["content"]), `"answer":"yes"`) {
		t.Errorf("the real state: %v", res)
	}
	// The same answer again: the run no longer waits.
	if res := answer(22, "Publish", good); res["isError"] != true || !strings.Contains(fmt.Sprint(res["content"]), "not paused") {
		t.Errorf("answered twice: %v", res)
	}
}

const nestedFlow = `
pipeline Confirm(x: String) -> JSON:
  x |! yield("Keep {{x}}?") as answer |> System.Value({ x: x, answer: answer })

pipeline All(items: List<String>) -> JSON:
  items |* each Confirm()

pipeline Outer(x: String) -> JSON:
  x |> Confirm()
`

// TestElicitNested: a client asked while the call runs (over stdio, before protocol
// 2026-07-28) is asked even where a run cannot pause: in a called pipeline, in each item of
// a |* each (at once). A client of 2026-07-28 can only be asked where the run pauses, so a
// nested yield fails with NOT_PAUSABLE, as under halo run.
func TestElicitNested(t *testing.T) {
	f := newFixture(t, nestedFlow, nil)
	p := &person{action: mcp.ElicitationResponseActionAccept, answer: "yes"}
	c := f.stdio(t, "2025-06-18", client.WithElicitationHandler(p))
	res := callTool(t, c, "Outer", map[string]any{"x": "a"})
	if res.IsError || textOfResult(res) != `{"answer":"yes","x":"a"}` {
		t.Errorf("Outer: %q", textOfResult(res))
	}
	res = callTool(t, c, "All", map[string]any{"items": []any{"a", "b", "c"}})
	if res.IsError || textOfResult(res) != `[{"answer":"yes","x":"a"},{"answer":"yes","x":"b"},{"answer":"yes","x":"c"}]` {
		t.Errorf("All: %q", textOfResult(res))
	}
	if len(p.asked) != 4 {
		t.Errorf("asked %d times, want 4", len(p.asked))
	}
	// Declined during the call: the run pauses (where it can) and is not asked again.
	p.action, p.asked = mcp.ElicitationResponseActionDecline, nil
	res = callTool(t, c, "Confirm", map[string]any{"x": "a"})
	if txt := textOfResult(res); res.IsError || !strings.Contains(txt, "was declined") || len(p.asked) != 1 {
		t.Errorf("declined: %q, asked %d times", txt, len(p.asked))
	}
	res = callTool(t, c, "Outer", map[string]any{"x": "a"})
	if txt := textOfResult(res); !res.IsError || !strings.Contains(txt, "NOT_PAUSABLE") {
		t.Errorf("declined where the run cannot pause: %q", txt)
	}

	modern := f.stdio(t, "", client.WithElicitationHandler(&person{action: mcp.ElicitationResponseActionAccept, answer: "yes"}))
	res = callTool(t, modern, "Outer", map[string]any{"x": "a"})
	if txt := textOfResult(res); !res.IsError || !strings.Contains(txt, "NOT_PAUSABLE") {
		t.Errorf("2026-07-28, nested: %q", txt)
	}
}

// fakeAsker answers elicitations as a person would, for OnInterrupt.
type fakeAsker struct {
	person
	stdioSession
}

func (a *fakeAsker) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	res, err := a.person.Elicit(ctx, req)
	if err == nil && a.answer == nil {
		res.Content = map[string]any{"approve": false, "reason": "write to drafts/ instead"}
	}
	return res, err
}

// TestOnInterruptApproval: an approval (channel "approval", as issue 14's tool loop asks
// one) goes through the same question: accepted it approves, accepted with approve unset
// it declines with the reason, declined or cancelled it declines without one. A listen is
// not put to a person.
func TestOnInterruptApproval(t *testing.T) {
	f := newFixture(t, flow, greeter())
	a := &fakeAsker{}
	c := &call{s: f.srv, p: f.srv.pipes["Hello"], ask: true, askNow: true, asker: a}
	ctx := context.WithValue(context.Background(), callKey{}, c)
	in := runtime.Interrupt{RunID: "r1", Channel: runtime.ChannelApproval, Message: "Allow Clerk to call Files.write with {...}? (policy Careful)"}
	for _, tc := range []struct {
		action mcp.ElicitationResponseAction
		answer any
		want   string
	}{
		{mcp.ElicitationResponseActionAccept, "ignored", `"approve"`},
		{mcp.ElicitationResponseActionAccept, nil, `{"approved":false,"reason":"write to drafts/ instead"}`},
		{mcp.ElicitationResponseActionDecline, nil, `"no"`},
		{mcp.ElicitationResponseActionCancel, nil, `"no"`},
	} {
		a.action, a.answer, a.asked = tc.action, tc.answer, nil
		got, ok, err := OnInterrupt(ctx, in)
		b, _ := json.Marshal(got)
		if err != nil || !ok || string(b) != tc.want {
			t.Errorf("%s: %s %v %v, want %s", tc.action, b, ok, err, tc.want)
		}
		if len(a.asked) != 1 || a.asked[0].Message != "Hello (run r1): "+in.Message || !strings.Contains(fmt.Sprint(a.asked[0].RequestedSchema), "approve") {
			t.Errorf("asked %+v", a.asked)
		}
	}
	a.asked = nil
	if _, ok, _ := OnInterrupt(ctx, runtime.Interrupt{RunID: "r1", Channel: "orders", Message: "waiting"}); ok || len(a.asked) != 0 {
		t.Error("a listen channel was put to the person")
	}
	if _, ok, _ := OnInterrupt(context.Background(), in); ok {
		t.Error("an interrupt outside a call got an answer")
	}
}

// brokenAsker is a client whose elicitation fails.
type brokenAsker struct {
	person
}

func (b *brokenAsker) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	b.person.Elicit(ctx, req)
	return nil, fmt.Errorf("no screen to ask on")
}

// TestElicitFails: a client that declares elicitation but fails to ask gets the paused
// result, and is asked once.
func TestElicitFails(t *testing.T) {
	f := newFixture(t, flow, greeter())
	b := &brokenAsker{}
	c := f.stdio(t, "2025-06-18", client.WithElicitationHandler(b))
	res := callTool(t, c, "Publish", map[string]any{"draft": "hi"})
	if res.IsError || !strings.HasPrefix(textOfResult(res), "Paused waiting for yield") || len(b.asked) != 1 {
		t.Errorf("%q, asked %d times", textOfResult(res), len(b.asked))
	}
}
