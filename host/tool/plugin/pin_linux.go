package plugin

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// execPinned makes cmd execute the pinned descriptor itself: its Path becomes
// /proc/self/fd/N, which execve resolves, in the new process, to the very file the host
// opened and hashed; argv[0] stays the executable's path. The descriptor is duplicated above
// every descriptor the new process is handed (its standard streams and ExtraFiles), so
// handing those out cannot overwrite it; it is close-on-exec, so the plugin does not keep it.
func (p *pinned) execPinned(cmd *exec.Cmd) error {
	low := 3 + len(cmd.ExtraFiles)
	fd, err := unix.FcntlInt(p.f.Fd(), unix.F_DUPFD_CLOEXEC, low)
	if err != nil {
		return fmt.Errorf("pin the executable: %w", err)
	}
	p.execFD = fd
	cmd.Path = fmt.Sprintf("/proc/self/fd/%d", fd)
	return nil
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

// A changeWatch is an inotify watch for writes to one file: any write, truncation, or close
// of a descriptor open for writing (which also reveals writes through a shared mapping, made
// visible when it is unmapped).
type changeWatch struct {
	w     *writeWatcher // nil when inotify is not available
	wd    int
	start uint64 // the file's event count when the watch started
}

func watchWrites(f *os.File) changeWatch {
	w := sharedWatcher()
	if w == nil {
		return changeWatch{}
	}
	wd, start, err := w.add(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return changeWatch{}
	}
	return changeWatch{w: w, wd: wd, start: start}
}

// changed reports whether the file saw a write since the watch started, and whether it was
// watched at all.
func (c changeWatch) changed() (bool, bool) {
	if c.w == nil {
		return false, false
	}
	return c.w.count(c.wd) != c.start, true
}

func (c changeWatch) close() {
	if c.w != nil {
		c.w.remove(c.wd)
	}
}

// sharedWatcher is the process's one inotify instance for pinned executables, made on first
// use and never closed: closing an inotify instance that held a watch makes the kernel wait
// for an RCU grace period (about 5 ms measured here, at every plugin start), while adding and
// removing a watch on a live instance takes microseconds. Nil when inotify is not available.
var sharedWatcher = sync.OnceValue(func() *writeWatcher {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil
	}
	return &writeWatcher{fd: fd, refs: map[int]int{}, events: map[int]uint64{}}
})

// A writeWatcher is one inotify instance shared by every pinned start. Each watched file (one
// watch descriptor, shared by concurrent starts of the same file) has an event count; a start
// compares the count when its watch began with the count after the plugin started.
type writeWatcher struct {
	mu     sync.Mutex
	fd     int
	refs   map[int]int    // watch descriptor -> starts watching it
	events map[int]uint64 // watch descriptor -> writes seen
}

func (w *writeWatcher) add(path string) (int, uint64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	wd, err := unix.InotifyAddWatch(w.fd, path, unix.IN_MODIFY|unix.IN_CLOSE_WRITE)
	if err != nil {
		return 0, 0, err
	}
	w.refs[wd]++
	return wd, w.events[wd], nil
}

func (w *writeWatcher) count(wd int) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	return w.events[wd]
}

func (w *writeWatcher) remove(wd int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.refs[wd]--; w.refs[wd] > 0 {
		return
	}
	delete(w.refs, wd)
	delete(w.events, wd)
	_, _ = unix.InotifyRmWatch(w.fd, uint32(wd))
}

// drain reads every pending event and counts the writes per watch; w.mu is held.
func (w *writeWatcher) drain() {
	var buf [4096]byte
	for {
		n, err := unix.Read(w.fd, buf[:])
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			if ev.Mask&unix.IN_IGNORED == 0 && w.refs[int(ev.Wd)] > 0 {
				w.events[int(ev.Wd)]++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}
