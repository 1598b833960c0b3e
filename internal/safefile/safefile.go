// Package safefile reads files that a repository controls (sources, halo.json, halo.lock,
// what .halo holds) without trusting what they are: a named pipe committed in a file's place
// would make a plain read wait for a writer forever, and a huge file would be held whole.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The refusals, wrapped in the errors Read and ReadIn return.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("over the size limit")
)

// Read reads the file at path, which must be a regular file of at most max bytes. One that
// is not a regular file (a named pipe, a device, a folder) or is larger is refused without
// being read and without waiting (it is opened non-blocking), with ErrNotRegular or
// ErrTooLarge. A missing file is an error that wraps fs.ErrNotExist, as for os.ReadFile.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, path, max)
}

// ReadIn is Read of the file name in root.
func ReadIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return read(f, name, max)
}

// kind names what a file that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m.IsDir():
		return "a folder"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "of type " + m.Type().String()
}

func read(f *os.File, name string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %w: it is %s", name, ErrNotRegular, kind(fi.Mode()))
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, %w of %d", name, fi.Size(), ErrTooLarge, max)
	}
	// The file may grow while it is read: read one byte past the limit to find out.
	// The buffer starts at the size Stat gave (and one byte more, to see the end at once), so
	// a large file is read into one allocation rather than a doubling series of them; a file
	// that grew meanwhile is still read to the limit.
	b := make([]byte, 0, min(fi.Size(), max)+1)
	for int64(len(b)) <= max {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):min(int64(cap(b)), max+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is %w of %d bytes", name, ErrTooLarge, max)
	}
	return b, nil
}
