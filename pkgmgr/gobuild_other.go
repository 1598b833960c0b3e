//go:build !unix

package pkgmgr

import "os/exec"

// killGroup keeps exec's default cancellation where process groups do not exist.
func killGroup(cmd *exec.Cmd) {}
