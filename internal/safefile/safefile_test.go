package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// What a repository can commit in a file's place: a named pipe and a folder are refused
// without waiting, a file over the limit without being read, a missing one is not-exist.
func TestReadRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("ok", "12345")
	write("big", "123456")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for name, want := range map[string]error{"ok": nil, "big": ErrTooLarge, "pipe": ErrNotRegular, "folder": ErrNotRegular, "missing": fs.ErrNotExist} {
		for way, read := range map[string]func() ([]byte, error){
			"Read":   func() ([]byte, error) { return Read(filepath.Join(dir, name), 5) },
			"ReadIn": func() ([]byte, error) { return ReadIn(root, name, 5) },
		} {
			type result struct {
				b   []byte
				err error
			}
			done := make(chan result, 1)
			go func() {
				b, err := read()
				done <- result{b, err}
			}()
			select {
			case r := <-done:
				switch {
				case want == nil && (r.err != nil || string(r.b) != "12345"):
					t.Errorf("%s(%s): %q, %v", way, name, r.b, r.err)
				case want != nil && !errors.Is(r.err, want):
					t.Errorf("%s(%s): %v, want %v", way, name, r.err, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s(%s) still waits after 10 s", way, name)
			}
		}
	}
}
