package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cloned repository's folders go where its links lead only when they stay in the project:
// data -> ../secret (or "../secret" itself) is refused, a folder named absolute is granted
// where its links lead, one in a hidden folder is refused however it is named; a link deeper
// in the project (real/out -> ../../secret) is followed as one at its top is.
func TestResolveGrant(t *testing.T) {
	root := t.TempDir()
	project, secret := filepath.Join(root, "project"), filepath.Join(root, "secret")
	for _, d := range []string{filepath.Join(project, "real"), filepath.Join(project, ".halo", "runs"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../secret", filepath.Join(project, "data")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".halo/runs", filepath.Join(project, "records")); err != nil {
		t.Fatal(err)
	}
	// A link below a folder that is none: the path is looked at entry by entry below the
	// project (resolveBelow), and the link found there is followed.
	if err := os.Symlink("../../secret", filepath.Join(project, "real", "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(project, "real", "up")); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(root, "linked")
	if err := os.Symlink(project, linked); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ declared, dir, want, refused string }{
		{"./real", project, filepath.Join(project, "real"), ""},
		{"real", linked, filepath.Join(project, "real"), ""},
		{"./new", project, filepath.Join(project, "new"), ""},
		{"data", project, "", "resolves to " + secret + ", outside the project folder " + project},
		{"../secret", project, "", "outside the project folder"},
		{"real/out", project, "", "resolves to " + secret + ", outside the project folder " + project},
		{"real/out", linked, "", "resolves to " + secret + ", outside the project folder " + project},
		{"real/up/real", linked, filepath.Join(project, "real"), ""},
		{"real/up/.halo", project, "", "is in the project's .halo folder"},
		{".", linked, project, ""},
		{filepath.Join(project, "data"), project, secret, ""},
		{"records", project, "", "records is in the project's .halo folder"},
		{filepath.Join(project, ".halo"), project, "", "is in the project's .halo folder"},
	} {
		abs := tc.declared
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(tc.dir, abs)
		}
		got, err := ResolveGrant(tc.declared, filepath.Clean(abs), tc.dir, ".halo")
		switch {
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s in %s: %q, %v; want refused (%s)", tc.declared, tc.dir, got, err, tc.refused)
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("%s in %s: %q, %v; want %s", tc.declared, tc.dir, got, err, tc.want)
		}
	}
}
