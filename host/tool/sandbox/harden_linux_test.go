package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const hardenEnv = "HALO_SANDBOX_TEST_HARDEN"

// init runs before TestMain: the test binary re-executed by TestHardenProcess hardens itself
// and reports, instead of running tests.
func init() {
	if os.Getenv(hardenEnv) != "" {
		os.Exit(hardenChild())
	}
}

// hardenChild runs HardenProcess and reports the process's state after it, a line each.
func hardenChild() int {
	before, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	flags, err := unix.FcntlInt(3, unix.F_GETFD, 0)
	fmt.Printf("fd 3 close-on-exec before: %v %v\n", flags&unix.FD_CLOEXEC != 0, err)
	harden := HardenProcess
	if os.Getenv(hardenEnv) == "listed" {
		// The fallback of kernels without CLOSE_RANGE_CLOEXEC.
		harden = func() error {
			if err := NonDumpable(); err != nil {
				return err
			}
			return closeOnExecListed()
		}
	}
	if err := harden(); err != nil {
		fmt.Println("harden:", err)
		return 1
	}
	after, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	fmt.Printf("dumpable: %d %d\n", before, after)
	flags, err = unix.FcntlInt(3, unix.F_GETFD, 0)
	fmt.Printf("fd 3 close-on-exec: %v %v\n", flags&unix.FD_CLOEXEC != 0, err)
	return 0
}

// TestHardenProcess: what cmd/halo does first leaves the process non-dumpable, and a
// descriptor it inherited open (fd 3 here) close-on-exec.
func TestHardenProcess(t *testing.T) {
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, way := range []string{"close_range", "listed"} {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), hardenEnv+"="+way)
		cmd.ExtraFiles = []*os.File{f}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", way, err, out)
		}
		if !strings.Contains(string(out), "dumpable: 1 0") {
			t.Errorf("%s: want dumpable before and not after:\n%s", way, out)
		}
		if !strings.Contains(string(out), "fd 3 close-on-exec before: false <nil>") || !strings.Contains(string(out), "fd 3 close-on-exec: true <nil>") {
			t.Errorf("%s: want the inherited descriptor close-on-exec:\n%s", way, out)
		}
	}
}
