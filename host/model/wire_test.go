package model

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	openai "github.com/sashabaranov/go-openai"
)

// wireBody returns the body p sends for req.
func wireBody(t *testing.T, p Provider, req Request) []byte {
	t.Helper()
	var b body
	var err error
	switch p := p.(type) {
	case *openAIProvider:
		b, err = p.body(req)
	case *anthropicProvider:
		_, b, err = p.body(req)
	case *geminiProvider:
		b, err = p.body(req)
	case *ollamaProvider:
		b, err = p.body(req)
	default:
		t.Fatalf("no body for %T", p)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b.bytes()) {
		t.Fatalf("%T sent a body that is not JSON: %s", p, b.bytes())
	}
	return b.bytes()
}

// wireConversation is a tool conversation of every kind of message: a prompt, an assistant
// message with text and calls, tool results (one failed) with a note, a correction, and an
// assistant message in the provider's native form.
func wireConversation(provider string) []Message {
	msgs := []Message{
		{Role: User, Text: "Fix <the> tests & go."},
		{Role: Assistant, Text: "Reading.", ToolCalls: []ToolCall{{ID: "c1", Name: "Files__read", Args: json.RawMessage(`{"path":"a.ts"}`)}, {ID: "c2", Name: "Tests__run", Args: json.RawMessage(`{}`)}}},
		{Role: Tool, ToolResults: []ToolResult{{CallID: "c1", Name: "Files__read", Content: strings.Repeat("export const x = 1;\n", 50)}, {CallID: "c2", Name: "Tests__run", Content: "exit 1", IsError: true}}, Text: "Steps are used up."},
		{Role: User, Text: "Answer again, fixing that."},
	}
	switch provider {
	case Anthropic:
		msgs = append(msgs, Message{Role: Assistant, Text: "Done.", Native: &Native{Provider: Anthropic, Data: json.RawMessage(
			`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)}})
	case Gemini:
		msgs = append(msgs, Message{Role: Assistant, Text: "Done.", Native: &Native{Provider: Gemini, Data: json.RawMessage(
			`{"parts":[{"text":"Done.","thoughtSignature":"c2ln"}],"role":"model"}`)}})
	default:
		msgs = append(msgs, Message{Role: Assistant, Text: "Done."})
	}
	return append(msgs, Message{Role: User, Text: "Thanks."})
}

// TestWireEncodesEachMessageOnce: with a Wire, each request of a growing conversation sends
// exactly the body a request without one sends, and the bytes of the messages an earlier
// request carried are the ones it encoded, not encoded again. A conversation whose earlier
// message changed is encoded afresh.
func TestWireEncodesEachMessageOnce(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "k", "OPENROUTER_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "GEMINI_API_KEY": "k"}
	tools := []ToolDef{{Name: "Files__read", Description: "Read a file.", Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}, {Name: "Tests__run"}}
	for _, name := range []string{OpenAI, OpenRouter, Anthropic, Gemini, Ollama} {
		t.Run(name, func(t *testing.T) {
			p, err := New(name, Config{Env: env})
			if err != nil {
				t.Fatal(err)
			}
			msgs := wireConversation(name)
			temp := 0.0
			var w Wire
			var seen []*byte
			for n := 1; n <= len(msgs); n++ {
				req := Request{Model: "m", System: "You fix <things>.", Messages: msgs[:n], Tools: tools, Temperature: &temp, MaxTokens: 100}
				if n == len(msgs) {
					req.ToolChoice = ToolNone
				}
				fresh := wireBody(t, p, req)
				req.Wire = &w
				if got := wireBody(t, p, req); !bytes.Equal(got, fresh) {
					t.Fatalf("request %d with a Wire:\n%s\nwithout:\n%s", n, got, fresh)
				}
				for i := range seen {
					if len(w.parts[i]) > 0 && &w.parts[i][0] != seen[i] {
						t.Errorf("request %d encoded message %d again", n, i)
					}
				}
				seen = seen[:0]
				for _, part := range w.parts {
					var first *byte
					if len(part) > 0 {
						first = &part[0]
					}
					seen = append(seen, first)
				}
			}
			if len(w.parts) != len(msgs) {
				t.Fatalf("the Wire holds %d messages, want %d", len(w.parts), len(msgs))
			}
			changed := append([]Message(nil), msgs...)
			changed[1].Text = "Reading again."
			req := Request{Model: "m", Messages: changed, Tools: tools}
			fresh := wireBody(t, p, req)
			req.Wire = &w
			if got := wireBody(t, p, req); !bytes.Equal(got, fresh) || !bytes.Contains(got, []byte("Reading again.")) {
				t.Errorf("a changed message was sent from the Wire's old bytes:\n%s", got)
			}
		})
	}
}

// The bytes encode asks an SDK's value for are those json.Marshal writes for it.
func TestEncodeIsMarshal(t *testing.T) {
	native := anthropic.Message{}
	if err := json.Unmarshal([]byte(`{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"a<b"},{"type":"tool_use","id":"t","name":"f","input":{"x":"&"}}]}`), &native); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{
		openai.ChatCompletionMessage{Role: "tool", Content: "x < y & \u2028", ToolCallID: "c"},
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c", Type: "function", Function: openai.FunctionCall{Name: "f", Arguments: `{"a": 1}`}}}},
		anthropic.NewToolResultBlock("c", "x < y & \u2028", true),
		anthropic.NewTextBlock("<b>"),
		native.ToParam(),
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encode(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("encode(%T) = %s, %v\njson.Marshal: %s", v, got, err, want)
		}
	}
}

// Each tool definition is encoded once per adapter, across conversations, and the same list
// run after run is sent as the bytes of the last; a definition whose schema is other bytes is
// encoded anew, and its body says what the new schema says.
func TestToolsEncodedOncePerProcess(t *testing.T) {
	p, err := New(OpenAI, Config{Env: map[string]string{"OPENAI_API_KEY": "k"}})
	if err != nil {
		t.Fatal(err)
	}
	tools := []ToolDef{{Name: "Files__read", Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}, {Name: "Tests__run"}}
	msgs := []Message{{Role: User, Text: "go"}}
	first := wireBody(t, p, Request{Model: "m", Messages: msgs, Tools: tools, Wire: &Wire{}})
	second := wireBody(t, p, Request{Model: "m", Messages: msgs, Tools: append([]ToolDef(nil), tools...), Wire: &Wire{}})
	cache := p.(*openAIProvider).tools
	if !bytes.Equal(first, second) || len(cache.m) != 2 {
		t.Fatalf("two conversations with the same tools: %d definitions encoded\n%s\n%s", len(cache.m), first, second)
	}
	changed := []ToolDef{{Name: "Files__read", Params: json.RawMessage(`{"type":"object","properties":{"file":{"type":"string"}}}`)}}
	if b := wireBody(t, p, Request{Model: "m", Messages: msgs, Tools: changed}); !bytes.Contains(b, []byte(`"file"`)) || len(cache.m) != 3 {
		t.Errorf("a changed schema was sent from the cache (%d definitions):\n%s", len(cache.m), b)
	}
	// The last whole list is reused only for the same definitions: a list of fewer, or the
	// first again after another, is what it says.
	if b := wireBody(t, p, Request{Model: "m", Messages: msgs, Tools: tools[:1]}); bytes.Contains(b, []byte("Tests__run")) {
		t.Errorf("a list of one tool was sent as the last list of two:\n%s", b)
	}
	if again := wireBody(t, p, Request{Model: "m", Messages: msgs, Tools: tools, Wire: &Wire{}}); !bytes.Equal(again, first) {
		t.Errorf("the first tools again, after others:\n%s\nwant\n%s", again, first)
	}
	third := wireBody(t, p, Request{Model: "m", Messages: msgs, Tools: append([]ToolDef(nil), tools...), Wire: &Wire{}})
	if !bytes.Equal(third, first) || cache.last == nil || !bytes.Contains(third, cache.last) {
		t.Errorf("the same tools a third time were not sent as the last list:\n%s", third)
	}
}
