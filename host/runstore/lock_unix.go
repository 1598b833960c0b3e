//go:build unix

package runstore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// lockFolder takes an exclusive lock on the folder's .lock file, held until the returned
// func runs.
func lockFolder(root *os.Root, dir string) (func(), error) {
	path := dir + "/.lock"
	fd, err := root.OpenFile(".lock", os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store lock %s: %v", path, err), Err: err}
	}
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fd.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, Errorf(CodeBusy, "another process (a halo serve) uses the run store %s; one folder serves one server: stop it, or share runs through PostgreSQL (--store postgres://...)", dir)
		}
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store lock %s: %v", path, err), Err: err}
	}
	return func() { fd.Close() }, nil
}

// FolderInUse reports whether a process (a halo serve) has the folder store in dir open. A
// missing folder is not in use.
func FolderInUse(dir string) (bool, error) {
	root, err := openRunsFolder(dir, false)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer root.Close()
	fd, err := root.OpenFile(".lock", os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer fd.Close()
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, nil
		}
		return false, err
	}
	syscall.Flock(int(fd.Fd()), syscall.LOCK_UN)
	return false, nil
}

// nonBlock opens a file without waiting on it (a named pipe in a record's place).
const nonBlock = syscall.O_NONBLOCK

// ownFile reports whether fi is a file as halo writes records: this user's, mode 0600.
func ownFile(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm() == 0o600
}

// diskFull reports whether the filesystem of dir has less than 1 MiB left: what a write
// that failed there ran into.
func diskFull(dir string) bool {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return false
	}
	return uint64(st.Bavail)*uint64(st.Bsize) < 1<<20
}
