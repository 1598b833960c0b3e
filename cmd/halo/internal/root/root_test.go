package root

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/halo-lang/halo/cmd/halo/internal/cmdutil"
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
