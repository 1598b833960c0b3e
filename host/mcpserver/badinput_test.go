package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestBadArguments: missing, extra and mistyped arguments are a tool error naming the
// parameter, and no run starts; the same with a client of 2025-06-18, whose calls take the
// fast path (fastcall.go), and one of 2026-07-28, whose calls go through mcp-go.
func TestBadArguments(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("version="+version, func(t *testing.T) { testBadArguments(t, version) })
	}
}

func testBadArguments(t *testing.T, version string) {
	f := newFixture(t, flow, greeter())
	c := f.stdio(t, version)
	cases := []struct {
		tool string
		args any
		want string
	}{
		{"Hello", map[string]any{}, "missing parameter name: String [BAD_INPUT]"},
		{"Hello", nil, "missing parameter name: String [BAD_INPUT]"},
		{"Pair", map[string]any{"a": 1}, "missing parameter b: Number"},
		{"Pair", map[string]any{}, "missing parameters a: Number, b: Number"},
		{"Hello", map[string]any{"name": "x", "nmae": "y"}, "Hello has no parameter nmae (its parameters: name: String)"},
		{"Hello", map[string]any{"name": "x", "a b": 1, "z": 2}, `Hello has no parameters "a b", z`},
		{"Hello", map[string]any{"name": 5}, "parameter name: want a string (String), got a number"},
		{"Pair", map[string]any{"a": "1", "b": 2}, "parameter a: want a number (Number), got a string"},
		{"Review", map[string]any{"doc": map[string]any{"title": "t", "score": 1, "tags": []any{"a", 2}}, "times": 1, "loud": true, "weights": map[string]any{}, "extra": 1, "items": []any{}},
			"parameter doc: .tags: [1]: want a string (String), got a number"},
		{"Review", map[string]any{"doc": map[string]any{"title": "t", "tags": []any{}}, "times": 1, "loud": true, "weights": map[string]any{}, "extra": 1, "items": []any{}},
			"parameter doc: missing field score (Number)"},
		{"Review", map[string]any{"doc": map[string]any{"title": "t", "score": 1, "tags": []any{}}, "times": 1.5, "loud": true, "weights": map[string]any{}, "extra": 1, "items": []any{}},
			"parameter times: want a whole number (Integer), got a number"},
		{"Review", map[string]any{"doc": map[string]any{"title": "t", "score": 1, "tags": []any{}}, "times": 1, "loud": "yes", "weights": map[string]any{"w": "heavy"}, "extra": 1, "items": []any{}},
			"parameter loud: want true or false (Boolean), got a string"},
		{"Hello", []any{"Ada"}, "the arguments must be an object with the parameters (name: String), not a list"},
	}
	for _, tc := range cases {
		res := callTool(t, c, tc.tool, tc.args)
		if txt := textOfResult(res); !res.IsError || !strings.Contains(txt, tc.want) {
			t.Errorf("%s(%v): isError %v, %q; want %q", tc.tool, tc.args, res.IsError, txt, tc.want)
		}
	}
	if recs := f.records(t); len(recs) != 0 {
		t.Errorf("runs started with bad arguments: %v", recs)
	}
	// An unknown tool is a protocol error.
	req := mcp.CallToolRequest{}
	req.Params.Name = "Nope"
	if _, err := c.CallTool(context.Background(), req); err == nil || !strings.Contains(err.Error(), "Nope") {
		t.Errorf("unknown tool: %v", err)
	}
}

// rawStdio is a stdio connection driven line by line.
type rawStdio struct {
	t   *testing.T
	w   io.Writer
	sc  *bufio.Scanner
	pc  *pipeConn
	mu  sync.Mutex
	got []map[string]any
}

func (f *fixture) raw(t *testing.T) *rawStdio {
	srvIn, toServer := io.Pipe()
	fromSrv, srvOut := io.Pipe()
	pc := &pipeConn{done: make(chan struct{}), toServer: toServer, fromSrv: fromSrv}
	go func() {
		if err := f.srv.ServeStdio(context.Background(), srvIn, srvOut); err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
		srvOut.Close()
		close(pc.done)
	}()
	t.Cleanup(func() {
		toServer.Close()
		fromSrv.Close()
		select {
		case <-pc.done:
		case <-time.After(10 * time.Second):
			t.Error("ServeStdio did not return")
		}
	})
	sc := bufio.NewScanner(fromSrv)
	sc.Buffer(nil, 64<<20)
	return &rawStdio{t: t, w: toServer, sc: sc, pc: pc}
}

