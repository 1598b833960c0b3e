//go:build unix

package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpcmd "halolang.dev/halo/cmd/halo/internal/mcp"
	"halolang.dev/halo/host/runstore"
)

// storedRuns counts the runs in dir's store.
func storedRuns(t *testing.T, dir string) int {
	t.Helper()
	store, err := runstore.OpenSQLite(filepath.Join(dir, ".halo", "runs"), runstore.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.List(context.Background(), runstore.Query{Limit: runstore.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Runs)
}

// A real halo mcp on a pipe made as a shell makes it: a client that waits for each answer
// leaves halo waiting in read(2) between calls, and SIGTERM then still ends it at once, the
// record of its call on disk and the pipe blocking again for whoever shares it.
func TestSigtermWhileWaitingInRead(t *testing.T) {
	halo, err := exec.LookPath("halo")
	if err != nil {
		t.Fatal(err)
	}
	dir := project(t, map[string]string{"flow.halo": "pipeline Echo(x: String) -> String: x |> System.Value()\n"})
	var in, out [2]int
	if err := syscall.Pipe(in[:]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Pipe(out[:]); err != nil {
		t.Fatal(err)
	}
	stdin, client := os.NewFile(uintptr(in[0]), "stdin"), os.NewFile(uintptr(in[1]), "client")
	stdout, answers := os.NewFile(uintptr(out[1]), "stdout"), os.NewFile(uintptr(out[0]), "answers")
	defer stdin.Close()
	defer client.Close()
	defer answers.Close()
	// The test keeps its own copy of the read end: it shares halo's open file, and with it
	// O_NONBLOCK.
	shared, err := syscall.Dup(in[0])
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(shared)
	cmd := exec.Command(halo, "mcp", "flow.halo")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "GORACE=atexit_sleep_ms=0")
	cmd.Stdin, cmd.Stdout = stdin, stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}()
	lines := bufio.NewReader(answers)
	exchange := func(msg string, answered bool) string {
		t.Helper()
		if _, err := client.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
		if !answered {
			return ""
		}
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("reading halo's answer to %s: %v; stderr:\n%s", msg, err, stderr.String())
		}
		return line
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, true)
	exchange(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	// halo goes back to waiting, in read(2), once it has written the answer of a call that
	// ran on the reading goroutine; one that ran past a millisecond (the race detector, a
	// slow machine) handed the reading to a goroutine that waits in the poller for the next
	// message: call again until a call is short.
	calls := 0
	for id := 2; ; id++ {
		answer := exchange(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"Echo","arguments":{"x":"hi"}}}`, id), true)
		if !strings.Contains(answer, `hi`) || strings.Contains(answer, `"isError":true`) {
			t.Fatalf("tools/call answered %s", answer)
		}
		calls++
		deadline := time.Now().Add(200 * time.Millisecond)
		for mcpcmd.Nonblocking(t, uintptr(shared)) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if !mcpcmd.Nonblocking(t, uintptr(shared)) {
			break
		}
		if calls == 50 {
			t.Fatal("after 50 calls halo still waits for the next in the poller: the pipe is non-blocking")
		}
	}
	time.Sleep(20 * time.Millisecond) // and is in the read
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("halo mcp did not exit on SIGTERM while waiting in read(2); stderr:\n%s", stderr.String())
	}
	if mcpcmd.Nonblocking(t, uintptr(shared)) {
		t.Error("halo mcp left the pipe non-blocking")
	}
	if n := storedRuns(t, dir); n != calls {
		t.Errorf("%d runs on disk after SIGTERM, want the %d called", n, calls)
	}
}
