package plugin_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool/plugin"
)

// The attacks of attack_test.go that need Linux's system calls: the rename that exchanges two
// files.

// TestPinCannotBeRaced is item 7 of the red-team review: the host hashed the executable at its
// path, then executed the path; swapping the file in between ran an unpinned binary in 2 of 16
// tries. Here every start is raced in that very window (after the check, before the exec),
// two ways: exchanging the pinned file with another executable by rename (a new file at the
// path): the pinned executable must still be what runs; and rewriting the pinned file in
// place: the start must be refused (PACKAGE_INTEGRITY). The other executable (the world-time plugin, which
// serves WorldTime) never serves a start.
func TestPinCannotBeRaced(t *testing.T) {
	probe, err := os.ReadFile(bins.probe)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(bins.worldtime)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(probe)
	for _, way := range []string{"rename", "in place"} {
		t.Run(way, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "plugin")
			spare := filepath.Join(dir, "spare")
			// put makes path a new file holding content, as an installer would.
			put := func(content []byte) {
				t.Helper()
				if err := os.WriteFile(spare, content, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(spare, path); err != nil {
					t.Fatal(err)
				}
			}
			swaps := 0
			swap := func() { // the swapper, in the window between the pin's check and the exec
				var err error
				switch way {
				case "rename":
					err = unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, spare, unix.RENAME_EXCHANGE)
				case "in place":
					err = os.WriteFile(path, other, 0)
				}
				if err != nil {
					t.Errorf("swap: %v", err)
					return
				}
				swaps++
			}
			opts := plugin.WithBeforeExec(plugin.Options{StartTimeout: 10 * time.Second}, swap)
			const starts = 8
			for i := range starts {
				put(probe)
				if way == "rename" {
					if err := os.WriteFile(spare, other, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				c := plugin.New(plugin.Command{Name: "Pinned", Path: path, SHA256: sum[:], Getenv: hostEnv(map[string]string{"PATH": os.Getenv("PATH")})}, opts)
				specs, err := c.Describe(context.Background())
				c.Close()
				var names []string
				for _, s := range specs {
					names = append(names, s.Name)
				}
				switch {
				case err == nil && (len(specs) != 1 || specs[0].Name != "Probe"):
					t.Fatalf("start %d ran an executable that is not the pinned one: it serves %v", i, names)
				case way == "rename" && err != nil:
					t.Fatalf("start %d: the file at the path was exchanged, and the pinned executable, still open, did not run: %v", i, err)
				case way == "in place" && (errcode.Code(err) != plugin.CodeIntegrity || !strings.Contains(err.Error(), "changed while it was being started")):
					t.Fatalf("start %d: the pinned file was rewritten before it ran, and the start was not refused: %v %v", i, names, err)
				}
			}
			if swaps != starts {
				t.Fatalf("%d swaps in %d starts: the race was not run at every start", swaps, starts)
			}
		})
	}
}
