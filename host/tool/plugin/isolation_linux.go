package plugin

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"halolang.dev/halo/host/tool/sandbox"
)

// isolations lists the ways to start a plugin, best first; each one is tried when the one
// before it fails (some systems forbid user namespaces: a container's seccomp profile, an
// AppArmor rule). userNS asks for a user namespace even where the host needs none.
//
// Every plugin starts in a session of its own, and so in its own process group (it is killed
// with everything it started) and without a controlling terminal (it cannot open /dev/tty,
// nor make the user's terminal its own), with SIGKILL as its parent-death signal (so a host killed with SIGKILL leaves no plugin
// running). The signal fires when the OS thread that started the plugin exits; the runner
// keeps a thread it locked for a plugin until the plugin has ended, and the Go runtime does
// not end threads that were not locked, so in practice it fires when the host dies.
//
// In its own PID namespace the plugin is process 1, and when process 1 of a PID namespace
// dies, the kernel kills every process in it. So whatever the plugin started (grandchildren
// in other process groups or sessions included) dies with it, even when the host was killed
// and cannot clean up. Orphans of the plugin's children are re-parented to the plugin; Go
// does not reap processes it did not start, so they stay zombies until the plugin exits.
//
// Creating a PID namespace takes CAP_SYS_ADMIN. A host that has it (root) creates one alone.
// The host starts every plugin from a thread that has set no_new_privs and emptied the sets
// a started program takes its capabilities from (sandbox.RestrictThread, or the whole
// sandbox), so a root host's plugin is root without any capability and cannot gain one: root's CAP_SYS_PTRACE would read /proc/<host
// pid>/environ even from a non-dumpable host. Any other host creates a user namespace along
// with the PID namespace (mapping the host's user and group to themselves), in which the
// plugin may hold capabilities that stop at the namespace's edge. Files, sockets and
// signals work as for the same user.
//
// A root host does without the user namespace because of its price: Go cannot vfork a
// process into a new user namespace (the child waits while the host writes its maps), so it
// forks, copying the host's page tables, and the host then takes a page fault for each page
// it writes: about 3 ms plus 0.07 ms per MB of host memory on the development machine.
func isolations(namespaces, userNS bool) []isolation {
	switch {
	case !namespaces:
		return []isolation{isolateNone}
	case !userNS && mayCreatePIDNamespace():
		return []isolation{isolatePID, isolateUserPID, isolateNone}
	}
	return []isolation{isolateUserPID, isolateNone}
}

// mayCreatePIDNamespace reports whether this process holds CAP_SYS_ADMIN, which creating a
// PID namespace without a user namespace takes.
func mayCreatePIDNamespace() bool {
	eff, ok := effectiveCaps()
	return ok && eff[unix.CAP_SYS_ADMIN/32]&(1<<(unix.CAP_SYS_ADMIN%32)) != 0
}

// restrictThread is the confinement of a plugin without a sandbox: no capabilities,
// no_new_privs, the seccomp filter every plugin gets.
func restrictThread() func([]string) error {
	return func([]string) error { return sandbox.RestrictThread() }
}

func effectiveCaps() ([2]uint32, bool) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return [2]uint32{}, false
	}
	return [2]uint32{data[0].Effective, data[1].Effective}, true
}

// sysProcAttr starts a plugin in isolation i, in a session of its own. The plugin starts from
// a confined thread, whose Landlock rules keep Go from writing the new user namespace's maps
// in /proc/<pid> from it, as Go does, and a non-dumpable host could not write them before
// the plugin's execve either: afterStart writes them instead.
func sysProcAttr(i isolation) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	switch i {
	case isolatePID:
		a.Cloneflags = syscall.CLONE_NEWPID
	case isolateUserPID:
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID
	}
	return a
}

// afterStart finishes isolation i of the plugin process pid, from an unconfined thread of
// the host: a plugin in a user namespace gets the host's user and group mapped to
// themselves there (setgroups denied, as Go does). Until then, which is before the host
// reads the plugin's handshake and so before any request reaches it, the plugin's own ids
// read as the overflow id (65534) inside its namespace; the kernel checks its files with the
// host's ids all along.
func afterStart(i isolation, pid int) error {
	if i != isolateUserPID {
		return nil
	}
	uid, gid := os.Getuid(), os.Getgid()
	for _, w := range []struct{ file, data string }{
		{"setgroups", "deny"},
		{"gid_map", fmt.Sprintf("%d %d 1\n", gid, gid)},
		{"uid_map", fmt.Sprintf("%d %d 1\n", uid, uid)},
	} {
		if err := writeProcFile(fmt.Sprintf("/proc/%d/%s", pid, w.file), w.data); err != nil {
			return fmt.Errorf("user namespace of the plugin: %w", err)
		}
	}
	return nil
}

// writeProcFile writes data in one write, as /proc's map files require.
func writeProcFile(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(data)
	if err := f.Close(); werr == nil {
		werr = err
	}
	return werr
}

// wantNamespaces reports whether plugins start in their own namespaces: always on Linux; a
// system that forbids them gets a warning and plugins without them.
func wantNamespaces() bool { return true }

// hardenHost marks the host non-dumpable (sandbox.NonDumpable) before a plugin starts, for
// hosts other than the halo command, which does so at start-up.
func hardenHost() error { return sandbox.NonDumpable() }

func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
