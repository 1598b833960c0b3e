package root

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/errcode"
	"halolang.dev/halo/pkgmgr"
)

// The log (where plugins' and MCP servers' stderr lines go) and the error line every command
// ends with show control characters as escapes.
func TestLogAndErrorsAreCleaned(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &cmdutil.Factory{
		IO:  cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Env: cmdutil.Env{}, Now: time.Now, Dir: t.TempDir(),
	}
	if status := Main([]string{"run", "notes\x1b[2J\x1b]52;c;cm0gLXJm\x07.halo"}, f); status != cmdutil.ExitFailed {
		t.Fatalf("status %d, stderr %q", status, errOut.String())
	}
	f.Logger.Named("plugin\x1b[8m").Warn("stderr line \x1b[2J\u009b8m hidden", "key\x1b[1A", "value\x1b[0m")
	got := errOut.String()
	for _, r := range got {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Fatalf("stderr holds %U:\n%q", r, got)
		}
	}
	for _, want := range []string{`notes\u001b[2J\u001b]52;c;cm0gLXJm\u0007.halo`, `plugin\u001b[8m`, `stderr line \u001b[2J\u009b8m hidden`, `key\u001b[1A`} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
}

// A mistyped command is answered with the commands it may have meant.
func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"rnu"}, `halo: unknown command "rnu" for "halo"; did you mean run or runs?`},
		{[]string{"sreve"}, `halo: unknown command "sreve" for "halo"; did you mean serve?`},
		{[]string{"valdate"}, `halo: unknown command "valdate" for "halo"; did you mean validate?`},
		{[]string{"plugin", "inti"}, `halo: unknown command "inti" for "halo plugin"; did you mean init?`},
		{[]string{"nosuch"}, "halo: unknown command \"nosuch\" for \"halo\"\n"},
	} {
		f, _, errOut := testFactory(t)
		if got := Main(tt.args, f); got != cmdutil.ExitUsage || !strings.HasPrefix(errOut.String(), tt.want) {
			t.Errorf("halo %s: status %d, stderr %q; want %q", strings.Join(tt.args, " "), got, errOut, tt.want)
		}
	}
}

func testFactory(t *testing.T) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.Factory{
		IO:  cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Env: cmdutil.Env{}, Now: time.Now, Dir: t.TempDir(),
	}, &out, &errOut
}

// Bad usage exits 2 because it is marked where it arises (cobra's flag and argument checks,
// an unknown command, a command's own FlagError), never because of what a message says: a
// failure whose text holds "invalid argument" (EINVAL's text) or "unknown command" exits 1.
func TestUsageIsMarkedWhereItArises(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want int
	}{
		{[]string{"nosuch"}, cmdutil.ExitUsage},
		{[]string{"valdate"}, cmdutil.ExitUsage},
		{[]string{"run"}, cmdutil.ExitUsage},
		{[]string{"run", "a", "b", "c"}, cmdutil.ExitUsage},
		{[]string{"run", "--nope", "x.halo"}, cmdutil.ExitUsage},
		{[]string{"run", "-i"}, cmdutil.ExitUsage},
		{[]string{"version", "extra"}, cmdutil.ExitUsage},
		{[]string{"completion", "nosh"}, cmdutil.ExitUsage},
		{[]string{"resume", "x.halo", "last"}, cmdutil.ExitUsage},
		{[]string{"--log-level", "loud", "version"}, cmdutil.ExitUsage},
		{[]string{"run", "x.halo", "--input", "novalue"}, cmdutil.ExitUsage},
		{[]string{}, cmdutil.ExitOK},
		{[]string{"version"}, cmdutil.ExitOK},
		// Failures whose messages hold usage-like text.
		{[]string{"run", "invalid argument.halo"}, cmdutil.ExitFailed},
		{[]string{"run", "unknown command.halo"}, cmdutil.ExitFailed},
		{[]string{"remove", "invalid argument"}, cmdutil.ExitFailed},
	} {
		f, _, errOut := testFactory(t)
		if got := Main(tt.args, f); got != tt.want {
			t.Errorf("halo %s: status %d, want %d\n%s", strings.Join(tt.args, " "), got, tt.want, errOut)
		}
	}
}

// A coded error prints its code once, at the end of the first line, however many coded errors
// its chain holds and whatever command returned it.
func TestErrorText(t *testing.T) {
	inner := &pkgmgr.Error{Code: pkgmgr.CodeInvalid, Message: "halo-tool.json has 2 problem(s)", Problems: []pkgmgr.Problem{{Path: "name", Message: "x"}, {Path: "version", Message: "y"}}}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{errors.New("plain"), "halo: plain\n"},
		{inner, "halo: halo-tool.json has 2 problem(s) [PACKAGE_INVALID]\n  name: x\n  version: y\n"},
		{fmt.Errorf("add: %w", inner), "halo: add: halo-tool.json has 2 problem(s) [PACKAGE_INVALID]\n  name: x\n  version: y\n"},
		{errcode.Wrap("RUN_RECORD", errcode.New("MOCK", "inner"), "outer"), "halo: outer [RUN_RECORD]\n"},
		{fmt.Errorf("x: %w", errcode.New("MOCK", "already said [MOCK]")), "halo: x: already said [MOCK]\n"},
		{errcode.New("TOOL_ERROR", "bell\a"), "halo: bell\\u0007 [TOOL_ERROR]\n"},
	} {
		if got := errorText(tt.err); got != tt.want {
			t.Errorf("errorText(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
