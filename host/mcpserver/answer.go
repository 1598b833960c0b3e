package mcpserver

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"halolang.dev/halo/internal/jsonappend"
)

// marshalMessage encodes a message halo mcp writes on stdout. A tools/call answer (a
// JSON-RPC response holding a CallToolResult) is written by hand, byte for byte as
// json.Marshal writes it: mcp-go's CallToolResult.MarshalJSON builds a map of the result and
// then reflects over it, a tenth of halo mcp's processor time per call. Any other message,
// and an answer with fields halo never sets (input requests of a multi-round trip), goes
// through json.Marshal.
func marshalMessage(msg any) ([]byte, error) {
	if b, ok := appendAnswer(make([]byte, 0, 256), msg); ok {
		return b, nil
	}
	return json.Marshal(msg)
}

// appendAnswer appends msg when it is a tools/call answer it can write; false otherwise.
func appendAnswer(b []byte, msg any) ([]byte, bool) {
	resp, ok := msg.(mcp.JSONRPCResponse)
	if !ok {
		return b, false
	}
	var res *mcp.CallToolResult
	switch r := resp.Result.(type) {
	case *mcp.CallToolResult:
		res = r
	case mcp.CallToolResult:
		res = &r
	}
	if res == nil || len(res.InputRequests) > 0 || res.RequestState != "" || len(res.RawStructuredContent) > 0 {
		return b, false
	}
	b = append(b, `{"jsonrpc":`...)
	b = jsonappend.String(b, resp.JSONRPC)
	b = append(b, `,"id":`...)
	// RequestId.MarshalJSON is json.Marshal of the id's value (reflection, a tenth of this
	// function's time).
	if b, ok = jsonappend.Value(b, resp.ID.Value()); !ok {
		return b, false
	}
	b = append(b, `,"result":{`...)
	// The keys in the order of CallToolResult.MarshalJSON's map: sorted.
	if res.Meta != nil {
		b = append(b, `"_meta":`...)
		fields := res.Meta.AdditionalFields
		if res.Meta.ProgressToken != nil {
			fields = make(map[string]any, len(fields)+1)
			fields["progressToken"] = res.Meta.ProgressToken
			for k, v := range res.Meta.AdditionalFields { // as Meta.MarshalJSON: these win
				fields[k] = v
			}
		}
		if fields == nil {
			fields = map[string]any{}
		}
		if b, ok = jsonappend.Object(b, fields); !ok {
			return b, false
		}
		b = append(b, ',')
	}
	b = append(b, `"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if t, isText := c.(mcp.TextContent); isText && t.Annotations == nil && t.Meta == nil {
			b = append(b, `{"type":`...)
			b = jsonappend.String(b, t.Type)
			b = append(b, `,"text":`...)
			b = jsonappend.String(b, t.Text)
			b = append(b, '}')
		} else if b, ok = jsonappend.Value(b, c); !ok {
			return b, false
		}
	}
	b = append(b, ']')
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if res.ResultType != "" {
		b = append(b, `,"resultType":`...)
		b = jsonappend.String(b, string(res.ResultType))
	}
	if res.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		if b, ok = jsonappend.Value(b, res.StructuredContent); !ok {
			return b, false
		}
	}
	return append(b, "}}"...), true
}
