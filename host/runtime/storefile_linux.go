//go:build linux

package runtime

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openUnnamed makes a file with no name in the folder dir (O_TMPFILE), for a record that
// gets its name once it is on disk: a new record's file then costs one name in the folder,
// not a temporary one and a rename. It returns the file's descriptor, and whether the
// filesystem cannot make such files at all (an old kernel, NFS...).
func openUnnamed(dir int) (fd int, unsupported bool, err error) {
	for {
		fd, err = unix.Openat(dir, ".", unix.O_WRONLY|unix.O_TMPFILE|unix.O_CLOEXEC, 0o600)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return -1, err == unix.EOPNOTSUPP || err == unix.EISDIR || err == unix.EINVAL, err
	}
	return fd, false, nil
}

// writeAll writes b to fd.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// How a file made by openUnnamed gets its name: linkat(2) of the descriptor itself
// (AT_EMPTY_PATH, which needs the CAP_DAC_READ_SEARCH capability on most kernels), else of
// its /proc/self/fd link, else not at all (no /proc): records then get a temporary name
// from the start.
const (
	linkFD = iota
	linkProc
	linkNone
)

// linkUnnamed gives fd, a file made by openUnnamed, the name name in the folder dir. A name
// that is taken fails with EEXIST (linkat never replaces, nor follows a symbolic link
// there). *how is the way to try first; it moves on when a way cannot work here.
func linkUnnamed(how *int, fd, dir int, name string) error {
	for {
		var err error
		switch *how {
		case linkFD:
			err = unix.Linkat(fd, "", dir, name, unix.AT_EMPTY_PATH)
		case linkProc:
			err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dir, name, unix.AT_SYMLINK_FOLLOW)
		default:
			return errNoLink
		}
		switch {
		case err == unix.EINTR:
			continue
		case *how == linkFD && (err == unix.ENOENT || err == unix.EPERM || err == unix.EINVAL):
			*how = linkProc // not allowed to link a descriptor
			continue
		case *how == linkProc && (err == unix.ENOENT || err == unix.EPERM || err == unix.ENOTDIR):
			*how = linkNone // no /proc
			return errNoLink
		}
		return err
	}
}

// errNoLink says a file made by openUnnamed cannot be given a name here.
var errNoLink = errors.New("cannot name an unnamed file here")

// renameAt renames old to new in the folder dir, replacing new (a file, or a symbolic link
// itself: rename never follows one).
func renameAt(dir int, old, new string) error {
	for {
		err := unix.Renameat(dir, old, dir, new)
		if err != unix.EINTR {
			return err
		}
	}
}

func closeFD(fd int) error { return unix.Close(fd) }

func fsyncFD(fd int) error {
	for {
		err := unix.Fsync(fd)
		if err != unix.EINTR {
			return err
		}
	}
}

func unlinkAt(dir int, name string) { unix.Unlinkat(dir, name, 0) }

// syncFS syncs the whole filesystem the folder dir is on with one call (syncfs(2)): every
// file's data and every name. It reports whether it could try.
func syncFS(dir *os.File) (bool, error) {
	return true, unix.Syncfs(int(dir.Fd()))
}
