package bash

import (
	"strings"
	"testing"

	"halolang.dev/halo/sdk/sdktest"
)

func TestProviderThroughSDK(t *testing.T) {
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent", "TOKEN": "t0k", "SECRET": "never"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c := sdktest.Start(t, Provider(getenv))
	dir := t.TempDir()
	sh := c.Tool("Bash", map[string]any{"env": []any{"TOKEN"}, "timeout_ms": 5000}, dir)
	if m := sh.Methods(); len(m) != 1 || m[0].Name != "run" || m[0].Effect != "external" {
		t.Fatalf("methods = %+v", m)
	}
	var r Result
	if err := sh.Call("run", map[string]any{"command": "pwd; echo ${TOKEN:-none} ${SECRET:-none}; exit 4"}).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 4 || r.Stdout != dir+"\nt0k none\n" {
		t.Fatalf("run = %+v", r)
	}
	if out := sh.Call("run", map[string]any{"command": ""}); out.Code != "TOOL_ARGUMENT" {
		t.Fatalf("empty command = %s", out)
	}
	for _, bad := range []map[string]any{{"env": []any{"A B"}}, {"timeout_ms": -1}, {"shell": "zsh"}} {
		if _, err := c.Configure("Bash", bad); err == nil {
			t.Errorf("configure %v: no error", bad)
		} else if !strings.Contains(err.Error(), "Bash") {
			t.Errorf("configure %v: %v does not name the provider", bad, err)
		}
	}
}
