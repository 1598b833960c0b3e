package store

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"halolang.dev/halo/internal/usertest"
)

// Every kind of change a search must not miss, with the folders watched (Linux) and without
// (every file looked at, as on other systems): each change is made, then the next search
// finds the new text, never the old. Run again as an unprivileged user.
func TestFileStoreSeesEveryChangeBeforeTheNextSearch(t *testing.T) {
	for _, watched := range []bool{true, false} {
		name := map[bool]string{true: "watched", false: "looked-at"}[watched]
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := project(t, map[string]string{
				"docs/a.md":        "# Alpha\n\napples are red\n",
				"docs/deep/b.md":   "# Beta\n\nbananas are yellow\n",
				"shared/target.md": "# Target\n\ncherries are dark\n",
				"other/h.md":       "# Hard\n\ndates are sweet\n",
			})
			must(t, os.Symlink("../shared/target.md", filepath.Join(dir, "docs/link.md")))
			must(t, os.Link(filepath.Join(dir, "other/h.md"), filepath.Join(dir, "docs/hard.md")))
			set := NewSet(Config{Dir: dir})
			defer set.Close()
			docs := openStore(t, set, fileDecl("Docs", "docs/**/*.md"))
			notes := openStore(t, set, fileDecl("Notes", "notes/sub/*.md"))
			for _, st := range []*Store{docs, notes} {
				if !watched {
					st.watch.close()
				}
				if _, err := st.Refresh(ctx, Op{}, false); err != nil {
					t.Fatal(err)
				}
				if watched && runtime.GOOS == "linux" && !st.watch.quiet() {
					t.Fatalf("%s: the watch is not quiet after a refresh (no inotify, or %s is not on a local file system)", st.spec.Name, dir)
				}
			}
			find := func(st *Store, query, want string) {
				t.Helper()
				hits, err := st.Search(ctx, query, 1, Op{})
				if err != nil {
					t.Fatal(err)
				}
				if want == "" {
					if len(hits) > 0 {
						t.Errorf("%q found %q, want nothing", query, hits[0].Text)
					}
					return
				}
				if len(hits) == 0 || !strings.Contains(hits[0].Text, want) {
					t.Errorf("%q found %+v, want %q", query, hits, want)
				}
			}
			find(docs, "cherries", "dark")
			find(docs, "dates", "sweet")

			// A file written over in place.
			writeFile(t, dir, "docs/a.md", "# Alpha\n\napples are green now\n")
			find(docs, "apples", "green")
			// A file replaced by a rename, as editors save.
			writeFile(t, dir, "docs/deep/b.tmp", "# Beta\n\nbananas are brown, ripe\n")
			must(t, os.Rename(filepath.Join(dir, "docs/deep/b.tmp"), filepath.Join(dir, "docs/deep/b.md")))
			find(docs, "bananas", "brown")
			// A folder made, searched while empty, then a file in it.
			must(t, os.Mkdir(filepath.Join(dir, "docs/new"), 0o755))
			find(docs, "elderberries", "")
			writeFile(t, dir, "docs/new/e.md", "# New\n\nelderberries are small\n")
			find(docs, "elderberries", "small")
			// The target of a link, in a folder no pattern reads.
			writeFile(t, dir, "shared/target.md", "# Target\n\ncherries are sour this year\n")
			find(docs, "cherries", "sour")
			// A file changed through its other name.
			f, err := os.OpenFile(filepath.Join(dir, "other/h.md"), os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			f.WriteString("\nfigs are sweeter\n")
			f.Close()
			find(docs, "figs", "sweeter")
			// A removed file; a removed folder made again.
			must(t, os.Remove(filepath.Join(dir, "docs/a.md")))
			find(docs, "apples", "")
			must(t, os.RemoveAll(filepath.Join(dir, "docs/deep")))
			find(docs, "bananas", "")
			writeFile(t, dir, "docs/deep/b.md", "# Beta\n\nbananas are back\n")
			find(docs, "bananas", "back")

			// A pattern's base that did not exist when the store was indexed.
			find(notes, "grapes", "")
			must(t, os.MkdirAll(filepath.Join(dir, "notes"), 0o755))
			find(notes, "grapes", "")
			writeFile(t, dir, "notes/sub/g.md", "# Grapes\n\ngrapes grow on vines\n")
			find(notes, "grapes", "vines")

			// Nothing changed since: a watched store is quiet again.
			find(docs, "bananas", "back")
			if watched && runtime.GOOS == "linux" && !docs.watch.quiet() {
				t.Error("the watch is not quiet after a search that found the changes")
			}
		})
	}
	usertest.Rerun(t)
}

// A VectorStore over files follows them the same way, embedding the changed file's chunks.
func TestVectorStoreOverFilesSeesAChangeBeforeTheNextSearch(t *testing.T) {
	ctx := context.Background()
	dir := project(t, map[string]string{"notes/a.md": "# A\n\nkiwis grow in orchards\n", "notes/b.md": "# B\n\nlemons taste sour\n"})
	set := NewSet(Config{Dir: dir, Mock: true})
	defer set.Close()
	st := openStore(t, set, vectorDecl("V", map[string]any{"from": "notes/**/*.md"}))
	if hits, err := st.Search(ctx, "kiwis orchards", 1, Op{}); err != nil || len(hits) != 1 || !strings.Contains(hits[0].Text, "orchards") {
		t.Fatalf("%+v %v", hits, err)
	}
	writeFile(t, dir, "notes/a.md", "# A\n\nkiwis grow on vines in gardens\n")
	if hits, err := st.Search(ctx, "kiwis gardens vines", 1, Op{}); err != nil || len(hits) != 1 || !strings.Contains(hits[0].Text, "gardens") {
		t.Errorf("after a change: %+v %v", hits, err)
	}
}
