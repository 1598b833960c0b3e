package plugin

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hasChildren reports whether process pid has a child process, as the host's /proc shows it.
// It reads each thread's children list (/proc/PID/task/TID/children); where the kernel has no
// such list, it looks through every process's parent. It says true when it cannot tell, so a
// caller that reuses a process only when it has none errs on the side of a new one.
func hasChildren(pid int) bool {
	tasks, err := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	if err == nil && len(tasks) > 0 {
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				return true
			}
			if len(strings.TrimSpace(string(b))) > 0 {
				return true
			}
		}
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pid)
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone, or not ours to read
		}
		// The fields after the command name (which may hold spaces) start after the last ')'.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 1 && fields[1] == want {
			return true
		}
	}
	return false
}
