//go:build linux

package store

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// A watcher tells a File store, without a look at every file, that nothing changed in the
// folders it reads since the index was last found in step with them: an inotify watch on
// each of those folders (and on the folders above a pattern's base, so a base made later is
// noticed). The kernel queues an event while the call that changes a file runs, so an event
// of every change that ended before a search began is in the queue when the search reads it,
// with one non-blocking read. fsnotify, the library, cannot say that: its goroutine reads the
// queue on its own time, so a select on its channel may find an event not yet read.
//
// Any event marks the store dirty (which file it names does not matter: the store then looks
// at every file, as without a watch). A watcher that cannot watch a folder, or finds one on a
// file system whose changes may come from elsewhere (NFS, FUSE, 9p: only local file systems
// are trusted), stops watching for good: the store looks at every file at every search.
type watcher struct {
	mu sync.Mutex
	fd int // -1 once closed or off
	// gen counts the reads that found events; clean is the gen the index was last found in
	// step with the files at (every change before that read is in the index).
	gen, clean uint64
	buf        []byte
}

// newWatcher starts an inotify instance; nil when there is none to have (the limit of
// instances is reached): the store looks at every file.
func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	// clean starts behind gen: nothing is known to be in step until a refresh says so.
	return &watcher{fd: fd, gen: 1, buf: make([]byte, 64<<10)}
}

// watchMask is every change to a folder's entries or to a file in it (its bytes, its time,
// its mode, its links), and the folder's own removal or move.
const watchMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// localFS are the file systems whose every change is made by this kernel, so inotify sees
// it: ext2/3/4, XFS, Btrfs, tmpfs, overlayfs, F2FS, ZFS, bcachefs, ramfs.
var localFS = map[int64]bool{0xEF53: true, 0x58465342: true, 0x9123683E: true, 0x01021994: true, 0x794c7630: true,
	0xF2F52010: true, 0x2FC12FC1: true, 0xca451a4e: true, 0x858458f6: true}

// add watches folder dir of the project (opened through root, so it is the folder inside
// the project whatever links lie on the way), before the folder is read: a change after
// this is an event, one before it is in what the read finds.
func (w *watcher) add(root *os.Root, dir string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	f, err := root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			w.off()
		}
		// A folder that is not there, or not readable, is not read either; its making or
		// its mode's change is an event in the folder above it.
		return
	}
	defer f.Close()
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &sfs); err != nil || !localFS[int64(sfs.Type)] {
		w.off()
		return
	}
	if _, err := unix.InotifyAddWatch(w.fd, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), watchMask); err != nil {
		w.off()
	}
}

// off stops watching (with w.mu held).
func (w *watcher) off() {
	if w.fd >= 0 {
		unix.Close(w.fd)
		w.fd = -1
	}
}

// mark reads every queued event and returns the generation the files are at: a look at the
// files made after mark, which finds them as the index has them, shows the index in step as
// of that generation (settle).
func (w *watcher) mark() uint64 {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	return w.gen
}

// drain reads the queue (with w.mu held); any event, or a queue that overflowed, is a new
// generation.
func (w *watcher) drain() {
	read := false
	for w.fd >= 0 {
		n, err := unix.Read(w.fd, w.buf)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			if err != nil && err != unix.EAGAIN {
				w.off()
			}
			break
		}
		read = true
	}
	if read {
		w.gen++
	}
}

// settle records that the index is in step with the files as of generation g (from mark).
func (w *watcher) settle(g uint64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clean = max(w.clean, g)
}

// quiet reports whether nothing changed in the watched folders since the index was last in
// step with them; false when not watching.
func (w *watcher) quiet() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	return w.fd >= 0 && w.gen == w.clean
}

func (w *watcher) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.off()
}

// aliased reports whether a file may change through another name than the one a watch
// sees: more than one hard link to it.
func aliased(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
