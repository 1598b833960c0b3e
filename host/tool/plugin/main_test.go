package plugin_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/tool/plugin"
	"halolang.dev/halo/internal/usertest"
)

// bins holds the plugin executables the tests start, built once per test binary.
var bins struct {
	dir              string
	probe, worldtime string
	built            bool
}

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		// This process is a host started by a test (see helper_test.go).
		os.Exit(runHelper())
	}
	if usertest.IsChild() {
		// Run again as the unprivileged user by usertest.Rerun: the executables the first
		// run built are in the folder it names.
		setBins(os.Getenv(binsEnv))
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "halo-plugin-test-")
	if err == nil {
		// Readable by the unprivileged user of usertest.Rerun, who starts them too.
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	setBins(dir)
	for pkg, out := range map[string]string{"./testdata/probe": bins.probe, "../../../plugins/worldtime/cmd/worldtime": bins.worldtime} {
		if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, b)
			os.Exit(1)
		}
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// binsEnv names the folder of the built executables in a re-run as another user.
const binsEnv = "HALO_PLUGIN_TEST_BINS"

func setBins(dir string) {
	bins.dir = dir
	bins.probe = filepath.Join(dir, "probe")
	bins.worldtime = filepath.Join(dir, "worldtime")
}

// asBothUsers runs body, then the whole test again as the unprivileged test user
// (usertest.Rerun), handing the re-run the built executables.
func asBothUsers(t *testing.T, body func(t *testing.T)) {
	body(t)
	usertest.Rerun(t, binsEnv+"="+bins.dir)
}

// syncBuffer is a log destination tests can read while plugins write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func hostEnv(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// newClient starts nothing yet; the client is closed when the test ends.
func newClient(t testing.TB, cmd plugin.Command, opts plugin.Options) *plugin.Client {
	if cmd.Getenv == nil {
		cmd.Getenv = hostEnv(map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")})
	}
	if opts.Logger == nil {
		opts.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Warn, Output: testWriter{t}})
	}
	c := plugin.New(cmd, opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	defer func() { _ = recover() }() // a line after the test ended has nowhere to go
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
