package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"halolang.dev/halo/host/tool/sandbox"
)

// A cached project policy is used only while the folders it was made from are as they
// were: an entry created at the project's top is granted by the next policy, and one
// removed is no longer granted; while they are unchanged the policy is not even made.
func TestProtectCacheFollowsTheProject(t *testing.T) {
	proj, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "a.txt"), []byte("a"), 0o644)
	var c protectCache
	made := 0
	granted := func() []string {
		t.Helper()
		pol, d, err := c.protect("k", func() sandbox.Policy { made++; return sandbox.Policy{ReadWrite: []string{proj}} }, proj)
		if err != nil || d == "" {
			t.Fatal(err)
		}
		want, err := protectProject(sandbox.Policy{ReadWrite: []string{proj}}, proj)
		if err != nil || !slices.Equal(pol.ReadWrite, want.ReadWrite) || !slices.Equal(pol.ListOnly, want.ListOnly) {
			t.Fatalf("cached policy %+v, made now %+v", pol, want)
		}
		return pol.ReadWrite
	}
	first := granted()
	if !slices.Contains(first, filepath.Join(proj, "a.txt")) {
		t.Fatalf("the project's file is not granted: %v", first)
	}
	granted() // from the cache: the policy is not made again
	if made != 1 {
		t.Errorf("the policy was made %d times for two protects of unchanged folders, want 1", made)
	}
	os.WriteFile(filepath.Join(proj, "b.txt"), []byte("b"), 0o644)
	if g := granted(); !slices.Contains(g, filepath.Join(proj, "b.txt")) {
		t.Errorf("a file created after the policy was cached is not granted: %v", g)
	}
	os.Remove(filepath.Join(proj, "a.txt"))
	if g := granted(); slices.Contains(g, filepath.Join(proj, "a.txt")) {
		t.Errorf("a removed file is still granted: %v", g)
	}
}
