package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// ptyRun is the testscript command `ptyrun NAME command [args...]`: it runs the command the
// way a person at a terminal does, with its stderr on a pseudo-terminal (stdin is /dev/null,
// stdout a file), and saves what the terminal received in NAME.tty and stdout in NAME.out.
// The command sees the script's PATH, HOME and TMPDIR, with TERM=xterm.
func ptyRun(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: ptyrun NAME command [args...]")
	}
	name, argv := args[0], args[1:]
	path := lookPath(ts.Getenv("PATH"), argv[0])
	if path == "" {
		ts.Fatalf("ptyrun: %s not found in the script's PATH", argv[0])
	}
	master, tty, err := pty.Open()
	if err != nil {
		ts.Fatalf("ptyrun: open a pseudo-terminal: %v", err)
	}
	defer master.Close()
	out, err := os.Create(ts.MkAbs(name + ".out"))
	ts.Check(err)
	defer out.Close()
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0] // testscript picks the program by its name
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PATH=" + ts.Getenv("PATH"), "HOME=" + ts.Getenv("HOME"), "TMPDIR=" + ts.Getenv("TMPDIR"), "TERM=xterm", "NO_COLOR=1"}
	cmd.Stdout, cmd.Stderr = out, tty
	if err := cmd.Start(); err != nil {
		tty.Close()
		ts.Fatalf("ptyrun: %v", err)
	}
	tty.Close() // the child has it; the master reads EIO once every copy is closed
	var screen bytes.Buffer
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, err := io.Copy(&screen, master)
		if err != nil && !errors.Is(err, syscall.EIO) && !errors.Is(err, os.ErrClosed) {
			ts.Logf("ptyrun: reading the terminal: %v", err)
		}
	}()
	werr := cmd.Wait()
	select {
	case <-read:
	case <-time.After(5 * time.Second):
		// A process the command left behind still holds the terminal.
		master.Close()
		<-read
	}
	ts.Check(os.WriteFile(ts.MkAbs(name+".tty"), screen.Bytes(), 0o644))
	ts.Logf("terminal: %q", screen.String())
	switch {
	case neg && werr == nil:
		ts.Fatalf("ptyrun: %s succeeded unexpectedly", argv[0])
	case !neg && werr != nil:
		ts.Fatalf("ptyrun: %s: %v", argv[0], werr)
	}
}

func lookPath(pathVar, name string) string {
	for _, dir := range filepath.SplitList(pathVar) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
