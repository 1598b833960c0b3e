package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzStdio feeds arbitrary input to the stdio transport, with a small size limit: it never
// panics or hangs, and everything it writes is one JSON object per line.
func FuzzStdio(f *testing.F) {
	fx := newFixture(f, flow, greeter())
	fx.srv.cfg.MaxRequestBytes = 256
	f.Add([]byte(initLine + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Hello","arguments":{"name":"Ada"}}}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/list"}` + "\n[1,2]\n{\n\n" + strings.Repeat("a", 300) + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}` + "\n" + `{"id":1,"result":{}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := fx.srv.ServeStdio(ctx, bytes.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		if ctx.Err() != nil {
			t.Fatalf("ServeStdio ran until its deadline on %q", in)
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["jsonrpc"] != "2.0" {
				t.Fatalf("output line %q is not a JSON-RPC message", sc.Text())
			}
		}
	})
}

// TestGuessID: the id of a message too large to read is found at its start or its end.
func TestGuessID(t *testing.T) {
	for _, tc := range []struct{ head, tail, want string }{
		{`{"jsonrpc":"2.0","id":42,"method":"x","params":{"id":7`, `..."}}`, "42"},
		{`{"jsonrpc":"2.0","method":"x","params":{"id":7,"a":"`, `...","id":9}},"id":"last"}`, `"last"`},
		{`{"method":"x","params":{"a":"`, `..."}}`, ""},
		{`{"id":"a\"b","params":`, ``, `"a\"b"`},
	} {
		if got := string(guessID([]byte(tc.head), []byte(tc.tail))); got != tc.want {
			t.Errorf("guessID(%q, %q) = %q, want %q", tc.head, tc.tail, got, tc.want)
		}
	}
}
