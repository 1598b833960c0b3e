package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/host/debug"
)

// keys turns one line of a ptydebug script into what a person types: <up>, <down>, <left>,
// <right> and <bs> are those keys, ^D and ^C the control characters (sent alone, without
// Enter); anything else is typed, then Enter.
func keys(line string) []byte {
	switch line {
	case "^D":
		return []byte{4}
	case "^C":
		return []byte{3}
	}
	r := strings.NewReplacer("<up>", "\x1b[A", "<down>", "\x1b[B", "<left>", "\x1b[D", "<right>", "\x1b[C", "<bs>", "\x7f")
	return []byte(r.Replace(line) + "\r")
}

// ptyDebug is the testscript command `ptydebug NAME SCRIPT -- command [args...]`: it runs the
// command as a person at a terminal does, with stdin and stderr on a pseudo-terminal (stdout
// a file), and each time the command shows one of halo debug's prompts types the next line
// of the file SCRIPT (see keys). A line <hangup> closes the terminal instead, as closing a
// terminal window does. It saves what the terminal showed in NAME.tty and stdout in
// NAME.out, and fails when the command prompts more often than the script has lines, or
// runs longer than 20 seconds.
func ptyDebug(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 4 || args[2] != "--" {
		ts.Fatalf("usage: ptydebug NAME SCRIPT -- command [args...]")
	}
	lines := strings.Split(strings.TrimSuffix(ts.ReadFile(args[1]), "\n"), "\n")
	ptyDrive(ts, neg, "ptydebug", args[0], args[3:], ptyScript{
		prompts: []string{debug.Prompt, debug.AnswerPrompt, debug.ApprovalPrompt},
		lines:   lines, keys: keys, hangup: "<hangup>", what: "lines of " + args[1],
	})
}

// TestDebugHangupStopsPlugins: closing the terminal of a halo debug that is stopped at a
// tool call, with the tool's plugin running, stops the run and the plugin: no process halo
// started outlives it, and the run's record says it was stopped because the terminal closed.
func TestDebugHangupStopsPlugins(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("skipped: this system has no /proc to find halo's children in")
	}
	dir := t.TempDir()
	files := map[string]string{
		"flow.halo": `tool Files : Workspace("./notes")

pipeline Read(name: String) -> Result:
  name |> Files.read(path: "notes.md") as note
    |> Files.read(path: "notes.md") as again
    |> System.Value(again)
`,
		"notes/notes.md": "a\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	cmd := exec.Command("halo", "debug", "flow.halo", "--input", "name=x", "--events", "ev.jsonl")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=xterm")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, io.Discard, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var screen bytes.Buffer
	buf := make([]byte, 4096)
	expect := func(s string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(screen.String(), s) {
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q: %q", s, screen.String())
			}
			master.SetReadDeadline(deadline)
			n, err := master.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				t.Fatalf("reading the terminal: %v (it showed %q)", err, screen.String())
			}
		}
	}
	expect(debug.Prompt)
	master.Write(keys("b Files.read"))
	expect("breakpoint 1 before every call of Files.read")
	// Plugins start on their first call: the second call's stop has the plugin running.
	master.Write(keys("c"))
	expect("stopped before the call of Files.read")
	master.Write(keys("c"))
	expect("at flow.halo:5:5 (breakpoint 1)")
	expect(debug.Prompt)
	kids := descendants(cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("halo started no plugin for Files")
	}
	master.Close()
	select {
	case err := <-done:
		// It ends as a stopped run does, not killed by the hang-up before it could save the
		// run and stop its plugins.
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("halo debug ended with %v after its terminal closed, want exit status 1", err)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("halo debug did not exit after its terminal closed")
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range kids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d that halo started outlived it", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ev, err := os.ReadFile(filepath.Join(dir, "ev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ev, []byte(`"code":"DEBUG_STOPPED","message":"the run was stopped in the debugger: the terminal was closed"`)) {
		t.Errorf("the run's events do not say it was stopped:\n%s", ev)
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
	}
	var out []int
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	f := strings.Fields(rest)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
