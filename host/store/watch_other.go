//go:build !linux

package store

import (
	"io/fs"
	"os"
)

// A watcher is Linux's inotify (watch_linux.go); elsewhere there is none, and a store looks
// at every file at every search.
type watcher struct{}

func newWatcher() *watcher                       { return nil }
func (w *watcher) add(root *os.Root, dir string) {}
func (w *watcher) mark() uint64                  { return 0 }
func (w *watcher) settle(g uint64)               {}
func (w *watcher) quiet() bool                   { return false }
func (w *watcher) close()                        {}
func aliased(fi fs.FileInfo) bool                { return false }
