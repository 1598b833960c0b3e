package mcp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// journallessExt4 says whether dir is on an ext4 filesystem that has no journal, and names
// its device; false when that cannot be told (not a block device, not ext4).
func journallessExt4(dir string) (string, bool) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", false
	}
	target, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if err != nil {
		return "", false
	}
	dev := filepath.Base(target)
	journal, err := os.ReadFile(filepath.Join("/sys/fs/ext4", dev, "journal_task"))
	if err != nil {
		return "", false
	}
	return dev, strings.TrimSpace(string(journal)) == "<none>"
}
