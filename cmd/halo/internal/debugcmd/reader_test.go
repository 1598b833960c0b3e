package debugcmd

import (
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/term"
)

// A terminal that was closed reads as ended, as Ctrl-D does; only Ctrl-D is the person's
// "stop", and a run stopped by a closed terminal says so (the hangup of debug_tty.txtar
// depends on when the read meets it: a read that starts after the hangup ends at once).
func TestReadTermTellsCtrlDFromAClosedTerminal(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        error
		wantMsg     string
	}{
		{name: "ctrl-d", input: "\x04", wantMsg: "Ctrl-D (or Ctrl-C) at the prompt"},
		{name: "ctrl-c", input: "\x03", wantMsg: "Ctrl-D (or Ctrl-C) at the prompt"},
		{name: "closed", input: "", want: errTerminalGone},
		{name: "closed mid-line", input: "p con", want: errTerminalGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := &device{r: strings.NewReader(tc.input)}
			r := &reader{term: term.NewTerminal(struct {
				io.Reader
				io.Writer
			}{dev, io.Discard}, ""), dev: dev}
			line, err := r.readTerm("(halo) ")
			if line != "" || err == nil {
				t.Fatalf("readTerm = %q, %v; want an error", line, err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("err = %v; want %v", err, tc.want)
			}
			if tc.wantMsg != "" && (errors.Is(err, errTerminalGone) || err.Error() != tc.wantMsg) {
				t.Fatalf("err = %v; want %q", err, tc.wantMsg)
			}
		})
	}
}

func TestReadTermReadsALine(t *testing.T) {
	dev := &device{r: strings.NewReader("p context.data\r")}
	r := &reader{term: term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{dev, io.Discard}, ""), dev: dev}
	line, err := r.readTerm("(halo) ")
	if err != nil || line != "p context.data" {
		t.Fatalf("readTerm = %q, %v", line, err)
	}
}
