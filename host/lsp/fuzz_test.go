package lsp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sourcegraph/jsonrpc2"
	protocol "github.com/tliron/glsp/protocol_3_16"
)

// FuzzServer feeds the server a malformed message and a file that may not parse: it answers
// every request after them (an error answer counts; a closed connection does not), and bytes
// that are not messages at all end the session only when the input ends, and cleanly.
func FuzzServer(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*.halo")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}`), b)
		}
	}
	f.Add([]byte(`{not json`), []byte("tool A : (\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"textDocument/completion","params":{"textDocument":{"uri":"file:///x.halo"},"position":{"line":99999,"character":4294967295}}}`), []byte("agent A [openai/gpt-4o]\n  equips "))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.halo","version":2},"contentChanges":[{"range":{"start":{"line":5,"character":9},"end":{"line":0,"character":0}},"text":"é"}]}}`), []byte("policy P : Block(PII) & Max"))
	f.Fuzz(func(t *testing.T, body, doc []byte) {
		s := start(t, Config{Debounce: time.Millisecond})
		frame := fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
		if _, err := io.WriteString(s.in, frame+string(body)); err != nil {
			t.Fatal(err)
		}
		uri := protocol.DocumentUri("file:///a.halo")
		if err := s.c.Open(uri, 1, string(doc)); err != nil {
			t.Fatal(err)
		}
		at := docPos(uri, protocol.Position{Line: 0, Character: 1})
		for _, method := range []string{"textDocument/hover", "textDocument/completion", "textDocument/definition", "textDocument/documentSymbol", "textDocument/formatting"} {
			var r any
			if err := s.c.Call(method, at, &r); err != nil {
				var rpcErr *jsonrpc2.Error
				if !errors.As(err, &rpcErr) {
					t.Fatalf("%s after a malformed message and the file %q: %v", method, doc, err)
				}
			}
		}
		// Bytes that are not a message, then the end of the input.
		io.WriteString(s.in, string(body))
		s.in.Close()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not end with its input")
		}
	})
}
