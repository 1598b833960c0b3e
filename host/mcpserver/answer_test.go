package mcpserver

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func answer(id any, res mcp.CallToolResult) mcp.JSONRPCResponse {
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), &res)
}

// sameAnswer fails t unless marshalMessage gives json.Marshal's bytes for msg, and says
// whether the hand-written encoder wrote it.
func sameAnswer(t *testing.T, msg any) bool {
	t.Helper()
	want, err := json.Marshal(msg)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	got, err := marshalMessage(msg)
	if err != nil {
		t.Fatalf("marshalMessage: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("marshalMessage(%#v)\n got %s\nwant %s", msg, got, want)
	}
	_, byHand := appendAnswer(nil, msg)
	return byHand
}

func TestAnswerIsMarshal(t *testing.T) {
	text := func(s string) []mcp.Content { return []mcp.Content{mcp.NewTextContent(s)} }
	meta := func(m map[string]any) *mcp.Meta { return &mcp.Meta{AdditionalFields: m} }
	byHand := []any{
		answer(7, mcp.CallToolResult{Content: text("Hello!")}),
		// Ids as the fast path decodes numbers (float64s), and none.
		answer(7.0, mcp.CallToolResult{Content: text("Hello!")}),
		answer(1e21, mcp.CallToolResult{Content: text("Hello!")}),
		answer(-0.000001, mcp.CallToolResult{Content: text("Hello!")}),
		answer(nil, mcp.CallToolResult{Content: text("Hello!")}),
		answer("id <&> \u2028", mcp.CallToolResult{Result: mcp.Result{Meta: meta(map[string]any{"halo/runId": "4f1c", "halo/status": "completed"})}, Content: text("a\nb \"c\" <d>")}),
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(int64(1)), mcp.CallToolResult{Content: text("by value")}),
		answer(1, mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{}}, Content: nil}),
		answer(1, mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{ProgressToken: "p", AdditionalFields: map[string]any{"progressToken": "theirs", "x": 1.5}}}, Content: []mcp.Content{}}),
		answer(1, mcp.CallToolResult{Result: mcp.Result{Meta: &mcp.Meta{ProgressToken: 3}}, Content: text("")}),
		answer(2, mcp.CallToolResult{Content: text("failed [RUN]\nRun id: 4f1c"), IsError: true}),
		answer(3, mcp.CallToolResult{Result: mcp.Result{ResultType: "complete"}, Content: text("x"),
			StructuredContent: map[string]any{"score": 0.5, "tags": []any{"a", nil}, "<": map[string]any{}}}),
		answer(4, mcp.CallToolResult{Content: []mcp.Content{
			mcp.TextContent{Annotated: mcp.Annotated{Annotations: &mcp.Annotations{Priority: ptr(1.0)}}, Type: "text", Text: "annotated"},
			mcp.TextContent{Meta: meta(map[string]any{"k": "v"}), Type: "text", Text: "with meta"},
			mcp.NewImageContent("aGk=", "image/png"),
			mcp.NewTextContent("plain"),
		}}),
	}
	for _, msg := range byHand {
		if !sameAnswer(t, msg) {
			t.Errorf("%#v went through json.Marshal, want it written by hand", msg)
		}
	}
	// Left to json.Marshal, with the same bytes.
	for _, msg := range []any{
		answer(5, mcp.CallToolResult{Content: text("x"), MultiRoundTripResult: mcp.MultiRoundTripResult{RequestState: "s"}}),
		answer(5, mcp.CallToolResult{Content: text("x"), RawStructuredContent: json.RawMessage(`{"a": 1}`)}),
		mcp.NewJSONRPCResultResponse(mcp.NewRequestId(6), mcp.ListToolsResult{}),
		mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/progress"}},
		map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32700, "message": "not JSON"}},
	} {
		if sameAnswer(t, msg) {
			t.Errorf("%#v was written by hand, want json.Marshal", msg)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// FuzzAnswer: any text, ids and metadata strings are written as json.Marshal writes them.
func FuzzAnswer(f *testing.F) {
	f.Add("Hello!", "4f1c", "completed", int64(1), "", true)
	f.Add("<\u2028>\x00\xff", "\"", "\\", int64(-1), "id", false)
	f.Fuzz(func(t *testing.T, text, runID, status string, n int64, sid string, isError bool) {
		var id any = n
		if sid != "" {
			id = sid
		}
		res := mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, IsError: isError,
			Result: mcp.Result{Meta: &mcp.Meta{AdditionalFields: map[string]any{"halo/runId": runID, "halo/status": status}}}}
		if isError {
			res.StructuredContent = map[string]any{text: status}
		}
		if !sameAnswer(t, answer(id, res)) {
			t.Error("not written by hand")
		}
	})
}
