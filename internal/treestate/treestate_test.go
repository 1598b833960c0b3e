package treestate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "note.hash"), []byte("skip me"), 0o600); err != nil {
		t.Fatal(err)
	}
	before, err := Describe(dir, func(rel string) bool { return strings.HasSuffix(rel, ".hash") })
	if err != nil {
		t.Fatal(err)
	}
	want := ". drwxr-xr-x\na drwxr-xr-x\na/f -rw------- 2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
	// TempDir's own mode depends on the umask; compare from the second line.
	if _, rest, _ := strings.Cut(before, "\n"); !strings.HasSuffix(want, rest) {
		t.Fatalf("got\n%s\nwant\n%s", before, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "f"), []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	if after, _ := Describe(dir, nil); after == before {
		t.Fatal("a changed file left the description as it was")
	}
	if got, err := Describe(filepath.Join(dir, "missing"), nil); err != nil || got != "" {
		t.Fatalf("a missing folder: %q, %v", got, err)
	}
}
