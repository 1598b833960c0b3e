package runstore

import (
	"errors"
	"syscall"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/util/vfsutil"
	"github.com/ncruces/go-sqlite3/vfs"
)

// walVFSName is the VFS the run store opens its database with: the driver's own ("os"), whose
// write-ahead log gathers the writes SQLite makes one after the other into one.
const walVFSName = "halo-runs"

func init() { vfs.Register(walVFSName, walVFS{vfs.Find("os")}) }

// A walVFS is the os VFS, its log files opened as walFiles.
type walVFS struct{ vfs.VFS }

func (v walVFS) Open(name string, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpen(v.VFS, name, flags)
	return wrapWAL(f, flags, err)
}

func (v walVFS) OpenFilename(name *vfs.Filename, flags vfs.OpenFlag) (vfs.File, vfs.OpenFlag, error) {
	f, flags, err := vfsutil.WrapOpenFilename(v.VFS, name, flags)
	return wrapWAL(f, flags, err)
}

func wrapWAL(f vfs.File, flags vfs.OpenFlag, err error) (vfs.File, vfs.OpenFlag, error) {
	if err != nil || flags&vfs.OPEN_WAL == 0 {
		return f, flags, err
	}
	return &walFile{File: f}, flags, nil
}

// walBuffer is the most a walFile holds before it writes.
const walBuffer = 1 << 20

// A walFile is a write-ahead log whose writes that follow one another are held and written as
// one, as the log is synced, read, measured, cut, closed, or written elsewhere. A commit
// writes each page it changed as two writes (the frame's header, then the page), each a
// system call: over 100 pages a commit, a sixth of what BenchmarkSave's saves cost (docs/mcp.md,
// "What a call costs"). Nothing changes for what is on disk when: SQLite counts nothing as
// written until it has synced the log, and a sync writes what is held first; other
// connections read only frames a commit has made visible, after that sync.
type walFile struct {
	vfs.File
	buf []byte
	off int64 // where buf goes
}

// flush writes what is held. A failure is told to the call that flushes (a sync, a read):
// SQLite then undoes the transaction, as after a failed write.
func (f *walFile) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	_, err := f.File.WriteAt(f.buf, f.off)
	f.buf = f.buf[:0]
	if errors.Is(err, syscall.ENOSPC) {
		return sqlite3.FULL
	}
	return err
}

func (f *walFile) WriteAt(b []byte, off int64) (int, error) {
	if len(f.buf) > 0 && off == f.off+int64(len(f.buf)) && len(f.buf)+len(b) <= walBuffer {
		f.buf = append(f.buf, b...)
		return len(b), nil
	}
	if err := f.flush(); err != nil {
		return 0, err
	}
	if len(b) >= walBuffer {
		return f.File.WriteAt(b, off)
	}
	f.buf, f.off = append(f.buf, b...), off
	return len(b), nil
}

func (f *walFile) ReadAt(b []byte, off int64) (int, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(b, off)
}

func (f *walFile) Sync(flags vfs.SyncFlag) error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Sync(flags)
}

func (f *walFile) Size() (int64, error) {
	if err := f.flush(); err != nil {
		return 0, err
	}
	return f.File.Size()
}

func (f *walFile) Truncate(size int64) error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *walFile) Close() error {
	err := f.flush()
	return errors.Join(err, f.File.Close())
}

// The optional methods of the file beneath.

func (f *walFile) Unwrap() vfs.File                { return f.File }
func (f *walFile) SizeHint(size int64) error       { return vfsutil.WrapSizeHint(f.File, size) }
func (f *walFile) ChunkSize(size int)              { vfsutil.WrapChunkSize(f.File, size) }
func (f *walFile) HasMoved() (bool, error)         { return vfsutil.WrapHasMoved(f.File) }
func (f *walFile) LockState() vfs.LockLevel        { return vfsutil.WrapLockState(f.File) }
func (f *walFile) PowersafeOverwrite() bool        { return vfsutil.WrapPowersafeOverwrite(f.File) }
func (f *walFile) SetPowersafeOverwrite(psow bool) { vfsutil.WrapSetPowersafeOverwrite(f.File, psow) }
