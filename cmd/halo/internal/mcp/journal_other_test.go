//go:build !linux

package mcp_test

// journallessExt4 is Linux's question: elsewhere, false.
func journallessExt4(dir string) (string, bool) { return "", false }
