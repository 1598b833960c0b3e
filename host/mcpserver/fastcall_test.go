package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fastCalls are tools/calls the fast path serves: every result kind, ids and arguments of
// every shape, keys in any order and case.
var fastCalls = []string{
	// As mcp-go's client writes a call, with and without a progress token.
	`{"jsonrpc":"2.0","id":3,"params":{"name":"Hello","arguments":{"name":"Ada"}},"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":3,"params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":"x"}},"method":"tools/call"}`,
	// As the TypeScript SDK's client writes one.
	`{"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}},"jsonrpc":"2.0","id":1}`,
	`{"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":1}},"jsonrpc":"2.0","id":1}`,
	// Ids.
	`{"jsonrpc":"2.0","id":"a<b>&\u2028\"c","method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":1e2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	"\n \t{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"tools/call\",\"params\":{\"name\":\"Hello\",\"arguments\":{\"name\":\"Ada\"}}} \n",
	// Escapes, bytes that are not UTF-8, tokens of every kind, white space everywhere.
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":null}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"He\u006clo","arguments":{"name":"A\"da\u00e9\ud83d\ude00"},"_meta":{}}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"tools/call\",\"params\":{\"name\":\"Hello\",\"arguments\":{\"name\":\"\xfe\"}}}",
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":null}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":{"a":[1,{}]}}}}`,
	`{ "jsonrpc" : "2.0" , "id" : 2 , "method" : "tools/call" , "params" : { "name" : "Hello" , "arguments" : { "name" : "A,d}a" } , "_meta" : { "progressToken" : 7 } } }`,
	// Arguments missing, null, of the wrong type, extra, not an object; a number too large
	// for a float64's integers.
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello"}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello","arguments":null}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello","arguments":{"name":3}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada","age":3}}}`,
	`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello","arguments":["Ada"]}}`,
	`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Pair","arguments":{"a":12345678901234567890,"b":-0.5e-3}}}`,
	// Every result kind: structured content, paused, failed, output not fitting its schema.
	`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"Review","arguments":{"doc":{"title":"T","score":1,"tags":["a"]},"times":2,"loud":true,"weights":{"x":1.5},"extra":null,"items":[1,"b"]}}}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Publish","arguments":{"draft":"<b>hi</b>"}}}`,
	`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"Broken","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"Bad","arguments":{}}}`,
}

