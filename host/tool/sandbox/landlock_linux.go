package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"halolang.dev/halo/host/tool/sandbox/seccomp"
)

// newest is the newest Landlock ABI this build knows; older kernels get the best subset.
var newest = landlock.V11

// Detect asks the kernel which Landlock ABI it offers.
func Detect() Status {
	s := Status{OS: runtime.GOOS, Sockets: seccomp.Available()}
	v, err := llsys.LandlockGetABIVersion()
	switch {
	case errors.Is(err, syscall.ENOSYS):
		s.Reason = "this Linux kernel was built without Landlock (5.13 or newer with CONFIG_SECURITY_LANDLOCK is needed)"
		return s
	case errors.Is(err, syscall.EOPNOTSUPP):
		s.Reason = "Landlock is built into this kernel but turned off (add landlock to the lsm= boot parameter)"
		return s
	case err != nil:
		s.Reason = fmt.Sprintf("Landlock is not available: %v", err)
		return s
	}
	s.ABI = v
	s.Files = v >= 1
	s.TCP = v >= 4
	s.Scoped = v >= 6
	s.UDP = v >= 10
	if !s.Files {
		s.Reason = "Landlock reports no usable ABI"
	}
	return s
}

// Exec applies p to this process and replaces it with argv. It returns only on failure.
// When the kernel has no Landlock it warns on stderr and runs argv unconfined, since the
// host has already said so (Detect); a kernel that has Landlock but refuses the ruleset is
// an error, never a silent fallback. Capabilities are dropped on every system that has
// them, with or without Landlock.
func Exec(p Policy, argv, env []string, getenv func(string) string, stderr io.Writer) error {
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	// Restrict only this thread, then exec from it: the new program starts with this
	// thread's credentials and restrictions. The thread is never unlocked, so no other
	// goroutine ever runs on it.
	runtime.LockOSThread()
	if err := confineThread(p, prog, getenv, stderr); err != nil {
		return err
	}
	return syscall.Exec(prog, argv, env)
}

// ConfineThread applies p to the processes the calling OS thread starts from now on: it
// restricts the thread with Landlock and no_new_privs, and empties the capability sets a
// program it starts inherits (DropPrivileges). Such a process starts inside the sandbox
// and can never leave it. It is how the host starts plugins (host/tool/plugin's
// Command.Sandbox): the plugin is confined from its first instruction, and the halo binary
// is not started a second time as a wrapper. env is the plugin's environment, where its
// socket folder is named.
//
// The caller must have locked the goroutine to its thread (runtime.LockOSThread) and must
// never unlock it: the thread keeps the restrictions until it exits, so nothing else may
// run on it. The Go runtime starts no thread from a locked one (it asks its template
// thread), so the rest of the process stays unconfined.
//
// When the kernel has no Landlock, the thread only sets no_new_privs and drops what
// programs would inherit: the host says so itself (Detect), as `halo tools` does.
func ConfineThread(p Policy, program string, env []string) error {
	if err := DropPrivileges(); err != nil {
		return err
	}
	if err := landlockThread(p, program, envLookup(env), io.Discard); err != nil {
		return err
	}
	return filter(p)
}

// RestrictThread applies to the processes the calling OS thread starts from now on what every
// process the host starts gets, sandboxed or not: DropPrivileges, and the seccomp filter
// every plugin has (no TIOCSTI or TIOCLINUX, no keyrings, no io_uring; see package
// seccomp). The host starts plugins without a Policy and MCP stdio servers from such a
// thread. The same rules for the caller as ConfineThread apply: a locked thread, never
// unlocked.
func RestrictThread() error {
	if err := DropPrivileges(); err != nil {
		return err
	}
	return filter(Policy{Network: true})
}

// DropPrivileges sets no_new_privs on the calling OS thread and empties the capability
// sets the programs it starts derive theirs from (the bounding, ambient and inheritable
// sets), with the same rules for the caller as ConfineThread. A process started from the
// thread then holds no capability after execve, even when the host runs as root, and
// cannot gain one (set-user-ID and file capabilities are ignored). The thread keeps its own
// effective capabilities: creating a PID namespace for the process takes CAP_SYS_ADMIN.
func DropPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := dropInherited(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// confineThread sets no_new_privs, drops every capability and applies p with Landlock, on
// the calling thread, which then executes the program: what the wrapper does.
func confineThread(p Policy, program string, getenv func(string) string, stderr io.Writer) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if err := landlockThread(p, program, getenv, stderr); err != nil {
		return err
	}
	return filter(p)
}

// filter installs the seccomp filter of p on the calling thread (no_new_privs is already
// set): the rules every plugin gets (no terminal injection, no keyrings, no io_uring), and,
// for a plugin without network, no socket but Unix sockets, which Landlock alone cannot
// refuse (it limits TCP and, from ABI 10, UDP, never raw, ICMP or packet sockets). A kernel
// without seccomp filters is reported by Detect (Status.Sockets), like one without Landlock.
func filter(p Policy) error {
	if !seccomp.Available() {
		return nil
	}
	if err := seccomp.Install(seccomp.Rules{DenyNetwork: !p.Network}); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	return nil
}

