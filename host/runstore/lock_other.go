//go:build !unix

package runstore

import "os"

const noFollow = 0

// lockFolder takes no lock where flock does not exist.
func lockFolder(root *os.Root, dir string) (func(), error) { return func() {}, nil }

// FolderInUse cannot tell where flock does not exist.
func FolderInUse(dir string) (bool, error) { return false, nil }

const nonBlock = 0

// ownFile cannot tell a file's owner here: a record is taken as halo's when its mode says so.
func ownFile(fi os.FileInfo) bool { return fi.Mode().Perm() == 0o600 }

// diskFull cannot tell here: a full disk is reported as the driver says it.
func diskFull(dir string) bool { return false }