func (r *rawStdio) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.w, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// next reads the next message the server writes.
func (r *rawStdio) next() map[string]any {
	r.t.Helper()
	done := make(chan bool, 1)
	var m map[string]any
	go func() {
		ok := r.sc.Scan()
		if ok {
			if err := json.Unmarshal(r.sc.Bytes(), &m); err != nil {
				r.t.Errorf("the server wrote a line that is not JSON: %q", r.sc.Text())
			}
		}
		done <- ok
	}()
	select {
	case ok := <-done:
		if !ok {
			r.t.Fatalf("the server's output ended: %v", r.sc.Err())
		}
	case <-time.After(20 * time.Second):
		r.t.Fatal("no message from the server")
	}
	return m
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return fmt.Sprintf("%v %s", e["code"], msg)
}

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestStdioBadMessages: malformed JSON, a batch, a message with no method and a message
// over the size limit each get a JSON-RPC error, and the connection goes on serving.
func TestStdioBadMessages(t *testing.T) {
	f := newFixture(t, flow, greeter())
	r := f.raw(t)
	r.send(initLine)
	if m := r.next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello"`)
	if m := r.next(); m["id"] != nil || !strings.HasPrefix(errMessage(m), "-32700 the message is not JSON") {
		t.Errorf("malformed JSON: %v", m)
	}
	r.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	if m := r.next(); !strings.Contains(errMessage(m), "batches are not supported over stdio") {
		t.Errorf("batch: %v", m)
	}
	r.send(`{"jsonrpc":"2.0","id":3}`)
	if m := r.next(); m["id"] != 3.0 || !strings.Contains(errMessage(m), "-32600") {
		t.Errorf("no method: %v", m)
	}
	big := strings.Repeat("x", 10<<20)
	r.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"` + big + `"}}}`)
	if m := r.next(); m["id"] != 4.0 || !strings.Contains(errMessage(m), "over the limit of 4194304 [REQUEST_TOO_LARGE]") {
		t.Errorf("10 MB message: %v", errMessage(m))
	}
	// The id may come last (the TypeScript SDK writes it after the params).
	r.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"Hello","arguments":{"name":"` + big + `","id":9}},"id":"last"}`)
	if m := r.next(); m["id"] != "last" || !strings.Contains(errMessage(m), "REQUEST_TOO_LARGE") {
		t.Errorf("10 MB message, id last: %v", m["id"])
	}
	r.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`)
	m := r.next()
	res, _ := m["result"].(map[string]any)
	if m["id"] != 5.0 || res == nil || !strings.Contains(fmt.Sprint(res["content"]), "Hello, Ada!") {
		t.Errorf("after the bad messages: %v", m)
	}
	if recs := f.records(t); len(recs) != 1 {
		t.Errorf("records %v, want the one good call's", recs)
	}
}

// TestHTTPBadRequests: the same over HTTP, and the HTTP-only refusals.
func TestHTTPBadRequests(t *testing.T) {
	f := newFixture(t, flow, greeter())
	url := f.http(t, HTTPConfig{})
	post := func(body string) (int, string) {
		t.Helper()
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"`); !strings.Contains(body, "-32700") {
		t.Errorf("malformed JSON: %d %s", code, body)
	}
	big := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"` + strings.Repeat("x", 10<<20) + `"}}}`
	if code, body := post(big); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "REQUEST_TOO_LARGE") {
		t.Errorf("10 MB request: %d %s", code, body)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}`
	if code, body := post(call); code != 200 || !strings.Contains(body, "Hello, Ada!") {
		t.Errorf("a call after the bad requests: %d %s", code, body)
	}
	// A body of unknown length (chunked) is read to its end; one that stops before its
	// Content-Length is not served.
	resp, err = http.Post(url, "application/json", io.MultiReader(strings.NewReader(call)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Hello, Ada!") {
		t.Errorf("a chunked call: %d %s", resp.StatusCode, b)
	}
	u, _ := neturl.Parse(url)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", u.Path, u.Host, len(call)+10, call)
	conn.(*net.TCPConn).CloseWrite()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	answer, _ := io.ReadAll(conn)
	if strings.Contains(string(answer), "Hello, Ada!") || !strings.Contains(string(answer), "cannot read the request body") {
		t.Errorf("a body shorter than its Content-Length was served: %q", answer)
	}
}

// TestHTTPBatch: a batch is answered with the array of its responses (notifications get
// none), its calls run concurrently; a batch of notifications only gets 202.
func TestHTTPBatch(t *testing.T) {
	f := newFixture(t, flow, greeter())
	url := f.http(t, HTTPConfig{})
	batch := `[
	 {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"b","version":"1"}}},
	 {"jsonrpc":"2.0","method":"notifications/initialized"},
	 {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}},
	 {"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"Pair","arguments":{"a":1}}},
	 {"jsonrpc":"2.0","id":4,"method":"nope"},
	 42
	]`
	resp, err := http.Post(url, "application/json", strings.NewReader(batch))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("batch answer %d %s: %v", resp.StatusCode, b, err)
	}
	byID := map[string]map[string]any{}
	for _, m := range out {
		byID[fmt.Sprint(m["id"])] = m
	}
	if len(out) != 5 {
		t.Errorf("%d responses, want 5 (no answer to the notification): %s", len(out), b)
	}
	if r := byID["1"]; r["result"] == nil {
		t.Errorf("initialize: %v", r)
	}
	if r := byID["2"]; !strings.Contains(fmt.Sprint(r["result"]), "Hello, Ada!") {
		t.Errorf("call 2: %v", r)
	}
	if r := byID["three"]; !strings.Contains(fmt.Sprint(r["result"]), "missing parameter b") {
		t.Errorf("call three: %v", r)
	}
	if r := byID["4"]; !strings.Contains(errMessage(r), "-32601") {
		t.Errorf("unknown method: %v", r)
	}
	if r := byID["<nil>"]; r["error"] == nil {
		t.Errorf("42 in a batch: %v", r)
	}
	resp, err = http.Post(url, "application/json", strings.NewReader(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("a batch of notifications: %d, want 202", resp.StatusCode)
	}
	for _, body := range []string{`[]`, `[` + strings.Repeat(`{"jsonrpc":"2.0","method":"x"},`, 300) + `1]`} {
		resp, err = http.Post(url, "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "a batch holds 1 to 256 messages") {
			t.Errorf("batch of the wrong size: %s", b)
		}
	}
}
