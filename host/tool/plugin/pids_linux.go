package plugin

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Every plugin gets a limit on the processes (threads, in fact) it and everything it starts
// may have at once, so a hostile module or a Bash fork bomb cannot exhaust the host's:
//
//   - Where the host may create cgroups (root) in a cgroup v1 hierarchy with the pids
//     controller, the plugin starts in a cgroup of its own with pids.max: the thread it starts
//     from joins the cgroup first, so the plugin is inside from its first instruction. The
//     cgroup is removed when the plugin ends. (cgroup v2 moves only whole processes and keeps
//     processes out of cgroups with children, which a host sitting in a cgroup of its own
//     cannot meet without moving itself: not done.)
//   - Otherwise, for a plugin in a user namespace of its own started by a host that is not
//     root, RLIMIT_NPROC: the kernel counts it per user namespace as well as per user, so the
//     limit is the plugin's alone. Outside a user namespace RLIMIT_NPROC counts every process
//     of the user (a limit would fail at once for a user with a busy desktop), and the kernel
//     never applies it to root (user id 0), in a user namespace or not.
//   - Otherwise there is no limit (a root host without a pids cgroup hierarchy it may
//     write; a host whose plugins cannot have user namespaces), and the host logs why at
//     debug level.

// DefaultMaxProcs is the limit on the processes and threads of a plugin and what it starts.
const DefaultMaxProcs = 1024

// pidsCgroups is the cgroup v1 pids hierarchy the host may create cgroups in, found once.
var pidsCgroups = sync.OnceValue(findPidsCgroup)

// pidsHierarchy is where this host's plugins' cgroups go: base is the host's own cgroup in
// the pids hierarchy; "" when there is none the host may write.
type pidsHierarchy struct {
	base   string
	reason string // why there is none
}

func findPidsCgroup() pidsHierarchy {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return pidsHierarchy{reason: "no /proc/self/cgroup"}
	}
	own := ""
	for _, line := range strings.Split(string(cg), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && parts[0] != "0" && hasField(parts[1], "pids") {
			own = parts[2]
		}
	}
	if own == "" {
		return pidsHierarchy{reason: "no cgroup v1 pids hierarchy"}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return pidsHierarchy{reason: "no /proc/self/mountinfo"}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(tail) < 3 || tail[0] != "cgroup" || !hasField(tail[2], "pids") {
			continue
		}
		root, mount := fields[3], fields[4]
		rel, ok := strings.CutPrefix(own, root)
		if !ok {
			continue
		}
		base := filepath.Join(mount, rel)
		if unix.Access(base, unix.W_OK) != nil {
			return pidsHierarchy{reason: "the pids cgroup " + base + " is not writable"}
		}
		sweepCgroups(base)
		return pidsHierarchy{base: base}
	}
	return pidsHierarchy{reason: "the cgroup v1 pids hierarchy is not mounted"}
}

func hasField(list, name string) bool {
	for _, f := range strings.Split(list, ",") {
		if f == name {
			return true
		}
	}
	return false
}

// cgroupPrefix starts the name of every plugin cgroup: halo-<host pid>-<n>.
const cgroupPrefix = "halo-"

var cgroupSeq struct {
	sync.Mutex
	n int
}

// A pidsCgroup is one plugin's cgroup.
type pidsCgroup struct {
	dir, parent string
	mu          sync.Mutex
	tid         int
}

// newPidsCgroup makes a cgroup for one plugin with pids.max set to max, or returns nil when
// the host has no pids hierarchy it may write.
func newPidsCgroup(max int) (*pidsCgroup, error) {
	h := pidsCgroups()
	if h.base == "" {
		return nil, nil
	}
	cgroupSeq.Lock()
	cgroupSeq.n++
	n := cgroupSeq.n
	cgroupSeq.Unlock()
	dir := filepath.Join(h.base, fmt.Sprintf("%s%d-%d", cgroupPrefix, os.Getpid(), n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(max)), 0); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("pids cgroup: %w", err)
	}
	return &pidsCgroup{dir: dir, parent: h.base}, nil
}

// join moves the calling thread into the cgroup: what it starts from now on starts there. It
// runs on the thread the plugin is started from, before that thread is confined.
func (c *pidsCgroup) join() error {
	tid := unix.Gettid()
	if err := os.WriteFile(filepath.Join(c.dir, "tasks"), []byte(strconv.Itoa(tid)), 0); err != nil {
		return fmt.Errorf("join the pids cgroup: %w", err)
	}
	c.mu.Lock()
	c.tid = tid
	c.mu.Unlock()
	return nil
}

// leave moves the thread that joined back to the host's cgroup, once the plugin has started
// (it is in the cgroup from then on, and what it starts too). The thread, confined by then,
// cannot write the cgroup's files itself: the host does it from another thread.
func (c *pidsCgroup) leave() {
	c.mu.Lock()
	tid := c.tid
	c.tid = 0
	c.mu.Unlock()
	if tid != 0 {
		_ = os.WriteFile(filepath.Join(c.parent, "tasks"), []byte(strconv.Itoa(tid)), 0)
	}
}

// remove removes the cgroup once the plugin has ended. In its own PID namespace, everything
// the plugin started is gone by the time it has been reaped; without one, what its group
// kill reached may take a moment to go: remove retries for a second, and a cgroup left
// behind is removed by the next host (sweepCgroups).
func (c *pidsCgroup) remove() {
	c.leave()
	for deadline := time.Now().Add(time.Second); ; time.Sleep(time.Millisecond) {
		err := os.Remove(c.dir)
		if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return
		}
	}
}

// sweepCgroups removes the plugin cgroups in base of hosts that no longer run.
func sweepCgroups(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), cgroupPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.Remove(filepath.Join(base, e.Name()))
		}
	}
}

// limitProcesses sets RLIMIT_NPROC on the plugin process pid, which runs in a user namespace
// of its own, right after it started (before the host reads its handshake).
func limitProcesses(pid, max int) error {
	lim := unix.Rlimit{Cur: uint64(max), Max: uint64(max)}
	if err := unix.Prlimit(pid, unix.RLIMIT_NPROC, &lim, nil); err != nil {
		return fmt.Errorf("limit the plugin's processes: %w", err)
	}
	return nil
}

// pidsStatus says how plugins' processes are limited here, for the warning a host logs once
// when they are not: a root host's plugins outside a user namespace, without a cgroup.
func pidsStatus() string {
	h := pidsCgroups()
	if h.base != "" {
		return ""
	}
	return h.reason
}

// rlimitApplies reports whether RLIMIT_NPROC limits a plugin started in isolation i alone.
func rlimitApplies(i isolation) bool {
	return i == isolateUserPID && os.Geteuid() != 0
}
