// Package smallfs gives a test a filesystem of its own that fills up: a tmpfs of a few
// hundred KiB mounted at a new temporary folder, for what halo does on a full disk. Only
// root may mount one (CI runs the tests as root); elsewhere the test is skipped, saying why.
package smallfs

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Mount mounts a tmpfs of size bytes at a new temporary folder of t's, unmounted when t
// ends, and returns the folder; without root it skips t.
func Mount(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs at %s: %v %s", dir, err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Grow gives the tmpfs Mount made at dir size bytes, as when someone frees space.
func Grow(t testing.TB, dir string, size int) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", size), dir).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs at %s: %v %s", dir, err, out)
	}
}
