package plugin

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteWatch: a pin's watch sees a write made after it began, and only those; two pins of
// the same file (one watch descriptor) keep their own counts, and one ending leaves the other
// watching.
func TestWriteWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "exe")
	if err := os.WriteFile(path, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	open := func() (*os.File, changeWatch) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		w := watchWrites(f)
		if _, ok := w.changed(); !ok {
			t.Skip("skipped: inotify is not available here; the pin hashes the file again instead")
		}
		return f, w
	}
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f1, a := open()
	defer f1.Close()
	if changed, _ := a.changed(); changed {
		t.Fatal("a new watch reports a change")
	}
	write("v2")
	f2, b := open()
	defer f2.Close()
	if changed, _ := a.changed(); !changed {
		t.Error("the first watch missed a write")
	}
	if changed, _ := b.changed(); changed {
		t.Error("the second watch reports a write made before it began")
	}
	a.close()
	write("v3")
	if changed, _ := b.changed(); !changed {
		t.Error("the second watch missed a write after the first one ended")
	}
	b.close()
}
