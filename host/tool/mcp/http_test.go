package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

// fakeServer is a scripted Streamable HTTP MCP server: it records what the client sends,
// answers initialize with a chosen protocol version, answers tools/call as an event stream,
// answers every unknown method with {} (as some servers do), and can expire its session.
type fakeServer struct {
	version string
	// flood, when set, makes tools/call answer with a result of that many bytes, as JSON or
	// (floodSSE) as an event stream.
	flood    int
	floodSSE bool

	mu       sync.Mutex
	methods  []string
	params   []json.RawMessage
	headers  []http.Header
	deletes  []http.Header
	sessions int
	expire   bool
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodDelete {
		f.mu.Lock()
		f.deletes = append(f.deletes, r.Header.Clone())
		f.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer k-123" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Header.Get("Authorization") != "Bearer k-123" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	f.methods = append(f.methods, msg.Method)
	f.params = append(f.params, msg.Params)
	f.headers = append(f.headers, r.Header.Clone())
	current := fmt.Sprintf("s%d", f.sessions)
	if msg.Method == "initialize" {
		f.sessions++
		current = fmt.Sprintf("s%d", f.sessions)
	} else if r.Header.Get("Mcp-Session-Id") != current || f.expire {
		f.expire = false
		f.mu.Unlock()
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	f.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", current)
	if len(msg.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch msg.Method {
	case "initialize":
		result = `{"protocolVersion":"` + f.version + `","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"lookup","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]},"annotations":{"openWorldHint":true}}]}`
	case "tools/call":
		if f.flood > 0 {
			f.sendFlood(w, msg.ID)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"streamed\"}]}}\n\n", msg.ID)
		return
	default:
		result = `{}`
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, result)
}

// sendFlood answers with a text result of f.flood bytes, written a MiB at a time.
func (f *fakeServer) sendFlood(w http.ResponseWriter, id json.RawMessage) {
	ct, prefix, suffix := "application/json", "", ""
	if f.floodSSE {
		ct, prefix, suffix = "text/event-stream", "event: message\ndata: ", "\n\n"
	}
	w.Header().Set("Content-Type", ct)
	fmt.Fprintf(w, `%s{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, prefix, id)
	chunk := strings.Repeat("x", 1<<20)
	for n := 0; n < f.flood; n += len(chunk) {
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
	}
	fmt.Fprintf(w, `"}]}}%s`, suffix)
}

func (f *fakeServer) seen() ([]string, []json.RawMessage, []http.Header, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.methods...), f.params, f.headers, f.sessions
}

func fake(t *testing.T, version string) (*fakeServer, *Provider) {
	return fakeWithKey(t, version, "k-123")
}

func fakeWithKey(t *testing.T, version, key string) (*fakeServer, *Provider) {
	t.Helper()
	f := &fakeServer{version: version}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	p := openT(t, Config{Name: "Docs", URL: srv.URL + "/mcp", APIKey: key,
		Headers: map[string]string{"X-Org": "acme"}, HTTPClient: srv.Client()})
	return f, p
}

func TestUnauthorized(t *testing.T) {
	_, p := fakeWithKey(t, "2025-06-18", "wrong")
	_, err := p.Methods(context.Background())
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeHTTPError || te.Status != 401 || te.Retryable || !strings.Contains(te.Message, "refused the apiKey") {
		t.Errorf("got %#v, want a final HTTP_ERROR 401 about the apiKey", err)
	}
}

// A server without resources: list_resources answers [] without asking it, and agents are
// not offered the resource methods.
func TestNoResources(t *testing.T) {
	f, p := fake(t, "2025-06-18")
	ms, err := p.Methods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if IsBuiltin(m.Name) && !m.PipelineOnly {
			t.Errorf("%s is offered to agents though the server has no resources", m.Name)
		}
	}
	if got := mustCall(t, p, "list_resources", `{}`); got != `[]` {
		t.Errorf("list_resources: %s", got)
	}
	methods, _, _, _ := f.seen()
	for _, m := range methods {
		if m == "resources/list" {
			t.Errorf("resources/list was sent to a server without resources")
		}
	}
}

// The client opens with initialize at 2025-06-18, never the draft protocol's server/discover
// (which a server answering unknown methods with {} would take for a success).
func TestHandshakeIsInitialize(t *testing.T) {
	f, p := fake(t, "2025-06-18")
	if _, err := p.Methods(context.Background()); err != nil {
		t.Fatal(err)
	}
	methods, params, headers, _ := f.seen()
	if len(methods) < 2 || methods[0] != "initialize" || methods[1] != "notifications/initialized" {
		t.Fatalf("the client sent %v; want initialize, then notifications/initialized", methods)
	}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(params[0], &init)
	if init.ProtocolVersion != ProtocolVersion {
		t.Errorf("initialize asked for %q, want %q", init.ProtocolVersion, ProtocolVersion)
	}
	for i, h := range headers {
		if h.Get("Authorization") != "Bearer k-123" || h.Get("X-Org") != "acme" {
			t.Errorf("request %d (%s) headers: Authorization %q, X-Org %q", i, methods[i], h.Get("Authorization"), h.Get("X-Org"))
		}
		if i > 0 && h.Get("Mcp-Protocol-Version") != ProtocolVersion {
			t.Errorf("request %d (%s) carries protocol version %q", i, methods[i], h.Get("Mcp-Protocol-Version"))
		}
		if i > 0 && h.Get("Mcp-Session-Id") != "s1" {
			t.Errorf("request %d (%s) carries session %q, want s1", i, methods[i], h.Get("Mcp-Session-Id"))
		}
		if accept := h.Get("Accept"); !strings.Contains(accept, "application/json") || !strings.Contains(accept, "text/event-stream") {
			t.Errorf("request %d Accept %q: want JSON and event streams", i, accept)
		}
	}
}

func TestProtocolVersions(t *testing.T) {
	for _, v := range []string{"2025-06-18", "2025-03-26", "2024-11-05"} {
		t.Run(v, func(t *testing.T) {
			_, p := fake(t, v)
			ms, err := p.Methods(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if m, ok := tool.FindMethod(ms, "lookup"); !ok || m.Effect != tool.External {
				t.Errorf("lookup: %+v", m)
			}
		})
	}
	t.Run("2025-11-25", func(t *testing.T) {
		_, p := fake(t, "2025-11-25")
		_, err := p.Methods(context.Background())
		if errcode.Code(err) != tool.CodeToolConfig || !strings.Contains(err.Error(), "protocol version 2025-11-25") {
			t.Errorf("got %v, want TOOL_CONFIG naming the version", err)
		}
	})
}

// A reply that comes as an event stream is read like a JSON one.
func TestEventStreamReply(t *testing.T) {
	_, p := fake(t, "2025-06-18")
	if got := mustCall(t, p, "lookup", `{"q": "x"}`); got != `"streamed"` {
		t.Errorf("got %s", got)
	}
}

// A session the server has forgotten (404) is opened again and the call sent once more.
func TestExpiredSession(t *testing.T) {
	f, p := fake(t, "2025-06-18")
	mustCall(t, p, "lookup", `{"q": "x"}`)
	f.mu.Lock()
	f.expire = true
	f.mu.Unlock()
	if got := mustCall(t, p, "lookup", `{"q": "y"}`); got != `"streamed"` {
		t.Errorf("got %s", got)
	}
	if _, _, _, sessions := f.seen(); sessions != 2 {
		t.Errorf("%d sessions, want 2 (the expired one and a new one)", sessions)
	}
}

// The DELETE that ends a session carries apiKey: and headers: like every other request: a
// server that wants them refused the session's end before.
func TestCloseSendsHeaders(t *testing.T) {
	f, p := fake(t, "2025-06-18")
	if _, err := p.Methods(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.deletes) != 1 {
		t.Fatalf("%d DELETE requests, want 1", len(f.deletes))
	}
	h := f.deletes[0]
	if h.Get("Authorization") != "Bearer k-123" || h.Get("X-Org") != "acme" || h.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("DELETE headers: Authorization %q, X-Org %q, Mcp-Session-Id %q", h.Get("Authorization"), h.Get("X-Org"), h.Get("Mcp-Session-Id"))
	}
}

// A response body over the limit, as JSON or as an event stream, fails the call with
// TOOL_LIMIT after the limit has been read, not after the whole body.
func TestHTTPResponseLimit(t *testing.T) {
	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("event stream %v", sse), func(t *testing.T) {
			f := &fakeServer{version: "2025-06-18", flood: 64 << 20, floodSSE: sse}
			srv := httptest.NewServer(f)
			t.Cleanup(srv.Close)
			p := openT(t, Config{Name: "Docs", URL: srv.URL + "/mcp", APIKey: "k-123", HTTPClient: srv.Client(), MaxResultBytes: 1 << 20})
			var err error
			n := allocated(func() { _, err = call(t, p, "lookup", `{"q": "x"}`) })
			if errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "1 MiB") {
				t.Fatalf("got %v, want TOOL_LIMIT", err)
			}
			if n > 16<<20 {
				t.Errorf("the host allocated %d MiB for a 64 MiB answer and a 1 MiB limit", n>>20)
			}
		})
	}
}
