//go:build !linux

package plugin

// hasChildren says true: without Linux's /proc the host cannot tell what a plugin left
// running, so a plugin is never taken for one that left nothing.
func hasChildren(int) bool { return true }
