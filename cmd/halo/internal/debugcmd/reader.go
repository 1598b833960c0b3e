package debugcmd

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"golang.org/x/term"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/run"
	"halolang.dev/halo/cmd/halo/internal/termsafe"
)

// A reader reads the person's commands: at a terminal (stdin and stderr both one) with line
// editing and history (golang.org/x/term's Terminal, the terminal in raw mode only while a
// line is read; the Terminal draws the prompt and the line), else line by line from stdin
// (run.ReadLine, as halo run reads answers), echoing each after its prompt so a scripted
// session's transcript reads as a typed one. What the debugger shows goes to out (stderr,
// made safe for a terminal: it quotes models' and tools' text).
type reader struct {
	out io.Writer
	// At a terminal:
	term *term.Terminal
	fd   int
	dev  *device
	// Otherwise:
	in   *bufio.Reader
	echo io.Writer
}

type fder interface{ Fd() uintptr }

func newReader(f *cmdutil.Factory) *reader {
	if f.IO.InTTY && f.IO.ErrTTY {
		if in, ok := f.IO.In.(fder); ok {
			dev := &device{r: f.IO.In}
			t := term.NewTerminal(struct {
				io.Reader
				io.Writer
			}{dev, f.IO.ErrOut}, "")
			// What the debugger shows is written while the terminal is not raw, past the
			// Terminal (which would draw its prompt again after each write).
			return &reader{term: t, fd: int(in.Fd()), dev: dev, out: termsafe.Writer(f.IO.ErrOut)}
		}
	}
	out := termsafe.Writer(f.IO.ErrOut)
	return &reader{in: bufio.NewReaderSize(f.IO.In, 4096), out: out, echo: out}
}

func (r *reader) close() {}

// A device is the terminal a Terminal reads, noting when a read of it fails or ends: the
// Terminal returns io.EOF both for Ctrl-D and for a terminal that was closed (a hung-up
// terminal reads as ended, or fails with EIO, depending on when the read met the hangup).
type device struct {
	r    io.Reader
	gone bool
}

func (d *device) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil {
		d.gone = true
	}
	return n, err
}

// errTerminalGone is how a terminal that can no longer be read ends the session.
var errTerminalGone = errors.New("the terminal was closed")

func (r *reader) readLine(prompt string) (string, error) {
	if r.term == nil {
		fmt.Fprint(r.echo, prompt)
		line, err := run.ReadLine(r.in)
		if err != nil && line == "" {
			fmt.Fprintln(r.echo)
			if errors.Is(err, io.EOF) {
				return "", errors.New("the commands on standard input ended")
			}
			return "", fmt.Errorf("reading the commands: %w", err)
		}
		fmt.Fprintln(r.echo, termsafe.String(line))
		return line, nil
	}
	old, err := term.MakeRaw(r.fd)
	if err != nil {
		return "", errTerminalGone
	}
	defer term.Restore(r.fd, old)
	return r.readTerm(prompt)
}

// readTerm reads a line at the terminal, in raw mode.
func (r *reader) readTerm(prompt string) (string, error) {
	r.term.SetPrompt(prompt)
	line, err := r.term.ReadLine()
	switch {
	case errors.Is(err, io.EOF) && r.dev.gone:
		return "", errTerminalGone
	case errors.Is(err, io.EOF):
		return "", errors.New("Ctrl-D (or Ctrl-C) at the prompt")
	case errors.Is(err, term.ErrPasteIndicator):
		return line, nil
	case err != nil:
		return "", errTerminalGone
	}
	return line, nil
}
