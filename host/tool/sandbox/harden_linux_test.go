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
	if err := HardenProcess(); err != nil {
		fmt.Println("harden:", err)
		return 1
	}
	after, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	fmt.Printf("dumpable: %d %d\n", before, after)
	return 0
}

// TestHardenProcess: what cmd/halo does first leaves the process non-dumpable.
func TestHardenProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), hardenEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "dumpable: 1 0") {
		t.Fatalf("want dumpable before and not after:\n%s", out)
	}
}
