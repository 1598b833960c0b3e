//go:build !unix

package pgtest

import "os/exec"

// supported is false: the cluster's process group and its user need Unix, so elsewhere
// Start reports the server as not installed and the tests are skipped with that reason.
const supported = false

func setProcAttr(*exec.Cmd, *credential) {}

func stopGroup(int, bool) {}
