package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// FuzzToolCall feeds the loop a tool call with any name and any argument bytes, as a hostile
// model would send them. The loop must not panic, must answer the call with a message, run
// it only with a JSON object the policies allowed, show events only valid JSON with Redact
// and Block applied, and record every refusal as a violation.
func FuzzToolCall(f *testing.F) {
	for _, seed := range []struct{ name, args string }{
		{"Files__read", `{"path":"a.md"}`},
		{"Files__read", `{"path":"a.md","path":null}`},
		{"Tests__run", `{"command":"rm -rf /"}`},
		{"Tests__run", `{"command":"ｒｍ -rf /"}`},
		{"Tests__run", `{"command":"bun test"}`},
		{"files__read", `{}`},
		{"Files__read", `null`},
		{"Files__read", `"{\"path\":\"x\"}"`},
		{"Files__read", `{"path": `},
		{"Files__read", `[1,2,3]`},
		{"Files__write", `{"text":"bob@example.com","n":1e400}`},
		{"Files__write", `{"a":{"b":{"c":["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"]}}}`},
		{"Files__write", "{\"p\":\"\\u0000\\ud800\"}"},
		{"", ""},
	} {
		f.Add(seed.name, []byte(seed.args))
	}
	set := policy.Set{
		policy.MustCompile("Shell", []policy.RuleSpec{
			{Name: "DenyArgs", Args: []any{"Tests.run", "command", "^(?!bun test)"}},
			{Name: "DenyArgs", Args: []any{"Files.write", "rm\\s+-rf"}},
		}),
		policy.MustCompile("Safe", []policy.RuleSpec{
			{Name: "Redact", Args: []any{policy.Ident("Email")}},
			{Name: "Block", Args: []any{policy.Ident("APIKey")}},
		}),
	}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		var ran []Call
		var events []ToolEvent
		var violations int
		m := &script{t: t, replies: []model.Response{
			calls(model.ToolCall{ID: "1", Name: name, Args: json.RawMessage(args)}),
			answer("done"),
		}}
		c, err := New(Config{
			Model: m, Prompt: "go", Tools: files(), Policies: set,
			Run: func(_ context.Context, call Call) (any, error) {
				ran = append(ran, call)
				return string(call.Args), nil
			},
			OnTool:      func(e ToolEvent) { events = append(events, e) },
			OnViolation: func(*policy.Violation, string) { violations++ },
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Run(context.Background())
		if err != nil || out != "done" {
			t.Fatalf("Run = %v, %v", out, err)
		}
		msgs := m.reqs[1].Messages
		results := msgs[len(msgs)-1].ToolResults
		if len(results) != 1 || results[0].Content == "" || results[0].CallID != "1" {
			t.Fatalf("results %+v", results)
		}
		if len(events) != 1 {
			t.Fatalf("%d events", len(events))
		}
		e := events[0]
		if len(e.Args) > 0 && !json.Valid(e.Args) {
			t.Errorf("event args are not JSON: %q", e.Args)
		}
		// What the event shows holds nothing the Block rule would stop.
		if _, err := set.Input(string(e.Args)); err != nil {
			t.Errorf("event args show what Block stops (%v): %s", err, e.Args)
		}
		switch e.Decision {
		case Refused:
			if e.Code == tool.CodeDuplicateKey {
				// Refused by Halo itself, before any policy: no violation.
				if len(ran) != 0 || !strings.HasPrefix(results[0].Content, "Refused: ") {
					t.Errorf("a key given twice ran, or was not refused: %+v", results[0])
				}
				break
			}
			if violations == 0 || len(ran) != 0 || !strings.HasPrefix(results[0].Content, "Refused by policy") {
				t.Errorf("refused without a violation, or ran: %+v", results[0])
			}
		case Allowed:
			if len(ran) != 1 {
				t.Fatalf("allowed but ran %d", len(ran))
			}
			if !isObject(ran[0].Args) {
				t.Errorf("ran with arguments that are not a JSON object: %q", ran[0].Args)
			}
			// The tool gets the bytes the policies' value was decoded from, and no two
			// readers of them can differ.
			if a, err := tool.ParseArgs(ran[0].Args); err != nil || !reflect.DeepEqual(a.Value, ran[0].Value) {
				t.Errorf("ran with arguments %q that decode to %v (%v), not the checked %v", ran[0].Args, a.Value, err, ran[0].Value)
			}
		case Errored:
			if len(ran) != 0 || !results[0].IsError {
				t.Errorf("error decision, but ran %d: %+v", len(ran), results[0])
			}
		default:
			t.Errorf("decision %q", e.Decision)
		}
	})
}

// isObject reports whether b is one JSON object (numbers of any size allowed).
func isObject(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj map[string]any
	if dec.Decode(&obj) != nil || obj == nil {
		return false
	}
	_, err := dec.Token()
	return err != nil // nothing after the object
}
