package mcp

import (
	"fmt"
	"os/exec"

	"halolang.dev/halo/host/tool/sandbox"
)

// startServer starts a stdio server's process through the plugins' start path: from an OS
// thread of its own that has set no_new_privs, emptied the capability sets a program inherits
// and installed the seccomp filter every plugin gets (sandbox.RestrictThread), so the server
// holds no capability even when halo runs as root, cannot gain one, and cannot type into a
// terminal (TIOCSTI); with sysProcAttr, in a session of its own. The thread is kept until
// exited is closed (the server has been waited for), since the parent-death signal fires when
// it ends.
//
// The host is made non-dumpable first (the halo command already is, from start-up), so the
// server cannot read the host's environment through /proc. Unlike a plugin, a server gets no
// namespaces and no Landlock sandbox: it runs as the user, with the user's files and network
// (docs/mcp.md).
func startServer(cmd *exec.Cmd, exited <-chan struct{}) error {
	if err := sandbox.NonDumpable(); err != nil {
		return fmt.Errorf("refusing to start an MCP server beside a host it could read: %w", err)
	}
	return sandbox.StartFromThread(sandbox.RestrictThread, cmd.Start, exited)
}
