package builtin

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"halolang.dev/halo/host/tool"
	"halolang.dev/halo/host/tool/sandbox"
	"halolang.dev/halo/plugins/workspace"
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

// What a declaration's arguments parse to is kept by the arguments themselves: another
// declaration (write: changed, an option added) is parsed anew, and one that does not
// parse is refused every time.
func TestParseCacheFollowsTheArguments(t *testing.T) {
	var c parseCache
	parses := 0
	open := func(named map[string]any) (workspace.Options, error) {
		d := tool.Declaration{Name: "W", Provider: "Workspace", Args: []any{"src"}, Named: named}
		return parse(&c, d, func() (workspace.Options, error) {
			parses++
			return workspace.ParseOptions(asDeclared(sdkDeclaration(d)))
		})
	}
	for range 2 {
		if o, err := open(map[string]any{"write": true}); err != nil || !o.Write || o.Root != "src" {
			t.Fatalf("write: true: %+v %v", o, err)
		}
	}
	if parses != 1 {
		t.Errorf("one declaration opened twice was parsed %d times, want 1", parses)
	}
	if o, err := open(map[string]any{"write": false}); err != nil || o.Write {
		t.Errorf("write: false after write: true: %+v %v", o, err)
	}
	for range 2 {
		if _, err := open(map[string]any{"write": "yes"}); err == nil {
			t.Errorf(`write: "yes" parsed`)
		}
	}
	if parses != 4 {
		t.Errorf("%d parses, want 4: each new declaration, and the one that fails each time", parses)
	}
}
