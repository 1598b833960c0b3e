package plugin

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr starts a plugin in its own process group (so it is killed with everything it
// started) with SIGKILL as its parent-death signal (so a host killed with SIGKILL leaves no
// plugin running).
//
// With namespaces the plugin also starts in its own user namespace (mapping the host's user
// and group to themselves) and its own PID namespace, where it is process 1:
//
//   - inside a new user namespace the plugin's capabilities stop at the namespace's edge.
//     This matters when the host runs as root: root's CAP_SYS_PTRACE reads
//     /proc/<host pid>/environ even from a non-dumpable host. Files, sockets and signals
//     still work as for the same user.
//   - when process 1 of a PID namespace dies, the kernel kills every process in it. So
//     whatever the plugin started (grandchildren in other process groups or sessions
//     included) dies with it, even when the host was killed and cannot clean up. Orphans of
//     the plugin's children are re-parented to the plugin; Go does not reap processes it did
//     not start, so they stay zombies until the plugin exits.
//
// The parent-death signal fires when the OS thread that started the plugin exits; the Go
// runtime does not end threads that were not locked, so in practice it fires when the host
// process dies.
func sysProcAttr(namespaces bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if namespaces {
		uid, gid := os.Getuid(), os.Getgid()
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
	}
	return a
}

// wantNamespaces reports whether plugins start in their own user and PID namespaces: always on
// Linux; a system that forbids them gets a warning and plugins without them.
func wantNamespaces() bool { return true }

// hardenHost marks the host process non-dumpable (prctl PR_SET_DUMPABLE 0): its
// /proc/<pid>/environ, mem and maps then belong to root and refuse readers without
// CAP_SYS_PTRACE, so a same-user plugin cannot read the host's secrets there. It also stops
// core dumps of the host, which would hold the same secrets. It is idempotent.
func hardenHost() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
