package agent

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// The attack of issue 27 item 1, as each provider's wire carries it: the model answers
// Sh__run with the command given twice, the second time null. A reader that keeps the last
// value (the policies did) sees no command; one that keeps the first (a tool decoding into a
// struct, where null changes nothing) runs it.
const dupArgs = `{"command":"touch PWN","command":null}`

// dupWire are the providers whose wire passes a key given twice through to Halo (Gemini's
// SDK decodes arguments into a map, which keeps one), each with a reply that calls Sh__run
// with dupArgs and a reply that answers.
var dupWire = []struct {
	name, ref string
	env       func(url string) map[string]string
	call      string
	answer    string
}{
	{"openai", "openai/gpt-4o-mini",
		func(u string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": u + "/v1"}
		},
		`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":null,
		  "tool_calls":[{"id":"call_1","type":"function","function":{"name":"Sh__run","arguments":` + jsonString(dupArgs) + `}}]},"finish_reason":"tool_calls"}],
		  "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
		`{"id":"c2","object":"chat.completion","created":2,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
		  "usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}`},
	{"anthropic", "anthropic/claude-sonnet-4-5",
		func(u string) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": u}
		},
		`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_1","name":"Sh__run","input":` + dupArgs + `}],
		  "stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`,
		`{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],
		  "stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}`},
	{"ollama", "ollama/llama3.1",
		func(u string) map[string]string { return map[string]string{"OLLAMA_HOST": u} },
		`{"model":"llama3.1","created_at":"2026-11-29T10:00:00Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"Sh__run","arguments":` + dupArgs + `}}]},
		  "done_reason":"stop","done":true,"prompt_eval_count":10,"eval_count":5}`,
		`{"model":"llama3.1","created_at":"2026-11-29T10:00:01Z","message":{"role":"assistant","content":"ok"},"done_reason":"stop","done":true,"prompt_eval_count":10,"eval_count":1}`},
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestDuplicateKeyOnTheWire: for each provider, the call with a key given twice never runs,
// whichever policies the agent has (one on the argument, one on every value, an approval),
// no one is asked about it, the model reads why, and the event shows the arguments as the
// model wrote them, not as one decoder read them.
func TestDuplicateKeyOnTheWire(t *testing.T) {
	sets := map[string]policy.Set{
		"named":    {pol(t, "Shell", rule("DenyArgs", "Sh.run", "command", "touch|rm "))},
		"anyValue": {pol(t, "Shell", rule("DenyArgs", "*", "PWN"))},
		"approval": {pol(t, "Shell", rule("ApproveTools", "Sh.run"))},
		"none":     nil,
	}
	for _, wc := range dupWire {
		for setName, set := range sets {
			t.Run(wc.name+"/"+setName, func(t *testing.T) {
				w := &wire{replies: [][]byte{[]byte(wc.call), []byte(wc.answer)}}
				srv := httptest.NewServer(w)
				defer srv.Close()
				prov, id, err := model.Open(wc.ref, model.Config{Env: wc.env(srv.URL), MaxAttempts: 1})
				if err != nil {
					t.Fatal(err)
				}
				var ran []Call
				var events []ToolEvent
				c, err := New(Config{
					Agent: "Fixer", Model: prov, Prompt: "Run the tests.",
					Request:  model.Request{Model: id},
					Tools:    Offer([]Method{{Tool: "Sh", Method: tool.Method{Name: "run", Description: "Run a command."}}}),
					Policies: set,
					Run: func(_ context.Context, call Call) (any, error) {
						ran = append(ran, call)
						return "ran", nil
					},
					Approve: func(_ context.Context, req ApprovalRequest) (Approval, error) {
						t.Errorf("a person was asked about %s %s", req.Call.Target, req.Call.Args)
						return Approval{Approved: true}, nil
					},
					OnTool: func(e ToolEvent) { events = append(events, e) },
				})
				if err != nil {
					t.Fatal(err)
				}
				if out, err := c.Run(context.Background()); err != nil || out != "ok" {
					t.Fatalf("Run = %v, %v", out, err)
				}
				if len(ran) != 0 {
					t.Fatalf("the call ran with %s", ran[0].Args)
				}
				if len(events) != 1 {
					t.Fatalf("%d events", len(events))
				}
				e := events[0]
				if e.Decision != Refused || e.Code != tool.CodeDuplicateKey || e.Target != "Sh.run" || !strings.Contains(e.Detail, `"command" twice`) {
					t.Errorf("event %+v", e)
				}
				var shown string
				if json.Unmarshal(e.Args, &shown) != nil || compact([]byte(shown)) != dupArgs {
					t.Errorf("the event shows %s, not what the model sent", e.Args)
				}
				if len(w.bodies) != 2 {
					t.Fatalf("%d requests", len(w.bodies))
				}
				// The model reads the refusal in its next request.
				want := `the arguments of Sh__run give the key \"command\" twice`
				if !strings.Contains(string(w.bodies[1]), want) {
					t.Errorf("the second request does not tell the model why:\n%s", w.bodies[1])
				}
			})
		}
	}
}
