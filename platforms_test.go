package halo_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A Windows build stops in the two packages that have no Windows version, each with one
// error that names README.md's "Platforms" section, rather than a type mismatch deep in the
// sandbox (what it said before): the README says Windows is not supported, and the build
// says why. It cross-compiles the standard library for Windows once (about 30 s on two cores
// with a cold build cache, a second after).
func TestWindowsBuildNamesPlatforms(t *testing.T) {
	cmd := exec.Command("go", "build", "-o", os.DevNull, "./host/tool/sandbox", "./plugins/bash")
	cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a Windows build of host/tool/sandbox and plugins/bash succeeded; README.md's Platforms section says it stops:\n%s", out)
	}
	const guard = "undefined: halo_builds_for_linux_and_macos_only__see_README_Platforms"
	for _, file := range []string{"host/tool/sandbox/windows.go", "plugins/bash/proc_windows.go"} {
		if !strings.Contains(string(out), file+":") || !strings.Contains(string(out), guard) {
			t.Errorf("the Windows build's errors do not name Platforms in %s:\n%s", file, out)
		}
	}
	// The sandbox's first error is the guard's: no other file of it fails to compile first.
	if strings.Contains(string(out), "cannot use") {
		t.Errorf("the Windows build fails on a type mismatch besides the guard:\n%s", out)
	}
}
