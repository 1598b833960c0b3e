package runstore

import (
	"bytes"
	"testing"

	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// A walFile holds writes that follow one another until the log is synced, read, measured or
// written elsewhere, and the file then holds exactly what was written, where it was.
func TestWALFileGathersWrites(t *testing.T) {
	under := &vfsutil.SliceFile{}
	f := &walFile{File: under}
	want := []byte{}
	write := func(b []byte, off int64) {
		t.Helper()
		if n, err := f.WriteAt(b, off); err != nil || n != len(b) {
			t.Fatalf("WriteAt(%d bytes, %d) = %d, %v", len(b), off, n, err)
		}
		if end := int(off) + len(b); end > len(want) {
			want = append(want, make([]byte, end-len(want))...)
		}
		copy(want[off:], b)
	}
	write(bytes.Repeat([]byte{1}, 32), 0)
	write(bytes.Repeat([]byte{2}, 24), 32)
	write(bytes.Repeat([]byte{3}, 4096), 56)
	if len(*under) != 0 {
		t.Fatalf("the writes went to the file at once: %d bytes", len(*under))
	}
	got := make([]byte, 24)
	if _, err := f.ReadAt(got, 32); err != nil || !bytes.Equal(got, want[32:56]) {
		t.Fatalf("a read after the writes: %v %v", got, err)
	}
	write(bytes.Repeat([]byte{4}, 24), 4152)
	write(bytes.Repeat([]byte{5}, 10), 8) // elsewhere: what is held is written first
	write(bytes.Repeat([]byte{6}, 100), 18)
	if n, err := f.Size(); err != nil || n != int64(len(want)) {
		t.Fatalf("Size() = %d, %v; want %d", n, err, len(want))
	}
	write(bytes.Repeat([]byte{7}, walBuffer), 4176) // too large to hold
	write(bytes.Repeat([]byte{8}, 5), 4176+walBuffer)
	if err := f.Sync(vfs.SYNC_FULL); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(*under, want) {
		t.Fatalf("the file holds %d bytes that differ from the %d written", len(*under), len(want))
	}
}

// The store opens its database through the VFS whose log is a walFile.
func TestStoreLogIsGathered(t *testing.T) {
	s, err := OpenSQLite(t.TempDir(), SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var name string
	if err := s.w.QueryRow(`PRAGMA journal_mode`).Scan(&name); err != nil || name != "wal" {
		t.Fatalf("journal mode %q, %v", name, err)
	}
	if !bytes.Contains([]byte(s.dsn(true)), []byte("vfs="+walVFSName)) || !bytes.Contains([]byte(s.dsn(false)), []byte("vfs="+walVFSName)) {
		t.Errorf("the store's connections do not name the VFS: %s", s.dsn(true))
	}
	for _, c := range []struct {
		flags vfs.OpenFlag
		wal   bool
	}{{vfs.OPEN_WAL, true}, {vfs.OPEN_MAIN_DB, false}, {vfs.OPEN_MAIN_JOURNAL, false}} {
		f, _, _ := wrapWAL(&vfsutil.SliceFile{}, c.flags, nil)
		if _, ok := f.(*walFile); ok != c.wal {
			t.Errorf("a file opened with %x is a walFile: %v, want %v", c.flags, ok, c.wal)
		}
	}
}
