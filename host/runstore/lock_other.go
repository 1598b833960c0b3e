//go:build !unix

package runstore

import "os"

const noFollow = 0

// lockFolder takes no lock where flock does not exist.
func lockFolder(root *os.Root, dir string) (func(), error) { return func() {}, nil }

// FolderInUse cannot tell where flock does not exist.
func FolderInUse(dir string) (bool, error) { return false, nil }
