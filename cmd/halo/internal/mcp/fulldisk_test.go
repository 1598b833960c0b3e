package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/internal/smallfs"
)

// On a full disk, halo mcp answers the calls whose runs it cannot save with a tool error
// carrying STORE (the first commit's calls may be answered before it fails: within the
// commit window docs/cli.md states), and once its input ends says that records could not be
// saved and exits 1. Needs root, for a small filesystem of its own (CI runs as root).
func TestFullDisk(t *testing.T) {
	dir := smallfs.Mount(t, 640<<10)
	files := map[string]string{"flow.halo": benchFlow, "mocks.json": `{"Greeter.greet": "Hello!"}`}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := startMCP(t, dir, "", nil, "--mocks", "mocks.json", "flow.halo")
	big := strings.Repeat("x", 3000)
	answered, refused := 0, ""
	for i := 0; i < 2000 && refused == ""; i++ {
		res := call(t, p, "Greet", map[string]any{"name": big + string(rune('a'+i%26))})
		switch {
		case !res.IsError && text(res) == "Hello!":
			answered++
		case res.IsError:
			refused = text(res)
		default:
			t.Fatalf("call %d: %q", i, text(res))
		}
	}
	if answered == 0 || !strings.Contains(refused, "the run ended completed, but its record could not be saved") ||
		!strings.Contains(refused, "the disk is full") || !strings.Contains(refused, "[STORE]") {
		t.Fatalf("calls on a full disk: %d answered, then %q", answered, refused)
	}
	p.c.Close()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("no exit")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(p.errText(), "saving run records") {
		t.Errorf("halo mcp ended with records it could not save: exit status %d, want 1 saying so\n%s", code, p.errText())
	}
}