// slowCalls are messages the fast path leaves to mcp-go: anything it would read and the fast
// path would not, or answer with an error.
var slowCalls = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Nope","arguments":{}}}`,
	`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":true,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}},"extra":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"task":{"ttl":1000}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"requestState":"x.y"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"inputResponses":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"ProgressToken":"x"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}} x`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}{}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}]`,
	// Keys as encoding/json matches them, in any case, the last of a name winning: mcp-go
	// reads those (and the fast path leaves them to it).
	`{"JSONRPC":"2.0","Id":2,"Method":"tools/call","Params":{"Name":"Hello","ARGUMENTS":{"name":"Ada"},"_Meta":{}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Broken","arguments":{"name":"Ada"},"name":"Hello"}}`,
	`{"jsonrpc":"2.0","id":2,"id":3,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":1,"progressToken":2}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"n\u0061me":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2\u002e0","id":2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":1e999,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7,"arguments":{"name":"Ada"}}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":[]}}`,
}

// TestFastPathAnswersAsMCPGo: every call the fast path serves is answered byte for byte as
// mcp-go's HandleMessage answers it (two servers over the same program, so run ids match),
// and leaves the same run record.
func TestFastPathAnswersAsMCPGo(t *testing.T) {
	slow := newFixture(t, flow, greeter())
	fast := newFixture(t, flow, greeter())
	ctx := context.Background()
	for _, msg := range fastCalls {
		fc, ok := fast.srv.parseFastCall([]byte(msg))
		if !ok {
			t.Errorf("the fast path refused %s", msg)
			continue
		}
		want, err := marshalMessage(slow.srv.mcp.HandleMessage(ctx, []byte(msg)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := marshalMessage(fast.srv.serveFast(ctx, fc))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s\nfast path: %s\nmcp-go:    %s", msg, got, want)
		}
	}
	if s, f := slow.records(t), fast.records(t); !reflect.DeepEqual(s, f) || len(s) == 0 {
		t.Errorf("records: mcp-go %v, fast path %v", s, f)
	}
	for _, id := range slow.records(t) {
		s, f := slow.record(t, id), fast.record(t, id)
		if s.Status != f.Status || !reflect.DeepEqual(s.Inputs, f.Inputs) || !reflect.DeepEqual(s.Output, f.Output) {
			t.Errorf("record %s: mcp-go %+v, fast path %+v", id, s, f)
		}
	}
}

func TestFastPathLeavesTheRestToMCPGo(t *testing.T) {
	f := newFixture(t, flow, greeter())
	for _, msg := range slowCalls {
		if _, ok := f.srv.parseFastCall([]byte(msg)); ok {
			t.Errorf("the fast path took %s", msg)
		}
	}
}

// TestFastPathOverHTTP: /mcp answers what the fast path serves as mcp-go's handler does
// (status, content type, body), in a batch too; a request of protocol 2026-07-28 by its
// header, or of a version mcp-go refuses, goes to mcp-go.
func TestFastPathOverHTTP(t *testing.T) {
	slow := newFixture(t, flow, greeter())
	fast := newFixture(t, flow, greeter())
	fh := &httpHandler{s: fast.srv, st: server.NewStreamableHTTPServer(fast.srv.mcp, server.WithStateLess(true), server.WithDisableStreaming(true)), slots: make(chan struct{}, 8)}
	st := server.NewStreamableHTTPServer(slow.srv.mcp, server.WithStateLess(true), server.WithDisableStreaming(true))
	post := func(body string, header http.Header) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			r.Header[k] = v
		}
		return r
	}
	for _, msg := range fastCalls {
		want := httptest.NewRecorder()
		st.Handle(&jsonWriter{w: want}, &server.HTTPRequest{Method: http.MethodPost, URL: post(msg, nil).URL, Header: post(msg, nil).Header, Body: []byte(msg), Context: context.Background()})
		got := httptest.NewRecorder()
		fh.ServeHTTP(got, post(msg, nil))
		if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") || got.Body.String() != want.Body.String() {
			t.Errorf("%s\nfast path: %d %s %s\nmcp-go:    %d %s %s", msg, got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body)
		}
	}

	batch := "[" + fastCalls[0] + "," + fastCalls[len(fastCalls)-2] + "]"
	rec := httptest.NewRecorder()
	fh.ServeHTTP(rec, post(batch, nil))
	var answers []mcp.JSONRPCResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("batch: %d %s (%v)", rec.Code, rec.Body, err)
	}

	call := fastCalls[0]
	if _, ok := fast.srv.parseFastCall([]byte(call)); !ok {
		t.Fatal("the fast path refused " + call)
	}
	for _, v := range []string{"2026-07-28", "1999-01-01"} {
		h := http.Header{mcp.HeaderProtocolVersion: {v}}
		if fastHTTPVersion(h) {
			t.Errorf("MCP-Protocol-Version %s is served by the fast path", v)
		}
		rec := httptest.NewRecorder()
		fh.ServeHTTP(rec, post(call, h))
		if rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "Hello, Ada!") {
			t.Errorf("MCP-Protocol-Version %s: answered %s", v, rec.Body)
		}
	}
	for _, v := range []string{"", "2025-06-18", "2024-11-05"} {
		if !fastHTTPVersion(http.Header{mcp.HeaderProtocolVersion: {v}}) {
			t.Errorf("MCP-Protocol-Version %q is not served by the fast path", v)
		}
	}
}

// TestFastPathServesClients: calls of mcp-go's client before protocol 2026-07-28, over stdio
// and HTTP, take the fast path; calls of 2026-07-28, and over stdio those of a client that
// can ask its user, go through mcp-go.
func TestFastPathServesClients(t *testing.T) {
	f := newFixture(t, flow, greeter())
	for _, tc := range []struct {
		name string
		c    func() *mcpClient
		fast bool
	}{
		{"stdio 2025-06-18", func() *mcpClient { return f.stdio(t, "2025-06-18") }, true},
		{"stdio 2024-11-05", func() *mcpClient { return f.stdio(t, "2024-11-05") }, true},
		{"http 2025-06-18", func() *mcpClient { return f.httpClient(t, HTTPConfig{}, "2025-06-18") }, true},
		{"stdio 2026-07-28", func() *mcpClient { return f.stdio(t, "") }, false},
		{"http 2026-07-28", func() *mcpClient { return f.httpClient(t, HTTPConfig{}, "") }, false},
		{"stdio 2025-06-18, elicitation", func() *mcpClient {
			return f.stdio(t, "2025-06-18", client.WithElicitationHandler(&person{action: mcp.ElicitationResponseActionAccept}))
		}, false},
	} {
		c := tc.c()
		before := f.srv.fastCalls.Load()
		res := callTool(t, c, "Hello", map[string]any{"name": "Ada"})
		if txt := textOfResult(res); res.IsError || txt != "Hello, Ada!" {
			t.Errorf("%s: %q", tc.name, txt)
		}
		if fast := f.srv.fastCalls.Load() > before; fast != tc.fast {
			t.Errorf("%s: served by the fast path %v, want %v", tc.name, fast, tc.fast)
		}
	}
}

// TestFastPathNotForClientsThatAsk: over stdio, a client that can ask its user is served by
// mcp-go, which can put a paused run's question to it.
func TestFastPathNotForClientsThatAsk(t *testing.T) {
	f := newFixture(t, flow, greeter())
	ss := newStdioSession(f.srv, &bytes.Buffer{}, func() {})
	if ss.canElicit() {
		t.Error("a client that declared nothing can elicit")
	}
	ss.SetClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})
	if !ss.canElicit() {
		t.Error("a client that declared elicitation cannot")
	}
}

