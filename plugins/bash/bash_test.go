package bash

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testConfig(t *testing.T) Config {
	t.Helper()
	return Config{
		Dir:     t.TempDir(),
		Timeout: 10 * time.Second,
		Env:     []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "GREETING=hi"},
	}
}

func TestRunResult(t *testing.T) {
	cfg := testConfig(t)
	res, err := Run(context.Background(), cfg, `echo out; echo err >&2; pwd; echo "$GREETING"; exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := "out\n" + cfg.Dir + "\nhi\n"
	if res.ExitCode != 3 || res.Stdout != wantOut || res.Stderr != "err\n" || res.TimedOut || res.Truncated {
		t.Fatalf("result = %+v, want exit 3, stdout %q", res, wantOut)
	}
	if _, err := Run(context.Background(), cfg, ""); !errors.Is(err, ErrEmptyCommand) {
		t.Fatalf("empty command: %v", err)
	}
}

func TestEnvironmentIsOnlyTheConfigs(t *testing.T) {
	t.Setenv("HALO_TEST_SECRET", "s3cret")
	cfg := testConfig(t)
	res, err := Run(context.Background(), cfg, `env; cat`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stdout, "s3cret") || strings.Contains(res.Stdout, "HALO_TEST_SECRET") {
		t.Fatalf("the command saw the plugin's own environment:\n%s", res.Stdout)
	}
	if !strings.Contains(res.Stdout, "GREETING=hi") {
		t.Fatalf("the configured variable is missing:\n%s", res.Stdout)
	}
}

// alive reports whether a process exists (and is not a zombie waiting for its parent).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// readPIDs waits for n pid lines in file.
func readPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		lines := strings.Fields(string(b))
		if len(lines) >= n {
			var pids []int
			for _, l := range lines {
				p, err := strconv.Atoi(l)
				if err != nil {
					t.Fatalf("bad pid %q", l)
				}
				pids = append(pids, p)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pids in %s", len(lines), n, file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, p := range pids {
		for alive(p) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d survived the command", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// The command starts a child shell that starts a grandchild; both write their pids and
// sleep. The time limit must kill all of them.
const spawnTree = `pids=%q
( sleep 60 & echo $! >> "$pids"; echo $BASHPID >> "$pids"; wait ) &
echo started; wait`

func TestTimeoutKillsGrandchildren(t *testing.T) {
	cfg := testConfig(t)
	cfg.Timeout = 500 * time.Millisecond
	pids := filepath.Join(t.TempDir(), "pids")
	start := time.Now()
	res, err := Run(context.Background(), cfg, strings.Replace(spawnTree, "%q", strconv.Quote(pids), 1))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("Run took %s after a 500ms limit", took)
	}
	if !res.TimedOut || res.ExitCode != -1 || !strings.Contains(res.Stderr, "time limit") || res.Stdout != "started\n" {
		t.Fatalf("result = %+v", res)
	}
	waitGone(t, readPIDs(t, pids, 2))
}

func TestCancelKillsGrandchildren(t *testing.T) {
	cfg := testConfig(t)
	pids := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := Run(ctx, cfg, strings.Replace(spawnTree, "%q", strconv.Quote(pids), 1))
		errc <- err
	}()
	got := readPIDs(t, pids, 2)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	waitGone(t, got)
}

func TestBackgroundJobsDieWithTheCommand(t *testing.T) {
	cfg := testConfig(t)
	pids := filepath.Join(t.TempDir(), "pids")
	// The shell exits at once, leaving a background job with its output closed.
	res, err := Run(context.Background(), cfg, `sleep 60 >/dev/null 2>&1 & echo $! > `+strconv.Quote(pids))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	waitGone(t, readPIDs(t, pids, 1))
}

func TestOutputIsCappedWithANote(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxOutput = 100
	res, err := Run(context.Background(), cfg, `echo BEGIN; head -c 100000 /dev/zero | tr '\0' x; echo; echo END`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.HasPrefix(res.Stdout, "BEGIN\n") || !strings.HasSuffix(res.Stdout, "END\n") || !strings.Contains(res.Stdout, "bytes left out") {
		t.Fatalf("capped stdout = %q", res.Stdout)
	}
	if len(res.Stdout) > 200 {
		t.Fatalf("capped stdout is %d bytes", len(res.Stdout))
	}
}

func TestCapped(t *testing.T) {
	cases := []struct {
		limit  int
		writes []string
		want   string
	}{
		{10, []string{"hello"}, "hello"},
		{10, []string{"0123456789"}, "0123456789"},
		{10, []string{"01234", "56789", "abc"}, "01234\n[halo: output cut, 3 bytes left out]\n89abc"},
		{4, []string{"abcdefgh"}, "ab\n[halo: output cut, 4 bytes left out]\ngh"},
	}
	for _, c := range cases {
		w := newCapped(c.limit)
		for _, s := range c.writes {
			w.Write([]byte(s))
		}
		if got := w.String(); got != c.want {
			t.Errorf("limit %d, writes %q: got %q, want %q", c.limit, c.writes, got, c.want)
		}
	}
}
