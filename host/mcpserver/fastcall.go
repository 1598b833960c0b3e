package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mark3labs/mcp-go/mcp"
)

// The fast path. mcp-go's HandleMessage decodes a tools/call five times before the handler
// runs (the message's head, its protocol era, its _meta twice, the request, whose params
// decode their arguments once more), and over HTTP its handlePost decodes it twice more and
// starts a goroutine per request. That was a third of the server's processor time per call.
//
// A tools/call as clients send it most of the time, and whose answer cannot need anything
// but the handler, is read here once (validated, its keys found by a byte scan, its
// arguments decoded) and given to the same handler mcp-go would call, with the same
// request; anything else goes through mcp-go. "Cannot need" is strict:
//
//   - the message has only jsonrpc "2.0", a string or number id, method "tools/call" and
//     params, and params have only name (one of this server's tools), arguments and a _meta
//     holding at most a progressToken: no task, no request state or input responses (a
//     multi-round trip), no protocol version (a 2026-07-28 request), nothing mcp-go would
//     read and this path would not; each key once, spelled exactly so;
//   - the client cannot be asked for input (no elicitation capability), so the handler never
//     answers with input requests that mcp-go would resolve;
//   - over HTTP, no MCP-Protocol-Version header but a valid version before 2026-07-28.
//
// This server configures no hooks, tracer, request logger, input or output validation,
// session tools, tool filters or task tools, so for such a message mcp-go would do nothing
// more than call the handler under WithRecovery and answer with its result. The tests
// (fastcall_test.go) send each kind of message both ways and compare the answers byte for
// byte, and FuzzFastCall checks that mcp-go reads whatever this path takes the same way.
//
// The scanner stays hand-written: the v2 JSON API (github.com/go-json-experiment/json)
// decoding the message into a struct reads a key written with an escape ("n\u0061me") as
// the name, where mcp-go's reading of a message's head does not, so it would serve messages
// mcp-go answers otherwise; its token decoder (jsontext.Decoder), which can keep this path's
// rules, was slower. BenchmarkParseFastCallV2 (fastcall_v2_test.go), the 2-core
// development machine shared with other helpers' builds (load average 17), 5 runs each,
// min/median/max: a typical call 6.1/14.4/18.8 µs with the scanner, 13.5/14.6/33.4 with the
// token decoder (8.3/9.1/21.6 decoding into a struct); 16 KB of arguments 377/400/444,
// 889/1,253/2,111 (316/658/1,418).

// A fastCall is a tools/call the fast path serves.
type fastCall struct {
	// id is the JSON-RPC id as mcp-go decodes it (a string or a float64), for the answer.
	id any
	// rawID is the id as the client wrote it.
	rawID json.RawMessage
	p     *pipeline
	req   mcp.CallToolRequest
}

// parseFastCall reads msg when the fast path can serve it; false sends it to mcp-go. It
// takes the message as clients write it: keys spelled exactly (mcp-go's decoder also matches
// "Params" or "NAME", and such a message goes to mcp-go), each once, none escaped.
func (s *Server) parseFastCall(msg []byte) (*fastCall, bool) {
	// Valid JSON first, so the scanner below only ever sees valid JSON.
	if !json.Valid(msg) {
		return nil, false
	}
	sc := scanner{b: msg}
	var rawID, name, args, token []byte
	var hasVersion, hasMethod, hasParams, hasMeta, metaObject bool
	ok := sc.object(func(key []byte) bool {
		switch string(key) {
		case "jsonrpc":
			hasVersion = !hasVersion && sc.exactString(mcp.JSONRPC_VERSION)
			return hasVersion
		case "method":
			hasMethod = !hasMethod && sc.exactString(string(mcp.MethodToolsCall))
			return hasMethod
		case "id":
			if rawID != nil || (sc.peek() != '"' && sc.peek() != '-' && !isDigit(sc.peek())) {
				return false // twice; or null, or not an id at all: mcp-go answers those
			}
			rawID = sc.value()
			return true
		case "params":
			if hasParams || sc.peek() != '{' {
				return false
			}
			hasParams = true
			return sc.object(func(key []byte) bool {
				switch string(key) {
				case "name":
					if name != nil || sc.peek() != '"' {
						return false
					}
					name = sc.value()
					return true
				case "arguments":
					if args != nil {
						return false
					}
					args = sc.value()
					return true
				case "_meta":
					if hasMeta {
						return false
					}
					hasMeta = true
					if sc.literal("null") {
						return true
					}
					if sc.peek() != '{' {
						return false
					}
					metaObject = true
					return sc.object(func(key []byte) bool {
						if string(key) != "progressToken" || token != nil {
							return false
						}
						token = sc.value()
						return true
					})
				}
				return false
			})
		}
		return false
	})
	if !ok || !sc.end() || !hasVersion || !hasMethod || rawID == nil || name == nil {
		return nil, false
	}
	toolName, ok := jsonString(name)
	if !ok {
		return nil, false
	}
	p := s.pipes[toolName]
	if p == nil {
		return nil, false
	}
	fc := &fastCall{p: p, rawID: rawID}
	if !decodeID(rawID, &fc.id) {
		return nil, false
	}
	fc.req.Method = string(mcp.MethodToolsCall)
	fc.req.Params.Name = toolName
	// As CallToolParams.UnmarshalJSON: arguments kept raw and decoded.
	if args != nil {
		fc.req.Params.RawArguments = args
		v, ok := decodeAny(args)
		if !ok {
			v = nil
			if json.Unmarshal(args, &v) != nil {
				return nil, false
			}
		}
		fc.req.Params.Arguments = v
	}
	if metaObject {
		// As Meta.UnmarshalJSON: an object, its progress token taken out of it.
		meta := &mcp.Meta{AdditionalFields: map[string]any{}}
		if token != nil && json.Unmarshal(token, &meta.ProgressToken) != nil {
			return nil, false
		}
		fc.req.Params.Meta = meta
	}
	return fc, true
}

