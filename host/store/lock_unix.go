//go:build unix

package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// noFollow refuses to open a link in a store's own files' place.
const noFollow = syscall.O_NOFOLLOW

// lockFile takes an exclusive lock on name in dir, waiting (and telling wait, once) while
// another process holds it, until ctx ends. The lock is held until the returned func runs.
func lockFile(ctx context.Context, dir *os.Root, name string, wait func()) (func(), error) {
	f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	err = poll(ctx, wait, func() (bool, error) {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		f.Close()
		if ctx.Err() == nil {
			err = fmt.Errorf("lock %s: %w", name, err)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// fileIdentity is the database file's device and inode: recorded when it is made, so a
// database that arrives from elsewhere (a clone, a copy) is known for one.
func fileIdentity(dir *os.Root, name string) (string, error) {
	fi, err := dir.Lstat(name)
	if err != nil {
		return "", err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10), nil
	}
	return "", nil
}
