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
	if got := socketBase(strings.Repeat("x", 33)); got != "/tmp" {
		t.Errorf("a 33-byte base is kept; its sockets can pass 104 bytes")
	}
	short := "/home/u/tmp"
	if got := socketBase(short); got != short {
		t.Errorf("socketBase(%q) = %q, want it kept", short, got)
	}
	// The longest path a socket can then have fits the 104 bytes macOS allows (NUL included).
	worst := socketBase(strings.Repeat("x", 32)) + "/halo-plugins-4194304-4294967295/plugin-dir4294967295/plugin4294967295"
	if len(worst)+1 > 104 {
		t.Errorf("worst-case socket path is %d bytes", len(worst))
	}
}
