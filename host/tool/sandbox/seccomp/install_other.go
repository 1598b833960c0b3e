//go:build !linux

package seccomp

// Install returns ErrUnsupported: seccomp is Linux's.
func Install(Rules) error { return ErrUnsupported }

// Available reports false: seccomp is Linux's.
func Available() bool { return false }
