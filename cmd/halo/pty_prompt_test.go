package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"

	"halolang.dev/halo/cmd/halo/internal/run"
)

// ptyAnswer is the testscript command `ptyanswer NAME ANSWER... -- command [args...]`: it
// runs the command as a person at a terminal does, with stdin and stderr on a
// pseudo-terminal (stdout a file), and each time the command asks "Allow? [y/N, or say why
// not]" types the next ANSWER and Enter (an empty ANSWER is Enter alone; ^D ends the input).
// It saves what the terminal showed in NAME.tty and stdout in NAME.out, and fails when the
// command asks more often than there are answers, or runs longer than 20 seconds.
func ptyAnswer(ts *testscript.TestScript, neg bool, args []string) {
	sep := -1
	for i, a := range args {
		if a == "--" {
			sep = i
			break
		}
	}
	if sep < 1 || sep == len(args)-1 {
		ts.Fatalf("usage: ptyanswer NAME ANSWER... -- command [args...]")
	}
	name, answers, argv := args[0], args[1:sep], args[sep+1:]
	ptyDrive(ts, neg, "ptyanswer", name, argv, ptyScript{
		prompts: []string{run.ApprovalPrompt},
		lines:   answers,
		what:    "answers given",
		keys: func(a string) []byte {
			if a == "^D" {
				return []byte{4}
			}
			return []byte(a + "\n")
		},
	})
}

// A ptyScript is what ptyDrive types: a line of lines after each prompt it sees, each typed
// as keys makes it; the line hangup (when not "") closes the terminal instead. what names
// the lines in failures ("answers given").
type ptyScript struct {
	prompts []string
	lines   []string
	keys    func(line string) []byte
	hangup  string
	what    string
}

// ptyDrive runs argv as a person at a terminal does, with stdin and stderr on a
// pseudo-terminal (stdout a file), typing sc's lines after its prompts. It saves what the
// terminal showed in NAME.tty and stdout in NAME.out, and fails when the command prompts
// more often than there are lines, fewer times, or runs longer than 20 seconds. cmdName
// names the testscript command in its failures.
func ptyDrive(ts *testscript.TestScript, neg bool, cmdName, name string, argv []string, sc ptyScript) {
	path := findProgram(ts.Getenv("PATH"), argv[0])
	if path == "" {
		ts.Fatalf("%s: %s not found in the script's PATH", cmdName, argv[0])
	}
	master, tty, err := pty.Open()
	if err != nil {
		ts.Fatalf("%s: open a pseudo-terminal: %v", cmdName, err)
	}
	defer master.Close()
	out, err := os.Create(ts.MkAbs(name + ".out"))
	ts.Check(err)
	defer out.Close()
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0] // testscript picks the program by its name
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME"), "TMPDIR=" + ts.Getenv("TMPDIR"), "TERM=xterm", "NO_COLOR=1"}
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"} { // fakemodel's
		if v := ts.Getenv(k); v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, out, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		tty.Close()
		ts.Fatalf("%s: %v", cmdName, err)
	}
	tty.Close() // the child has it; the master reads EIO once every copy is closed

	var (
		mu      sync.Mutex
		screen  bytes.Buffer
		typed   int
		tooMany bool
		hungUp  bool
	)
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			asked := 0
			for _, p := range sc.prompts {
				asked += strings.Count(screen.String(), p)
			}
			for !hungUp && typed < asked {
				if typed == len(sc.lines) {
					tooMany = true
					break
				}
				line := sc.lines[typed]
				typed++
				if sc.hangup != "" && line == sc.hangup {
					hungUp = true
					master.Close()
					break
				}
				master.Write(sc.keys(line))
			}
			mu.Unlock()
			if err != nil {
				if !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) && !errors.Is(err, io.EOF) {
					ts.Logf("%s: reading the terminal: %v", cmdName, err)
				}
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		master.Close()
		<-read
		ts.Fatalf("%s: %s did not finish in 20s; the terminal showed %q", cmdName, argv[0], screen.String())
	}
	select {
	case <-read:
	case <-time.After(5 * time.Second):
		master.Close() // a process the command left behind still holds the terminal
		<-read
	}
	mu.Lock()
	defer mu.Unlock()
	ts.Check(os.WriteFile(ts.MkAbs(name+".tty"), screen.Bytes(), 0o644))
	ts.Logf("terminal: %q", screen.String())
	switch {
	case tooMany:
		ts.Fatalf("%s: %s asked more than the %d %s", cmdName, argv[0], len(sc.lines), sc.what)
	case typed < len(sc.lines):
		ts.Fatalf("%s: %s asked %d times, and there are %d %s", cmdName, argv[0], typed, len(sc.lines), sc.what)
	case neg && werr == nil:
		ts.Fatalf("%s: %s succeeded unexpectedly", cmdName, argv[0])
	case !neg && werr != nil:
		ts.Fatalf("%s: %s: %v", cmdName, argv[0], werr)
	}
}

// findProgram looks name up in a PATH list.
func findProgram(pathVar, name string) string {
	for _, dir := range filepath.SplitList(pathVar) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
