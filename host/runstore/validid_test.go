package runstore_test

import (
	"regexp"
	"strings"
	"testing"

	"halolang.dev/halo/host/runstore"
)

// runIDRule is what a run id is, as a regular expression: ValidID must agree with it.
var runIDRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// FuzzValidID: ValidID accepts exactly the ids runIDRule does.
func FuzzValidID(f *testing.F) {
	for _, id := range []string{"", "a", "3f9c0a7be41d2268", "A_b-9", "_a", "-a", "a.json", "../x", "a/b", ".a",
		"é", "a\x00", "a b", strings.Repeat("a", 128), strings.Repeat("a", 129), "a\n", "Z-"} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := runstore.ValidID(id), runIDRule.MatchString(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	})
}
