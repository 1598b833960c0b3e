package workspace

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzClean checks the first layer of confinement: whatever a model sends, clean either
// refuses it or returns a path that stays under the root lexically (os.Root then handles
// symbolic links).
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", ".", "a/b", "../x", "/etc/passwd", "a/../../b", "a\x00b", `\x`, "a/./b/", "..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := clean(p)
		if err != nil {
			return
		}
		if c != "." && !filepath.IsLocal(c) {
			t.Fatalf("clean(%q) = %q, which is not local", p, c)
		}
		if strings.ContainsRune(c, 0) {
			t.Fatalf("clean(%q) kept a NUL", p)
		}
	})
}
