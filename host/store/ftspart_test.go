package store

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// segments is how many segments the store's FTS5 table has, from its structure record.
func segments(t *testing.T, st *Store) int {
	t.Helper()
	var b []byte
	if err := st.be.(*sqliteStore).db.QueryRow(`SELECT block FROM chunks_fts_data WHERE id = ?`, ftsStructureRowid).Scan(&b); err != nil {
		t.Fatal(err)
	}
	s, ok := decodeStructure(b)
	if !ok {
		t.Fatalf("structure record %x does not decode", b)
	}
	if e := s.encode(); string(e) != string(b) {
		t.Fatalf("structure record %x encodes again as %x", b, e)
	}
	n := 0
	for _, l := range s.levels {
		n += len(l.segments)
	}
	return n
}

// checkIntegrity has FTS5 check its index against the chunks' text.
func checkIntegrity(t *testing.T, st *Store) {
	t.Helper()
	if _, err := st.be.(*sqliteStore).db.Exec(`INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)`); err != nil {
		t.Fatal(err)
	}
}

// A batch indexed on two cores, its second part's segments added to the table, is the index
// FTS5 makes of it alone: FTS5's integrity check passes, and every query finds the same chunks
// with the same scores, after the first build and after files change, vanish and are added.
func TestSplitBatchIndexesAsOne(t *testing.T) {
	dir := t.TempDir()
	markdownCorpus(t, dir, 120, 20<<10) // 2.4 MB, one batch
	ctx := context.Background()
	open := func(name string, split bool) *Store {
		set := NewSet(Config{Dir: dir})
		t.Cleanup(func() { set.Close() })
		st := openStore(t, set, fileDecl(name, "docs/**/*.md"))
		if !split {
			unsplit(st)
		}
		return st
	}
	split, one := open("Split", true), open("One", false)
	refresh := func() {
		t.Helper()
		for _, st := range []*Store{split, one} {
			if _, err := st.Refresh(ctx, Op{}, false); err != nil {
				t.Fatal(err)
			}
			checkIntegrity(t, st)
		}
	}
	vocab := words(rand.New(rand.NewSource(1)), 20000)
	r := rand.New(rand.NewSource(5))
	same := func(when string) {
		t.Helper()
		for i := 0; i < 60; i++ {
			q := vocab[r.Intn(300)] + " " + vocab[r.Intn(20000)]
			a, err := split.Search(ctx, q, 8, Op{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := one.Search(ctx, q, 8, Op{})
			if err != nil {
				t.Fatal(err)
			}
			if len(a) == 0 && i < 5 {
				t.Fatalf("%s: %q finds nothing", when, q)
			}
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: %q finds\n%v\nsplit, and\n%v\nin one", when, q, a, b)
			}
		}
	}
	refresh()
	if n, m := segments(t, split), segments(t, one); n != 2 || m != 1 {
		t.Fatalf("%d segments split and %d in one, want 2 and 1: the part was not added", n, m)
	}
	same("built")

	// Changed, removed and added files, written by the stores' own connections.
	docs := filepath.Join(dir, "docs")
	if err := os.WriteFile(filepath.Join(docs, "3", "3.md"), []byte("# Changed\n\nzebra crossing "+vocab[7]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(docs, "4", "4.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "new.md"), []byte("# New\n\nzebra "+vocab[9]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refresh()
	same("changed")
	hits, err := split.Search(ctx, "zebra", 4, Op{})
	if err != nil || len(hits) != 2 {
		t.Fatalf("zebra: %v, %v; want the changed and the new file", hits, err)
	}
}

// A structure record of FTS5's second version (tables that delete without content write it)
// is not one addPart extends.
func TestSecondVersionStructureRefused(t *testing.T) {
	v1 := []byte{0, 0, 0, 4, 1, 1, 3, 0, 1, 1, 1, 2}
	if s, ok := decodeStructure(v1); !ok || len(s.levels) != 1 || s.levels[0].segments[0] != (ftsSegment{1, 1, 2}) || s.writes != 3 {
		t.Fatalf("first version: %+v, %v", s, ok)
	}
	v2 := append([]byte{0, 0, 0, 4, 0xff, 0, 0, 1}, v1[4:]...)
	if _, ok := decodeStructure(v2); ok {
		t.Fatal("second version decoded")
	}
	if _, ok := decodeStructure(v1[:len(v1)-1]); ok {
		t.Fatal("a cut record decoded")
	}
}

func TestVarintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 240, 2287, 1 << 20, 1<<56 - 1, 1 << 56, 1<<64 - 1} {
		b := putVarint(nil, v)
		got, n := getVarint(b)
		if got != v || n != len(b) {
			t.Errorf("%d: %x reads as %d in %d bytes", v, b, got, n)
		}
	}
}
