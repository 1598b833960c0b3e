//go:build !unix

package store

import (
	"context"
	"os"
)

const noFollow = 0

// lockFile takes no lock where flock does not exist: the process's own mutex is all there is.
func lockFile(ctx context.Context, dir *os.Root, name string, wait func()) (func(), error) {
	return func() {}, nil
}

// fileIdentity is empty where there are no inodes: a copied database is not recognised.
func fileIdentity(dir *os.Root, name string) (string, error) { return "", nil }
