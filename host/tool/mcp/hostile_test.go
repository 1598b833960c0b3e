package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

// hostileFlag makes the test binary act as a hostile MCP server over stdio.
const hostileFlag = "-halo-mcp-hostile"

func hostileCommand(t testing.TB, mode string) []string {
	t.Helper()
	return append(serverCommand(t)[:1], hostileFlag, mode)
}

// floodBytes is how much the flood mode writes without a newline before it stops. The
// review's server sent 1.5 GB and grew the host to 4.7 GB; a host without a limit would
// hold all of this, and a CI machine need not survive the full attack to show it.
const floodBytes = 256 << 20

// serveHostile is an MCP server as an attacker writes one: it answers initialize and
// tools/list properly, so the host trusts the connection, and answers tools/call as mode
// says. It returns when its stdin ends.
func serveHostile(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	send := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Method {
		case "initialize":
			version := ProtocolVersion
			if mode == "version" {
				version = "1999-01-01"
			}
			send(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, m.ID, version)
		case "tools/list":
			send(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"attack","inputSchema":{"type":"object"}}]}}`, m.ID)
		case "tools/call":
			hostileAnswer(out, m.ID, mode)
		}
	}
	return 0
}

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func hostileAnswer(out *bufio.Writer, id json.RawMessage, mode string) {
	head := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":`
	switch mode {
	case "flood":
		// One message that never ends: a text without a newline.
		out.WriteString(head + `{"content":[{"type":"text","text":"`)
		chunk := strings.Repeat("x", 1<<20)
		for n := 0; n < floodBytes; n += len(chunk) {
			if _, err := out.WriteString(chunk); err != nil {
				return
			}
		}
		out.Flush()
	case "deep":
		// Deeper than encoding/json decodes (10,000): 40 KB.
		out.WriteString(head + `{"structuredContent":` + nested(20000) + `}}` + "\n")
	case "deep-value":
		// Shallow enough to decode, too deep to keep: 6 KB.
		out.WriteString(head + `{"structuredContent":` + nested(3000) + `}}` + "\n")
	case "deep-text":
		// A text that holds a deep JSON document, which the host parses.
		lit, _ := json.Marshal(nested(100))
		out.WriteString(head + `{"content":[{"type":"text","text":` + string(lit) + `}]}}` + "\n")
	case "deep-error":
		out.WriteString(head + `{"isError":true,"content":[{"type":"text","text":"no"}],"structuredContent":` + nested(100) + `}}` + "\n")
	case "garbage":
		// First a request of the server's own that is not JSON, with the id of the call
		// in flight: it must not fail the call. Then the call's answer, not JSON either.
		out.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"method":"ping","params":{"a" 1}}` + "\n")
		out.WriteString(`{"jsonrpc":"2.0","method":"notifications/progress","params":` + nested(200) + `}` + "\n")
		out.WriteString(head + `{"content":[}` + "\n")
	case "version":
		out.WriteString(head + `{"content":[]}}` + "\n")
	}
	out.Flush()
}

// allocated runs f and returns how many bytes the whole test process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A server that sends a message without end (the review's 1.5 GB without a newline grew the
// host to 4.7 GB) gets as far as the limit: the host stops reading, stops the server, and
// the call fails with TOOL_LIMIT at once instead of holding everything.
func TestHostileFlood(t *testing.T) {
	for _, limit := range []int{0, 1 << 20} {
		name := "default limit"
		if limit != 0 {
			name = "max_result_bytes 1 MiB"
		}
		t.Run(name, func(t *testing.T) {
			p := openT(t, Config{Name: "H", Command: hostileCommand(t, "flood"), Env: serverEnv(), Timeout: 20 * time.Second, MaxResultBytes: limit})
			if _, err := p.Methods(context.Background()); err != nil {
				t.Fatal(err)
			}
			var err error
			start := time.Now()
			n := allocated(func() { _, err = call(t, p, "attack", `{}`) })
			want := limit
			if want == 0 {
				want = tool.DefaultMaxResultBytes
			}
			if errcode.Code(err) != tool.CodeLimit || tool.IsRetryable(err) || !strings.Contains(err.Error(), tool.Size(want)) {
				t.Fatalf("got %v, want a final TOOL_LIMIT naming the limit of %s", err, tool.Size(want))
			}
			// Reading up to the limit keeps about the limit in memory; a little more than
			// that is the most a bounded host may allocate, far below the flood.
			if bound := uint64(want + want/2 + 8<<20); n > bound {
				t.Errorf("the host allocated %d MiB during the call (bound %d MiB; the flood is %d MiB)", n>>20, bound>>20, floodBytes>>20)
			}
			t.Logf("allocated %d MiB in %v", n>>20, time.Since(start))
			waitDead(t, p)
		})
	}
}

func TestHostileDepth(t *testing.T) {
	for _, mode := range []string{"deep", "deep-value", "deep-text", "deep-error"} {
		t.Run(mode, func(t *testing.T) {
			p := openT(t, Config{Name: "H", Command: hostileCommand(t, mode), Env: serverEnv(), Timeout: 10 * time.Second})
			start := time.Now()
			out, err := call(t, p, "attack", `{}`)
			if errcode.Code(err) != tool.CodeLimit || !strings.Contains(err.Error(), "more than 64 deep") {
				t.Fatalf("got %.100s, %v; want TOOL_LIMIT for nesting", out, err)
			}
			// Failed on arrival, not at the timeout.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the call took %v", d)
			}
		})
	}
}

// An answer that is not JSON fails the call it answers at once, instead of being dropped
// and leaving the call to wait for its timeout.
func TestHostileGarbage(t *testing.T) {
	p := openT(t, Config{Name: "H", Command: hostileCommand(t, "garbage"), Env: serverEnv(), Timeout: 30 * time.Second})
	start := time.Now()
	_, err := call(t, p, "attack", `{}`)
	if errcode.Code(err) != tool.CodeToolError || !strings.Contains(err.Error(), "not valid JSON-RPC: invalid character '}'") {
		t.Fatalf("got %v, want TOOL_ERROR about the answer", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the call took %v: it waited for the timeout", d)
	}
}

// A server answering initialize with a protocol version no MCP client knows is refused for
// good (TOOL_CONFIG), not reported as a crash to retry.
func TestUnsupportedProtocolVersion(t *testing.T) {
	p := openT(t, Config{Name: "H", Command: hostileCommand(t, "version"), Env: serverEnv()})
	_, err := p.Methods(context.Background())
	var te *tool.Error
	if !errors.As(err, &te) || te.Code != tool.CodeToolConfig || te.Retryable || !strings.Contains(te.Message, "protocol version 1999-01-01") {
		t.Fatalf("got %#v, want a final TOOL_CONFIG naming the version", err)
	}
}
