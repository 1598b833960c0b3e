// Package lsptest is a Language Server Protocol client for tests of `halo lsp`: it speaks
// JSON-RPC (sourcegraph/jsonrpc2, the library the server uses) to a server's stdin and
// stdout, answers nothing the server asks, and keeps the diagnostics the server publishes.
package lsptest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// A Client is one session with a server.
type Client struct {
	conn *jsonrpc2.Conn

	mu    sync.Mutex
	diags map[protocol.DocumentUri][]Publication
	// changed is closed and replaced each time diagnostics arrive.
	changed chan struct{}
}

type rwc struct {
	io.Reader
	io.WriteCloser
}

// New starts a client on a server's output (r) and input (w).
func New(r io.Reader, w io.WriteCloser) *Client {
	c := &Client{diags: map[protocol.DocumentUri][]Publication{}, changed: make(chan struct{})}
	stream := jsonrpc2.NewBufferedStream(rwc{r, w}, jsonrpc2.VSCodeObjectCodec{})
	// A test sends malformed requests whose error answers match no call: not logged.
	c.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(c.handle), jsonrpc2.SetLogger(log.New(io.Discard, "", 0)))
	return c
}

func (c *Client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	if req.Method != string(protocol.ServerTextDocumentPublishDiagnostics) || req.Params == nil {
		return nil, nil
	}
	var p Publication
	if err := json.Unmarshal(*req.Params, &p); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.diags[p.URI] = append(c.diags[p.URI], p)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return nil, nil
}

// A Publication is one textDocument/publishDiagnostics.
type Publication struct {
	URI         protocol.DocumentUri `json:"uri"`
	Version     *int                 `json:"version"`
	Diagnostics []Diagnostic         `json:"diagnostics"`
}

// A Diagnostic is one diagnostic as the server sent it (the code decoded as the string it
// is).
type Diagnostic struct {
	Range    protocol.Range `json:"range"`
	Severity int            `json:"severity"`
	Code     string         `json:"code"`
	Source   string         `json:"source"`
	Message  string         `json:"message"`
}

// Call sends a request and decodes its result into result (nil: dropped). It gives up after
// 30 seconds.
func (c *Client) Call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var raw json.RawMessage
	if err := c.conn.Call(ctx, method, params, &raw); err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	return json.Unmarshal(raw, result)
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	return c.conn.Notify(context.Background(), method, params)
}

// Initialize sends initialize and initialized.
func (c *Client) Initialize(rootURI string) (protocol.InitializeResult, error) {
	var res protocol.InitializeResult
	uri := rootURI
	if err := c.Call("initialize", map[string]any{"processId": nil, "rootUri": uri, "capabilities": map[string]any{}}, &res); err != nil {
		return res, err
	}
	return res, c.Notify("initialized", map[string]any{})
}

// Open sends didOpen of a .halo document.
func (c *Client) Open(uri protocol.DocumentUri, version int, text string) error {
	return c.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "halo", "version": version, "text": text}})
}

// Change sends didChange with the document's whole new text.
func (c *Client) Change(uri protocol.DocumentUri, version int, text string) error {
	return c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]any{{"text": text}}})
}

// Edit sends didChange replacing the text between start and end (0-based lines, UTF-16
// columns) with text.
func (c *Client) Edit(uri protocol.DocumentUri, version int, start, end protocol.Position, text string) error {
	return c.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []map[string]any{{"range": protocol.Range{Start: start, End: end}, "text": text}}})
}

// Diagnostics waits until the server has published diagnostics for uri at version (or
// later) and returns the last ones; it gives up after timeout.
func (c *Client) Diagnostics(uri protocol.DocumentUri, version int, timeout time.Duration) ([]Diagnostic, error) {
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		list := c.diags[uri]
		changed := c.changed
		c.mu.Unlock()
		if n := len(list); n > 0 && list[n-1].Version != nil && int(*list[n-1].Version) >= version {
			return list[n-1].Diagnostics, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return nil, fmt.Errorf("no diagnostics for %s version %d within %s (got %d publications)", uri, version, timeout, len(list))
		}
	}
}

// Close ends the session: shutdown, exit, and the connection.
func (c *Client) Close() error {
	_ = c.Call("shutdown", nil, nil)
	_ = c.Notify("exit", nil)
	return c.conn.Close()
}

// Conn is the underlying connection, for messages the helpers do not send.
func (c *Client) Conn() *jsonrpc2.Conn { return c.conn }
