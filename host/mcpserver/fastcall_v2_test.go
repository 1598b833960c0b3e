package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// v2Call is a tools/call as the v2 JSON API (github.com/go-json-experiment/json) reads the
// fast path's messages: unknown members, duplicate names and invalid UTF-8 refused, names
// matched exactly.
type v2Call struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  string         `json:"method"`
	Params  *struct {
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments"`
		Meta      *struct {
			ProgressToken jsontext.Value `json:"progressToken"`
		} `json:"_meta"`
	} `json:"params"`
}

// parseV2 does what parseFastCall does with the v2 API reading the message in place of
// json.Valid and the scanner; the rest (the id, the arguments and the progress token
// decoded as mcp-go decodes them) is the same.
func parseV2(msg []byte) (*fastCall, bool) {
	var c v2Call
	if jsonv2.Unmarshal(msg, &c, jsonv2.RejectUnknownMembers(true)) != nil ||
		c.JSONRPC != "2.0" || c.Method != "tools/call" || c.Params == nil || len(c.ID) == 0 {
		return nil, false
	}
	fc := &fastCall{rawID: json.RawMessage(c.ID)}
	if !decodeID(c.ID, &fc.id) {
		return nil, false
	}
	fc.req.Params.Name = c.Params.Name
	if c.Params.Arguments != nil {
		fc.req.Params.RawArguments = json.RawMessage(c.Params.Arguments)
		if json.Unmarshal(c.Params.Arguments, &fc.req.Params.Arguments) != nil {
			return nil, false
		}
	}
	if c.Params.Meta != nil && c.Params.Meta.ProgressToken != nil {
		var tok any
		if json.Unmarshal(c.Params.Meta.ProgressToken, &tok) != nil {
			return nil, false
		}
	}
	return fc, true
}

// parseV2Tokens reads msg with v2's token decoder (jsontext.Decoder), keeping the fast
// path's rules: each name as written, none escaped, once (the decoder's default);
// "jsonrpc" and "method" exactly as written.
func (s *Server) parseV2Tokens(msg []byte) (*fastCall, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(msg), jsontext.AllowInvalidUTF8(true))
	var rawID, name, args, token []byte
	var hasVersion, hasMethod, hasParams, metaObject bool
	object := func(member func(name string) bool) bool {
		if t, err := dec.ReadToken(); err != nil || t.Kind() != '{' {
			return false
		}
		for dec.PeekKind() != '}' {
			off := dec.InputOffset()
			t, err := dec.ReadToken()
			if err != nil || bytes.IndexByte(msg[off:dec.InputOffset()], '\\') >= 0 {
				return false
			}
			if !member(t.String()) {
				return false
			}
		}
		_, err := dec.ReadToken()
		return err == nil
	}
	value := func() []byte {
		v, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		return bytes.Clone(v) // valid only until the next read
	}
	ok := object(func(key string) bool {
		switch key {
		case "jsonrpc":
			hasVersion = string(value()) == `"2.0"`
			return hasVersion
		case "method":
			hasMethod = string(value()) == `"tools/call"`
			return hasMethod
		case "id":
			k := dec.PeekKind()
			if k != '"' && k != '0' {
				return false
			}
			rawID = value()
			return rawID != nil
		case "params":
			hasParams = true
			return object(func(key string) bool {
				switch key {
				case "name":
					if dec.PeekKind() != '"' {
						return false
					}
					name = value()
					return name != nil
				case "arguments":
					args = value()
					return args != nil
				case "_meta":
					if dec.PeekKind() == 'n' {
						return value() != nil
					}
					metaObject = true
					return object(func(key string) bool {
						if key != "progressToken" {
							return false
						}
						token = value()
						return token != nil
					})
				}
				return false
			})
		}
		return false
	})
	if !ok || !hasVersion || !hasMethod || !hasParams || rawID == nil || name == nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	toolName, ok := jsonString(name)
	if !ok || s.pipes[toolName] == nil {
		return nil, false
	}
	fc := &fastCall{p: s.pipes[toolName], rawID: rawID}
	if !decodeID(rawID, &fc.id) {
		return nil, false
	}
	fc.req.Params.Name = toolName
	if args != nil {
		fc.req.Params.RawArguments = args
		if json.Unmarshal(args, &fc.req.Params.Arguments) != nil {
			return nil, false
		}
	}
	if metaObject && token != nil {
		var tok any
		if json.Unmarshal(token, &tok) != nil {
			return nil, false
		}
	}
	return fc, true
}

// BenchmarkParseFastCallV2: parseFastCall (json.Valid, then a byte scan) beside the same
// with the v2 API reading the message's head, on a typical call and on one with 16 KB of
// arguments: whether the scanner is still needed (see fastcall.go).
func BenchmarkParseFastCallV2(b *testing.B) {
	f := newFixture(b, flow, greeter())
	big := strings.Repeat(`The refund of order #1042 was approved \"today\".\n`, 320)
	for _, m := range []struct{ name, msg string }{
		{"typical", `{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":"p1"}}}`},
		{"args-16KB", `{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"` + big + `"},"_meta":{"progressToken":"p1"}}}`},
	} {
		msg := []byte(m.msg)
		if _, ok := parseV2(msg); !ok {
			b.Fatalf("v2 refused %s", m.name)
		}
		if _, ok := f.srv.parseV2Tokens(msg); !ok {
			b.Fatalf("v2's decoder refused %s", m.name)
		}
		for _, p := range []struct {
			name  string
			parse func([]byte) (*fastCall, bool)
		}{
			{"scanner", f.srv.parseFastCall},
			{"jsonv2", parseV2},
			{"jsontext", f.srv.parseV2Tokens},
		} {
			b.Run(m.name+"/"+p.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(msg)))
				for b.Loop() {
					if _, ok := p.parse(msg); !ok {
						b.Fatal("refused")
					}
				}
			})
		}
	}
}

// TestParseV2Tokens: the token decoder's reading takes what the scanner takes and leaves
// what it leaves, so the benchmark compares the same work.
func TestParseV2Tokens(t *testing.T) {
	f := newFixture(t, flow, greeter())
	for _, msg := range fastCalls {
		if _, ok := f.srv.parseV2Tokens([]byte(msg)); !ok {
			t.Errorf("refused %s", msg)
		}
	}
	for _, msg := range slowCalls {
		if _, ok := f.srv.parseV2Tokens([]byte(msg)); ok {
			t.Errorf("took %s", msg)
		}
	}
}
