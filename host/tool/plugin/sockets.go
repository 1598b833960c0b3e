package plugin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// socketPrefix starts the name of every host's socket folder: halo-plugins-<host pid>-<random>.
const socketPrefix = "halo-plugins-"

// newSocketRoot makes this host's socket folder (0700: only this user can enter it) in the
// temporary folder, after removing the folders of hosts that died without cleaning up (killed
// with SIGKILL, say): their plugins died with them, and their sockets lead nowhere.
func newSocketRoot() (string, error) {
	base := socketBase(os.TempDir())
	sweepSocketRoots(base)
	return os.MkdirTemp(base, fmt.Sprintf("%s%d-", socketPrefix, os.Getpid()))
}

// socketBase is the folder socket folders go in: the temporary folder, unless its path is so
// long that a socket inside would pass the limit on Unix socket paths (104 bytes on macOS,
// 108 on Linux, each counting the terminating NUL): macOS's per-user TMPDIR and test work
// folders are. A socket path adds up to 70 bytes to the base: this host's folder
// (halo-plugins-<pid>-<random>), go-plugin's folder for one plugin (plugin-dir<random>) and
// the socket (plugin<random>), each random part up to 10 digits.
func socketBase(tmp string) string {
	const maxBase = 32
	if len(tmp) > maxBase {
		return "/tmp"
	}
	return tmp
}

// sweepSocketRoots removes the socket folders in dir that belong to this user and to a
// process that no longer exists. Errors are ignored: this is tidying, not correctness.
func sweepSocketRoots(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), socketPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