// landlockThread applies p with Landlock to the calling thread, or warns on stderr when the
// kernel has no Landlock.
func landlockThread(p Policy, program string, getenv func(string) string, stderr io.Writer) error {
	status := Detect()
	if !status.Files {
		fmt.Fprintf(stderr, "halo sandbox: warning: %s\n", status.String())
		return nil
	}
	cfg, rules, pinned, err := ruleset(p, program, getenv)
	if err != nil {
		return err
	}
	defer pinned.close()
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("sandbox: build the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return nil
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	return nil
}

// ruleset is the Landlock configuration and rules of p for program, with the wrapper's own
// needs added (see Policy.withDefaults), and the descriptors the rules name (see pinGrants),
// to close once the ruleset is made.
func ruleset(p Policy, program string, getenv func(string) string) (landlock.Config, []landlock.Rule, *pins, error) {
	full := p.withDefaults(program, getenv)
	handled := []any{newest.HandledAccessFS, newest.Scoped}
	if !p.Network {
		handled = append(handled, newest.HandledAccessNet)
	}
	cfg, err := landlock.NewConfig(handled...)
	if err != nil {
		return landlock.Config{}, nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	pinned, err := pinGrants(full, program, getenv(SocketDirEnv))
	if err != nil {
		return landlock.Config{}, nil, nil, err
	}
	rules := append(pathRules(pinned, full.ReadOnly, false), pathRules(pinned, full.ReadWrite, true)...)
	if dirs := existing(pinned, full.ListOnly); len(dirs) > 0 {
		rules = append(rules, landlock.PathAccess(landlock.AccessFSSet(llsys.AccessFSReadDir), dirs...))
	}
	return cfg.BestEffort(), rules, pinned, nil
}

// pins are the grants of a policy opened without following a symbolic link anywhere on
// their paths, so that the rules name what was opened (/proc/self/fd/N), not a path.
//
// The host grants folders with their links resolved (docs/plugins-sandbox.md): a folder in
// the project that leads elsewhere is refused, or granted where it leads. Landlock opens
// each path it is given, following links, so a plugin that may write the project could
// replace a folder with a link between the host resolving it and the sandbox granting it,
// and have the link's target granted. Opened with RESOLVE_NO_SYMLINKS (openat2), such a
// folder is refused instead.
//
// The system paths the sandbox grants by itself (SystemReadOnly, ShellReadOnly, Devices,
// the entries of /etc and /proc, the program, the socket folder) are not resolved, and some
// are links on most systems (/bin, /etc/resolv.conf): those are granted by path, as before.
type pins struct {
	// names maps a pinned path to the name its rule uses: /proc/self/fd/N, or "" when the
	// path does not exist.
	names map[string]string
	fds   []int
}

// pinGrants opens the grants of p that are not the sandbox's own system paths. Without
// /proc, or without openat2 (Linux before 5.6, which has no Landlock either), paths are
// granted as they are.
func pinGrants(p Policy, program, socketDir string) (*pins, error) {
	ps := &pins{names: map[string]string{}}
	if st, err := os.Stat("/proc/self/fd"); err != nil || !st.IsDir() {
		return ps, nil
	}
	for _, list := range [][]string{p.ReadOnly, p.ReadWrite, p.ListOnly} {
		for _, path := range list {
			if _, done := ps.names[path]; done || path == program || path == socketDir || systemPath(path) {
				continue
			}
			fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
				Flags:   unix.O_PATH | unix.O_CLOEXEC,
				Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
			switch {
			case err == nil:
				ps.fds = append(ps.fds, fd)
				ps.names[path] = "/proc/self/fd/" + strconv.Itoa(fd)
			case errors.Is(err, unix.ENOENT):
				ps.names[path] = ""
			case errors.Is(err, unix.ENOSYS):
				ps.close()
				return &pins{names: map[string]string{}}, nil
			case errors.Is(err, unix.ELOOP):
				ps.close()
				return nil, fmt.Errorf("sandbox: %s has a symbolic link on its path: folders are granted with their links resolved, so one was made there since: not granted", path)
			default:
				ps.close()
				return nil, fmt.Errorf("sandbox: open %s: %w", path, err)
			}
		}
	}
	return ps, nil
}

// systemPath reports whether path is one the sandbox grants by itself, unresolved.
func systemPath(path string) bool {
	if slices.Contains(SystemReadOnly, path) || slices.Contains(ShellReadOnly, path) || slices.Contains(Devices, path) {
		return true
	}
	return within(path, "/etc") || within(path, "/proc")
}

// name is what the rule for path names, and false when it is a pinned path that does not
// exist.
func (ps *pins) name(path string) (string, bool) {
	if n, ok := ps.names[path]; ok {
		return n, n != ""
	}
	return path, true
}

func (ps *pins) close() {
	if ps == nil {
		return
	}
	for _, fd := range ps.fds {
		unix.Close(fd)
	}
	ps.fds = nil
}

// existing returns the paths that exist, as their rules name them.
func existing(ps *pins, paths []string) []string {
	var out []string
	for _, p := range paths {
		n, ok := ps.name(p)
		if !ok {
			continue
		}
		if _, err := os.Stat(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// pathRules grants each existing path: folders get folder rights, files file rights.
// Missing paths are skipped (a policy may list /lib64 on a system without it).
func pathRules(ps *pins, paths []string, write bool) []landlock.Rule {
	var dirs, files []string
	for _, path := range paths {
		p, ok := ps.name(path)
		if !ok {
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st.IsDir() {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	var rules []landlock.Rule
	if write {
		if len(dirs) > 0 {
			rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
		}
		if len(files) > 0 {
			// Device files (/dev/null) need ioctl: a shell asks whether its
			// streams are terminals.
			rules = append(rules, landlock.RWFiles(files...).WithIoctlDev())
		}
		return rules
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.RODirs(dirs...))
	}
	if len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...))
	}
	return rules
}
