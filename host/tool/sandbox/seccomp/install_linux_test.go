package seccomp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

const childEnv = "HALO_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
	case "tty", "tty+filter":
		os.Exit(ttyChild(os.Getenv(childEnv) == "tty+filter"))
	default:
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child installs the filter on its main thread, then reports what each probe got on that
// thread, a line each.
func child() int {
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fmt.Println("prctl:", err)
		return 1
	}
	if err := Install(Rules{DenyNetwork: true}); err != nil {
		fmt.Println("install:", err)
		return 1
	}
	socket := func(domain, typ, proto int) string {
		fd, err := unix.Socket(domain, typ, proto)
		if err != nil {
			return err.Error()
		}
		unix.Close(fd)
		return "ok"
	}
	fmt.Println("inet-udp:", socket(unix.AF_INET, unix.SOCK_DGRAM, 0))
	fmt.Println("inet6-tcp:", socket(unix.AF_INET6, unix.SOCK_STREAM, 0))
	fmt.Println("ping:", socket(unix.AF_INET, unix.SOCK_DGRAM, unix.IPPROTO_ICMP))
	fmt.Println("raw:", socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP))
	fmt.Println("unix:", socket(unix.AF_UNIX, unix.SOCK_STREAM, 0))
	var params [120]byte
	_, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	fmt.Println("io_uring:", errno.Error())
	_, err := unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0)
	fmt.Println("keyctl:", err)
	// A program the thread starts has the filter too.
	out, err := exec.Command("bash", "-c", "exec 3<>/dev/udp/127.0.0.1/9 && echo opened").CombinedOutput()
	fmt.Printf("bash-udp: %v %s\n", err != nil, strings.TrimSpace(string(out)))
	return 0
}

func TestDenyNetwork(t *testing.T) {
	needFilter(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, b)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	denied := unix.EACCES.Error()
	for k, want := range map[string]string{
		"inet-udp":  denied,
		"inet6-tcp": denied,
		"ping":      denied,
		"raw":       denied,
		"unix":      "ok",
		"io_uring":  unix.ENOSYS.Error(),
		"keyctl":    unix.ENOSYS.Error(),
	} {
		if got[k] != want {
			t.Errorf("%s: got %q, want %q\n%s", k, got[k], want, b)
		}
	}
	if !strings.HasPrefix(got["bash-udp"], "true") || strings.Contains(got["bash-udp"], "opened") {
		t.Errorf("bash opened a UDP socket under the filter: %q", got["bash-udp"])
	}
	// Without the filter, the same calls work: the test proves the filter, not the machine.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatalf("control: socket(AF_INET) fails without the filter: %v", err)
	}
	unix.Close(fd)
}

func needFilter(t *testing.T) {
	t.Helper()
	if _, err := Program(runtime.GOARCH, Rules{}); errors.Is(err, ErrUnsupported) {
		t.Skipf("skipped: no filter for %s", runtime.GOARCH)
	}
	if !Available() {
		t.Skip("skipped: this kernel cannot install seccomp filters (Linux 4.14 with CONFIG_SECCOMP_FILTER is needed)")
	}
}

// ttyChild makes a new pseudo-terminal its controlling terminal, as a shell's is, installs
// the filter when asked, and tries what an attacker would: queue a command into the
// terminal's input (TIOCSTI) and paste into it (TIOCLINUX). It prints each result.
func ttyChild(filter bool) int {
	// Closing the terminal it leads would hang the session up, this process included.
	signal.Ignore(unix.SIGHUP)
	runtime.LockOSThread()
	if _, err := unix.Setsid(); err != nil {
		fmt.Println("setsid:", err)
		return 1
	}
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		fmt.Println("ptmx:", err)
		return 1
	}
	defer master.Close()
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		fmt.Println("unlockpt:", err)
		return 1
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		fmt.Println("ptsname:", err)
		return 1
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		fmt.Println("slave:", err)
		return 1
	}
	defer slave.Close()
	if err := unix.IoctlSetInt(int(slave.Fd()), unix.TIOCSCTTY, 0); err != nil {
		fmt.Println("TIOCSCTTY:", err)
		return 1
	}
	if filter {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fmt.Println("prctl:", err)
			return 1
		}
		if err := Install(Rules{}); err != nil {
			fmt.Println("install:", err)
			return 1
		}
	}
	c := byte('x')
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, slave.Fd(), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	fmt.Println("TIOCSTI:", errnoText(errno))
	// TIOCLINUX subcode 2 (set selection) on a pseudo-terminal: the kernel answers EINVAL or
	// ENOTTY without the filter (it is a console's), EPERM with it.
	sub := [8]byte{2}
	_, _, errno = unix.Syscall(unix.SYS_IOCTL, slave.Fd(), unix.TIOCLINUX, uintptr(unsafe.Pointer(&sub[0])))
	fmt.Println("TIOCLINUX:", errnoText(errno))
	var ws unix.Winsize
	_, _, errno = unix.Syscall(unix.SYS_IOCTL, slave.Fd(), unix.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	fmt.Println("TIOCGWINSZ:", errnoText(errno))
	return 0
}

func errnoText(e unix.Errno) string {
	if e == 0 {
		return "ok"
	}
	return e.Error()
}

// TestTerminalInjectionRefused proves the filter refuses TIOCSTI and TIOCLINUX even on the
// caller's own controlling terminal, where the kernel itself allows TIOCSTI (when
// dev.tty.legacy_tiocsti is 1, or for root), and leaves other terminal ioctls alone.
func TestTerminalInjectionRefused(t *testing.T) {
	needFilter(t)
	results := func(mode string) map[string]string {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+mode)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child %s: %v\n%s", mode, err, b)
		}
		got := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, _ := strings.Cut(line, ": ")
			got[k] = v
		}
		return got
	}
	control := results("tty")
	legacy, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti")
	if os.Geteuid() == 0 || strings.TrimSpace(string(legacy)) == "1" {
		if control["TIOCSTI"] != "ok" {
			t.Fatalf("control: TIOCSTI on the own terminal fails without the filter: %v", control)
		}
	} else {
		t.Logf("control: this kernel refuses TIOCSTI by itself (dev.tty.legacy_tiocsti=0): %v", control)
	}
	got := results("tty+filter")
	perm := unix.EPERM.Error()
	if got["TIOCSTI"] != perm || got["TIOCLINUX"] != perm {
		t.Errorf("under the filter: TIOCSTI %q, TIOCLINUX %q; want %q for both", got["TIOCSTI"], got["TIOCLINUX"], perm)
	}
	if got["TIOCGWINSZ"] != "ok" {
		t.Errorf("under the filter, TIOCGWINSZ: %q, want ok", got["TIOCGWINSZ"])
	}
}
