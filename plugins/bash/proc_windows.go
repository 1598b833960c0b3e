//go:build windows

package bash

// The Bash provider runs its shell in a process group of its own and kills the group
// (proc_unix.go, proc_linux.go), which Windows has no equivalent of here: Halo is built for
// Linux and macOS (README.md, "Platforms"). This stops a Windows build with a name that says
// so.
var _ = halo_builds_for_linux_and_macos_only__see_README_Platforms
