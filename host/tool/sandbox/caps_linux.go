package sandbox

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// dropCapabilities leaves the calling thread, and the program it executes next, without
// any Linux capability, even when the host runs as root. Landlock lets a tracer with
// CAP_SYS_PTRACE read other processes' /proc entries (a root plugin could read the host's
// environ), and root's other capabilities would defeat file permissions; a plugin needs
// none of them. Capabilities are per thread: call it on the locked thread that executes.
func dropCapabilities() error {
	if err := dropInherited(); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return fmt.Errorf("clear capabilities: %w", err)
	}
	return nil
}

// dropInherited empties the capability sets a program executed by the calling thread (or
// by a process it starts) derives its own from: the bounding, ambient and inheritable sets.
// After execve such a program holds no capability, root or not: root's are the bounding
// and inheritable sets, and anyone else's come from file capabilities (masked by the
// bounding set, and ignored under no_new_privs) and the ambient set. The thread keeps its
// own effective and permitted sets, which the host needs to create namespaces for the
// program.
func dropInherited() error {
	// Emptying the bounding set needs CAP_SETPCAP, which an unprivileged user does not have
	// and does not need (it has nothing to drop).
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability this kernel knows
		}
		if errors.Is(err, unix.EPERM) {
			break
		}
		if err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clear inheritable capabilities: %w", err)
	}
	return nil
}