// decodeAny decodes raw, valid JSON, as json.Unmarshal decodes it into an any (maps,
// []any, strings, float64s, bools, nil), through the v2 JSON API, which reads it in one pass
// without reflection over the value; false where v2 refuses what encoding/json accepts (a
// name written twice, invalid UTF-8, a number out of float64's range), and the caller leaves
// raw to json.Unmarshal. BenchmarkDecodeArgs, one run: v2 1.66 / 1.68 / 1.74 µs and 25
// allocations for a six-member call, encoding/json 2.07 / 2.12 / 2.15 µs and 33, a scanner
// written here 1.62 / 1.66 / 1.67 µs and 29: not worth a decoder of our own.
func decodeAny(raw []byte) (any, bool) {
	var v any
	if jsonv2.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	return v, true
}

// decodeID decodes a JSON-RPC id as encoding/json decodes it into an any (mcp-go's): a
// string, or a float64.
func decodeID(raw []byte, id *any) bool {
	if raw[0] == '"' {
		s, ok := jsonString(raw)
		*id = s
		return ok
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	*id = f
	return err == nil
}

// jsonString is the value of a JSON string: its bytes when it has no escapes and is valid
// UTF-8 (encoding/json replaces invalid bytes), else as encoding/json decodes it.
func jsonString(raw []byte) (string, bool) {
	in := raw[1 : len(raw)-1]
	if bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) {
		return string(in), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// A scanner walks a message already known to be valid JSON.
type scanner struct {
	b []byte
	i int
}

func (sc *scanner) space() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// peek is the next byte that is not white space; 0 at the end.
func (sc *scanner) peek() byte {
	sc.space()
	if sc.i < len(sc.b) {
		return sc.b[sc.i]
	}
	return 0
}

// end reports whether nothing but white space is left.
func (sc *scanner) end() bool { return sc.peek() == 0 && sc.i == len(sc.b) }

// object reads an object, calling member for each key once the scanner is at its value
// (member reads the value); false when member does, or the next value is not an object, or
// a key has an escape (so is not compared as written).
func (sc *scanner) object(member func(key []byte) bool) bool {
	if sc.peek() != '{' {
		return false
	}
	sc.i++
	if sc.peek() == '}' {
		sc.i++
		return true
	}
	for {
		if sc.peek() != '"' {
			return false
		}
		key := sc.value()
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		if sc.peek() != ':' {
			return false
		}
		sc.i++
		sc.space()
		if !member(key[1 : len(key)-1]) {
			return false
		}
		switch sc.peek() {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return true
		default:
			return false
		}
	}
}

// exactString reads a string, reporting whether it is want as written.
func (sc *scanner) exactString(want string) bool {
	if sc.peek() != '"' {
		return false
	}
	v := sc.value()
	return string(v[1:len(v)-1]) == want
}

// literal reads word (null) when it is next.
func (sc *scanner) literal(word string) bool {
	if sc.peek() == word[0] && bytes.HasPrefix(sc.b[sc.i:], []byte(word)) {
		sc.i += len(word)
		return true
	}
	return false
}

// value reads the next value and returns its text.
func (sc *scanner) value() []byte {
	sc.space()
	start := sc.i
	depth := 0
	for sc.i < len(sc.b) {
		c := sc.b[sc.i]
		switch {
		case c == '"':
			sc.i++
			for sc.i < len(sc.b) && sc.b[sc.i] != '"' {
				if sc.b[sc.i] == '\\' {
					sc.i++
				}
				sc.i++
			}
			sc.i++
		case c == '{' || c == '[':
			depth++
			sc.i++
		case c == '}' || c == ']':
			if depth == 0 {
				return sc.b[start:sc.i]
			}
			depth--
			sc.i++
		case c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if depth == 0 {
				return sc.b[start:sc.i]
			}
			sc.i++
		default:
			sc.i++
		}
		if depth == 0 && c != ',' && (c == '"' || c == '}' || c == ']') {
			return sc.b[start:sc.i]
		}
	}
	return sc.b[start:sc.i]
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
	s.fastCalls.Add(1)
	res := s.callTool(ctx, fc.p, fc.req)
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(fc.id), res)
}

// fastHTTPVersion reports whether an HTTP request's MCP-Protocol-Version header lets the fast
// path serve it: none, or a version mcp-go accepts from before 2026-07-28.
func fastHTTPVersion(h http.Header) bool {
	v := h.Get(mcp.HeaderProtocolVersion)
	return v == "" || mcp.IsValidProtocolVersion(v) && !mcp.IsModernProtocol(v)
}
