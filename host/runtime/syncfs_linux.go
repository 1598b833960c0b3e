//go:build linux

package runtime

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFS syncs the whole filesystem root is on with one call (syncfs(2)): every file's data
// and every name. It reports whether it could try.
func syncFS(root *os.Root) (bool, error) {
	d, err := root.Open(".")
	if err != nil {
		return true, err
	}
	defer d.Close()
	return true, unix.Syncfs(int(d.Fd()))
}
