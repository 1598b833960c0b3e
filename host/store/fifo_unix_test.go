//go:build unix

package store

import (
	"syscall"
	"testing"
)

// mkfifo plants a named pipe, which a store must never open (a read would block forever).
func mkfifo(t *testing.T, path string) {
	t.Helper()
	must(t, syscall.Mkfifo(path, 0o644))
}
