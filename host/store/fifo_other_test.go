//go:build !unix

package store

import "testing"

// mkfifo has no named pipe to plant where there is no mkfifo(2); the test goes on without one.
func mkfifo(t *testing.T, path string) {
	t.Logf("no named pipe at %s: this system has no mkfifo", path)
}
