package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newTree makes a workspace root with a few files, and a secret beside it (outside the root).
func newTree(t *testing.T, write bool) (*Workspace, string, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "secret.txt")
	mustWrite(t, outside, "TOP SECRET\n")
	mustWrite(t, filepath.Join(root, "notes.md"), "a\nb\n")
	mustWrite(t, filepath.Join(root, "src", "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	mustWrite(t, filepath.Join(root, "src", "util.go"), "package main\n\n// hello helper\nfunc helper() {}\n")
	mustWrite(t, filepath.Join(root, ".git", "config"), "hello from git\n")
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret.txt", filepath.Join(root, "relescape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(base, filepath.Join(root, "updir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.md", filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	w, err := Open(root, write, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, root, outside
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantFailure checks that err is a domain failure whose message holds want.
func wantFailure(t *testing.T, err error, want string) {
	t.Helper()
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("got error %v (%T), want a *Failure containing %q", err, err, want)
	}
	if !strings.Contains(f.Message, want) {
		t.Fatalf("failure %q does not contain %q", f.Message, want)
	}
}

func TestEscapesAreRefused(t *testing.T) {
	w, _, outside := newTree(t, true)
	cases := []struct {
		name, path, want string
	}{
		{"dotdot", "../secret.txt", "leaves the workspace root"},
		{"dotdot inside a path", "src/../../secret.txt", "leaves the workspace root"},
		{"bare dotdot", "..", "leaves the workspace root"},
		{"absolute", outside, "is absolute"},
		{"absolute etc", "/etc/passwd", "is absolute"},
		{"nul byte", "notes.md\x00.txt", "NUL byte"},
		{"symlink to an absolute path", "escape", "outside the workspace root"},
		{"relative symlink out", "relescape", "outside the workspace root"},
		{"through a symlinked folder", "updir/secret.txt", "outside the workspace root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.Read(c.path, 0)
			wantFailure(t, err, c.want)
			_, err = w.Write(c.path, "pwned")
			wantFailure(t, err, c.want)
			_, err = w.Edit(c.path, "TOP", "pwned")
			wantFailure(t, err, c.want)
			_, err = w.Search("SECRET", c.path)
			wantFailure(t, err, c.want)
		})
	}
	got, err := os.ReadFile(outside)
	if err != nil || string(got) != "TOP SECRET\n" {
		t.Fatalf("the file outside the root changed: %q %v", got, err)
	}
	// A symlink that stays inside the root is fine.
	if r, err := w.Read("inside", 0); err != nil || r.Content != "a\nb\n" {
		t.Fatalf("read through an inside symlink: %+v %v", r, err)
	}
	// Deleting an escaping link removes the link, never its target.
	if _, err := w.Delete("escape", false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("target of the deleted link is gone: %v", err)
	}
}

func TestSearchDoesNotFollowLinksOut(t *testing.T) {
	w, _, _ := newTree(t, false)
	res, err := w.Search("SECRET", ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 0 {
		t.Fatalf("search found text outside the root: %+v", res.Matches)
	}
}

func TestRead(t *testing.T) {
	w, root, _ := newTree(t, false)
	r, err := w.Read("notes.md", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "a\nb\n" || r.Lines != 2 || r.Size != 4 || r.Truncated {
		t.Fatalf("read = %+v", r)
	}
	_, err = w.Read("missing.md", 0)
	wantFailure(t, err, "no such file")
	_, err = w.Read("src", 0)
	wantFailure(t, err, "is a folder")

	mustWrite(t, filepath.Join(root, "bin.dat"), "\x00\x01\x02")
	_, err = w.Read("bin.dat", 0)
	wantFailure(t, err, "binary")

	small, err := Open(root, false, Limits{MaxRead: 5, MaxWrite: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	mustWrite(t, filepath.Join(root, "long.txt"), "0123456789abc")
	r, err = small.Read("long.txt", 0)
	if err != nil || r.Content != "01234" || !r.Truncated || !strings.Contains(r.Note, "offset 5") {
		t.Fatalf("cut read = %+v, %v", r, err)
	}
	r, err = small.Read("long.txt", 10)
	if err != nil || r.Content != "abc" || r.Truncated {
		t.Fatalf("read from offset = %+v, %v", r, err)
	}
	// A cut never splits a multi-byte character.
	mustWrite(t, filepath.Join(root, "utf.txt"), "abcdé")
	r, err = small.Read("utf.txt", 0)
	if err != nil || r.Content != "abcd" {
		t.Fatalf("cut inside a rune = %+v, %v", r, err)
	}
}

func TestWriteEditDelete(t *testing.T) {
	w, root, _ := newTree(t, true)
	res, err := w.Write("new/deep/file.txt", "one two two\n")
	if err != nil || !res.Created || res.Bytes != 12 {
		t.Fatalf("write = %+v, %v", res, err)
	}
	res, err = w.Write("new/deep/file.txt", "one two three\n")
	if err != nil || res.Created {
		t.Fatalf("overwrite = %+v, %v", res, err)
	}
	_, err = w.Edit("new/deep/file.txt", "missing", "x")
	wantFailure(t, err, "not found")
	mustWrite(t, filepath.Join(root, "dup.txt"), "x x x")
	_, err = w.Edit("dup.txt", "x", "y")
	wantFailure(t, err, "occurs 3 times")
	_, err = w.Edit("dup.txt", "", "y")
	wantFailure(t, err, "old is empty")
	e, err := w.Edit("new/deep/file.txt", "three", "3")
	if err != nil || e.Replaced != 1 {
		t.Fatalf("edit = %+v, %v", e, err)
	}
	b, _ := os.ReadFile(filepath.Join(root, "new/deep/file.txt"))
	if string(b) != "one two 3\n" {
		t.Fatalf("after edit: %q", b)
	}
	_, err = w.Delete("new", false)
	wantFailure(t, err, "not empty")
	if _, err := w.Delete("new", true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("new/ still exists: %v", err)
	}
	_, err = w.Delete(".", true)
	wantFailure(t, err, "cannot be deleted")
	_, err = w.Delete("", true)
	wantFailure(t, err, "cannot be deleted")
	_, err = w.Write("big.txt", strings.Repeat("x", int(DefaultLimits.MaxWrite)+1))
	wantFailure(t, err, "the limit is")
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	w, root, _ := newTree(t, false)
	_, err := w.Write("x.txt", "x")
	wantFailure(t, err, "read-only")
	_, err = w.Edit("notes.md", "a", "b")
	wantFailure(t, err, "read-only")
	_, err = w.Delete("notes.md", false)
	wantFailure(t, err, "read-only")
	if _, err := os.Stat(filepath.Join(root, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("read-only workspace wrote a file")
	}
}

func TestList(t *testing.T) {
	w, _, _ := newTree(t, false)
	l, err := w.List(".", false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range l.Entries {
		got = append(got, e.Path+":"+e.Type)
	}
	want := ".git:dir escape:symlink inside:symlink notes.md:file relescape:symlink src:dir updir:symlink"
	if strings.Join(got, " ") != want {
		t.Fatalf("list = %s\nwant %s", strings.Join(got, " "), want)
	}
	l, err = w.List("src", true)
	if err != nil || len(l.Entries) != 2 || l.Entries[0].Path != "src/main.go" || l.Entries[0].Size == 0 {
		t.Fatalf("list src = %+v, %v", l, err)
	}
	l, err = w.List("", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Entries {
		if strings.HasPrefix(e.Path, ".git/") {
			t.Fatalf("recursive list went into .git: %s", e.Path)
		}
	}
	_, err = w.List("notes.md", false)
	wantFailure(t, err, "is a file")
}

func TestSearch(t *testing.T) {
	w, _, _ := newTree(t, false)
	s, err := w.Search(`hel+o`, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range s.Matches {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	// .git is skipped; each matching line once.
	if strings.Join(got, " ") != "src/main.go:4 src/util.go:3" {
		t.Fatalf("search = %v", got)
	}
	_, err = w.Search(`(`, "")
	wantFailure(t, err, "not a valid regular expression")
	_, err = w.Search(`x`, "nope")
	wantFailure(t, err, "no such file")
}
