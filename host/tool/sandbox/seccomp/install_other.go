//go:build !linux

package seccomp

// DenyNetwork returns ErrUnsupported: seccomp is Linux's.
func DenyNetwork() error { return ErrUnsupported }

// Available reports false: seccomp is Linux's.
func Available() bool { return false }
