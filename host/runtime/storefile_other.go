//go:build !linux

package runtime

import (
	"errors"
	"os"
)

// Only Linux makes files with no name (O_TMPFILE): elsewhere every record is written to a
// temporary name and renamed.
func openUnnamed(dir int) (fd int, unsupported bool, err error) {
	return -1, true, errors.ErrUnsupported
}

var errNoLink = errors.ErrUnsupported

func writeAll(fd int, b []byte) error                      { return errNoLink }
func linkUnnamed(how *int, fd, dir int, name string) error { return errNoLink }
func renameAt(dir int, old, new string) error              { return errNoLink }
func closeFD(fd int) error                                 { return errNoLink }
func fsyncFD(fd int) error                                 { return errNoLink }
func unlinkAt(dir int, name string)                        {}

const (
	linkFD = iota
	linkProc
	linkNone
)

// syncFS cannot sync a whole filesystem here: commits sync each file.
func syncFS(dir *os.File) (bool, error) { return false, nil }
