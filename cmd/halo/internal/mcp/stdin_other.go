//go:build !unix

package mcp

import "io"

// pollable returns in: the poller's reads are a Unix matter (stdin_unix.go).
func pollable(in io.Reader) (io.Reader, func()) { return in, func() {} }
