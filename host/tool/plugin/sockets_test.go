package plugin

import (
	"strings"
	"testing"
)

// A long temporary folder would put the plugin's socket past the Unix socket path limit
// (bind: invalid argument); socket folders then go in /tmp.
func TestSocketBaseKeepsSocketPathsShort(t *testing.T) {
	long := "/var/folders/zz/zyxvpxvq6csfxvn_n0000000000000/T/TestScripts1234567/tmp"
	if got := socketBase(long); got != "/tmp" {
		t.Errorf("socketBase(%q) = %q, want /tmp", long, got)
	}
	if got := socketBase("/tmp"); got != "/tmp" {
		t.Errorf("socketBase(/tmp) = %q", got)
	}
	short := "/home/u/tmp"
	if got := socketBase(short); got != short {
		t.Errorf("socketBase(%q) = %q, want it kept", short, got)
	}
	// The longest path a socket can then have fits the 104 bytes macOS allows.
	worst := socketBase(strings.Repeat("x", 48)) + "/halo-plugins-4194304-1234567890/plugin1234567890"
	if len(worst) > 104 {
		t.Errorf("worst-case socket path is %d bytes", len(worst))
	}
}
