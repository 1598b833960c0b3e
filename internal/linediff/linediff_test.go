package linediff

import "testing"

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		want, got []string
		max       int
		diff      string
	}{
		{[]string{"a", "b", "c"}, []string{"a", "c"}, 10, "  a\n- b\n  c\n"},
		{[]string{"a"}, []string{"a", "b"}, 10, "  a\n+ b\n"},
		{[]string{"x", "a"}, []string{"y", "a"}, 10, "- x\n+ y\n  a\n"},
		{nil, nil, 10, ""},
		// Past the limit: want whole, then got.
		{[]string{"a", "b"}, []string{"a"}, 1, "- a\n- b\n+ a\n"},
	} {
		if got := Diff(tc.want, tc.got, tc.max); got != tc.diff {
			t.Errorf("Diff(%q, %q, %d) = %q, want %q", tc.want, tc.got, tc.max, got, tc.diff)
		}
	}
}
