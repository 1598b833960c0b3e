package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
)

// The fast path. mcp-go's HandleMessage decodes a tools/call five times before the handler
// runs (the message's head, its protocol era, its _meta twice, the request, whose params
// decode their arguments once more), and over HTTP its handlePost decodes it twice more and
// starts a goroutine per request. That was a third of the server's processor time per call.
//
// A tools/call as clients send it most of the time, and whose answer cannot need anything
// but the handler, is decoded here once and given to the same handler mcp-go would call,
// with the same request; anything else goes through mcp-go. "Cannot need" is strict:
//
//   - the message has only jsonrpc "2.0", a string or number id, method "tools/call" and
//     params, and params have only name (one of this server's tools), arguments and a _meta
//     holding at most a progressToken: no task, no request state or input responses (a
//     multi-round trip), no protocol version (a 2026-07-28 request), nothing mcp-go would
//     read and this path would not;
//   - the client cannot be asked for input (no elicitation capability), so the handler never
//     answers with input requests that mcp-go would resolve;
//   - over HTTP, no MCP-Protocol-Version header but a valid version before 2026-07-28.
//
// This server configures no hooks, tracer, request logger, input or output validation,
// session tools, tool filters or task tools, so for such a message mcp-go would do nothing
// more than call the handler under WithRecovery and answer with its result. The tests
// (fastcall_test.go) send each kind of message both ways and compare the answers byte for
// byte.

// A fastCall is a tools/call the fast path serves.
type fastCall struct {
	// id is the JSON-RPC id as mcp-go decodes it (a string or a float64), for the answer.
	id any
	// rawID is the id as the client wrote it.
	rawID json.RawMessage
	p     *pipeline
	req   mcp.CallToolRequest
}

type fastMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  *fastParams     `json:"params"`
}

type fastParams struct {
	Name      string                     `json:"name"`
	Arguments json.RawMessage            `json:"arguments"`
	Meta      map[string]json.RawMessage `json:"_meta"`
}

// parseFastCall decodes msg when the fast path can serve it; false sends it to mcp-go.
func (s *Server) parseFastCall(msg []byte) (*fastCall, bool) {
	var m fastMessage
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	if dec.Decode(&m) != nil || len(bytes.TrimSpace(msg[dec.InputOffset():])) > 0 {
		return nil, false
	}
	if m.JSONRPC != mcp.JSONRPC_VERSION || m.Method != string(mcp.MethodToolsCall) || m.Params == nil || len(m.ID) == 0 {
		return nil, false
	}
	if c := m.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
		return nil, false // null, or not an id at all: mcp-go answers those
	}
	p := s.pipes[m.Params.Name]
	if p == nil {
		return nil, false
	}
	fc := &fastCall{p: p, rawID: m.ID}
	if json.Unmarshal(m.ID, &fc.id) != nil {
		return nil, false
	}
	fc.req.Method = m.Method
	fc.req.Params.Name = m.Params.Name
	// As CallToolParams.UnmarshalJSON: arguments kept raw and decoded.
	if len(m.Params.Arguments) > 0 {
		fc.req.Params.RawArguments = m.Params.Arguments
		if json.Unmarshal(m.Params.Arguments, &fc.req.Params.Arguments) != nil {
			return nil, false
		}
	}
	if m.Params.Meta != nil {
		// As Meta.UnmarshalJSON, with no key but the progress token (keys match exactly
		// there, where the struct fields above match as encoding/json does, as mcp-go's do).
		meta := &mcp.Meta{AdditionalFields: map[string]any{}}
		for k, v := range m.Params.Meta {
			if k != "progressToken" {
				return nil, false
			}
			if json.Unmarshal(v, &meta.ProgressToken) != nil {
				return nil, false
			}
		}
		fc.req.Params.Meta = meta
	}
	return fc, true
}

// serveFast runs the call's handler as mcp-go would (a panic becomes a JSON-RPC error, as
// under WithRecovery) and returns the answer.
func (s *Server) serveFast(ctx context.Context, fc *fastCall) (answer any) {
	defer func() {
		if r := recover(); r != nil {
			answer = mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(fc.id),
				Error: mcp.NewJSONRPCErrorDetails(mcp.INTERNAL_ERROR, fmt.Sprintf("panic recovered in %s tool handler: %v", fc.req.Params.Name, r), nil)}
		}
	}()
	res := s.callTool(ctx, fc.p, fc.req)
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(fc.id), res)
}

// fastHTTPVersion reports whether an HTTP request's MCP-Protocol-Version header lets the fast
// path serve it: none, or a version mcp-go accepts from before 2026-07-28.
func fastHTTPVersion(h http.Header) bool {
	v := h.Get(mcp.HeaderProtocolVersion)
	return v == "" || mcp.IsValidProtocolVersion(v) && !mcp.IsModernProtocol(v)
}