// FuzzFastCall: whatever the fast path takes, mcp-go reads the same way: the same id, tool,
// arguments and progress token, a tools/call of JSON-RPC 2.0 of the protocol era before
// 2026-07-28, with nothing else in it that mcp-go would act on.
func FuzzFastCall(f *testing.F) {
	fx := newFixture(f, flow, greeter())
	for _, m := range append(append([]string(nil), fastCalls...), slowCalls...) {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		fc, ok := fx.srv.parseFastCall(msg)
		if !ok {
			return
		}
		var base struct {
			JSONRPC string `json:"jsonrpc"`
			Method  string `json:"method"`
			ID      any    `json:"id,omitempty"`
			Result  any    `json:"result,omitempty"`
		}
		var req mcp.CallToolRequest
		if err := json.Unmarshal(msg, &base); err != nil {
			t.Fatalf("mcp-go cannot read %q: %v", msg, err)
		}
		if err := json.Unmarshal(msg, &req); err != nil {
			t.Fatalf("mcp-go cannot read %q as a call: %v", msg, err)
		}
		if base.JSONRPC != "2.0" || base.Method != "tools/call" || base.ID == nil || base.Result != nil {
			t.Fatalf("%q: mcp-go reads %+v", msg, base)
		}
		if !reflect.DeepEqual(base.ID, fc.id) {
			t.Fatalf("%q: id %#v, mcp-go %#v", msg, fc.id, base.ID)
		}
		p := req.Params
		if p.Name != fc.req.Params.Name || !reflect.DeepEqual(p.Arguments, fc.req.Params.Arguments) || !bytes.Equal(p.RawArguments, fc.req.Params.RawArguments) {
			t.Fatalf("%q: params %+v, mcp-go %+v", msg, fc.req.Params, p)
		}
		if p.Task != nil || p.RequestState != "" || len(p.InputResponses) > 0 {
			t.Fatalf("%q: mcp-go would read more: %+v", msg, p)
		}
		if (p.Meta == nil) != (fc.req.Params.Meta == nil) {
			t.Fatalf("%q: _meta %+v, mcp-go %+v", msg, fc.req.Params.Meta, p.Meta)
		}
		if p.Meta != nil {
			if len(p.Meta.AdditionalFields) > 0 || p.Meta.ProtocolVersion() != "" || !reflect.DeepEqual(p.Meta.ProgressToken, fc.req.Params.Meta.ProgressToken) {
				t.Fatalf("%q: _meta %+v, mcp-go %+v", msg, fc.req.Params.Meta, p.Meta)
			}
		}
	})
}

// BenchmarkParseFastCall: reading a typical tools/call on the fast path.
func BenchmarkParseFastCall(b *testing.B) {
	f := newFixture(b, flow, greeter())
	msg := []byte(`{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"},"_meta":{"progressToken":"p1"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := f.srv.parseFastCall(msg); !ok {
			b.Fatal("refused")
		}
	}
}

// decodeAny reads arguments as json.Unmarshal reads them into an any, or says it cannot.
func TestDecodeAny(t *testing.T) {
	for _, raw := range []string{
		`{"name":"Ada"}`, `{}`, `[]`, ` [ 1 , -2.5e3 , 0 , "x" , true , false , null ] `, `"just a string"`, `12`, `null`,
		`{"a":{"b":[{"c":[]}]},"d":"\u00e9\n\"","e":1e308}`, `{"a":1,"a":2}`, `{"a":{"x":1},"a":{"y":2}}`,
		"{\"bad\":\"\xff\xfe\"}", `{"big":1e400}`, `{"k\u0041":1}`, "{\"\xff\":1}",
		strings.Repeat(`[`, 150) + strings.Repeat(`]`, 150), `{"n":-0}`, `{"n":123456789012345678901234567890}`,
	} {
		var want any
		wantErr := json.Unmarshal([]byte(raw), &want)
		got, ok := decodeAny([]byte(raw))
		if ok && (wantErr != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("%q: decoded %#v, json.Unmarshal %#v (%v)", raw, got, want, wantErr)
		}
	}
	for _, raw := range []string{`{"name":"Ada"}`, `[1,"x",null]`, `{"a":{"b":[true]}}`} {
		if _, ok := decodeAny([]byte(raw)); !ok {
			t.Errorf("%q was left to json.Unmarshal", raw)
		}
	}
}

// FuzzDecodeAny: whatever valid JSON decodeAny decodes, it decodes as json.Unmarshal does.
func FuzzDecodeAny(f *testing.F) {
	for _, s := range []string{`{"name":"Ada"}`, `[1,-2.5e3,"x",true,null]`, `{"a":{"b":[]},"a":2}`, `"\u00e9"`, `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		got, ok := decodeAny(raw)
		if !ok {
			return
		}
		var want any
		if err := json.Unmarshal(raw, &want); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: decoded %#v, json.Unmarshal %#v (%v)", raw, got, want, err)
		}
	})
}
