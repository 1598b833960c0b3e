package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"halolang.dev/halo/sdk/sdktest"
)

// The provider through the real gRPC path, as the host reaches it.
func TestProviderThroughSDK(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := sdktest.Start(t, Provider())

	ro := c.Tool("Workspace", nil, root)
	var names []string
	for _, m := range ro.Methods() {
		names = append(names, m.Name+":"+string(m.Effect))
	}
	if strings.Join(names, " ") != "read:read list:read search:read" {
		t.Fatalf("read-only methods = %v", names)
	}
	var r ReadResult
	if err := ro.Call("read", map[string]any{"path": "a.txt"}).Decode(&r); err != nil || r.Content != "one\ntwo\n" {
		t.Fatalf("read = %+v, %v", r, err)
	}
	if out := ro.Call("read", map[string]any{"path": "../x"}); out.Failure == "" || !strings.Contains(string(out.Detail), "leaves the workspace root") {
		t.Fatalf("escape = %s", out)
	}
	if out := ro.Call("read", map[string]any{"path": "a.txt", "bogus": 1}); out.Code != "TOOL_ARGUMENT" {
		t.Fatalf("unknown argument = %s", out)
	}
	if out := ro.Call("read", map[string]any{}); out.Code != "TOOL_ARGUMENT" {
		t.Fatalf("missing path = %s", out)
	}

	rw := c.Tool("Workspace", map[string]any{"write": true}, root)
	if len(rw.Methods()) != 6 {
		t.Fatalf("writable methods = %v", rw.Methods())
	}
	var e EditResult
	if err := rw.Call("edit", map[string]any{"path": "a.txt", "old": "two", "new": "2"}).Decode(&e); err != nil || e.Replaced != 1 {
		t.Fatalf("edit = %+v, %v", e, err)
	}

	for _, c2 := range []struct {
		named map[string]any
		args  []any
		want  string
	}{
		{nil, nil, "needs a root folder"},
		{nil, []any{filepath.Join(root, "missing")}, "no such file"},
		{nil, []any{filepath.Join(root, "a.txt")}, "not a folder"},
		{map[string]any{"write": "yes"}, []any{root}, "write"},
	} {
		if _, err := c.Configure("Workspace", c2.named, c2.args...); err == nil || !strings.Contains(err.Error(), c2.want) {
			t.Errorf("configure %v %v: %v, want %q", c2.named, c2.args, err, c2.want)
		}
	}
}
