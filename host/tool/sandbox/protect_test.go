package sandbox

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestProtect: a grant that holds a protected path becomes grants of its entries down to it;
// grants that hold none stay as they are; a grant inside a hidden path is refused.
func TestProtect(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"home/project/.halo/runs", "home/project/src", "home/other", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"home/project/halo.lock", "home/project/README.md", "home/notes.txt"} {
		if err := os.WriteFile(filepath.Join(base, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A link in the project is not granted on the way (it would grant where it leads).
	if err := os.Symlink(filepath.Join(base, "elsewhere"), filepath.Join(base, "home/project/link")); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(base, "home/project")
	hidden := []string{filepath.Join(proj, ".halo")}
	readOnly := []string{filepath.Join(proj, "halo.lock")}
	rel := func(paths []string) string {
		var out []string
		for _, p := range paths {
			r, _ := filepath.Rel(base, p)
			out = append(out, r)
		}
		sort.Strings(out)
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		name          string
		in            Policy
		ro, rw, ls    string
		wantErrSubstr string
	}{
		{name: "the project, read-write", in: Policy{ReadWrite: []string{proj}},
			ro: "home/project/halo.lock", rw: "home/project/README.md home/project/src", ls: "home/project"},
		{name: "the project, read-only", in: Policy{ReadOnly: []string{proj}},
			ro: "home/project/README.md home/project/halo.lock home/project/src", ls: "home/project"},
		{name: "above the project", in: Policy{ReadWrite: []string{filepath.Join(base, "home")}},
			ro: "home/project/halo.lock", rw: "home/notes.txt home/other home/project/README.md home/project/src", ls: "home home/project"},
		{name: "beside the project", in: Policy{ReadWrite: []string{filepath.Join(base, "elsewhere")}, ReadOnly: []string{filepath.Join(proj, "src")}},
			ro: "home/project/src", rw: "elsewhere"},
		{name: "halo.lock alone, read-write", in: Policy{ReadWrite: []string{filepath.Join(proj, "halo.lock")}}, ro: "home/project/halo.lock"},
		{name: "in .halo", in: Policy{ReadOnly: []string{filepath.Join(proj, ".halo", "runs")}}, wantErrSubstr: "which no plugin is granted"},
		{name: ".halo itself", in: Policy{ReadWrite: []string{filepath.Join(proj, ".halo")}}, wantErrSubstr: "which no plugin is granted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.in.Protect(hidden, readOnly)
			if c.wantErrSubstr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErrSubstr) {
					t.Fatalf("got %v, want an error with %q", err, c.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []string{c.ro, c.rw, c.ls}
			if have := []string{rel(got.ReadOnly), rel(got.ReadWrite), rel(got.ListOnly)}; !reflect.DeepEqual(have, want) {
				t.Errorf("read-only, read-write, list-only:\n got %q\nwant %q", have, want)
			}
		})
	}
}
