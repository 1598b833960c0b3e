// Package sandbox owns the file and network sandbox the host puts around plugins. The host
// confines one OS thread of its own to a Policy (ConfineThread: Linux Landlock,
// no_new_privs, and nothing a started program could inherit capabilities from) and starts
// the plugin from that thread: the plugin is confined from its first instruction and can
// never lift the restrictions. host/tool/plugin does this for every Command with a Sandbox.
//
// The halo binary also runs any program inside a policy as a small wrapper (`halo
// __sandbox [flags] -- program args`: Wrap builds the command line, Main runs it), which
// confines its own thread and executes the program. Plugins used to start that way, which
// started the halo binary twice; it stays for trying a policy by hand, and the benchmarks
// compare the direct start against it.
//
// Detect says, at run time, what the running kernel can enforce, so the host can say
// plainly when it cannot, rather than silently doing nothing. On systems other than Linux
// there is no file sandbox, and Detect says so.
//
// Beyond the granted paths, every Landlock domain also keeps a plugin from ptrace-ing or
// reading the /proc entries (environ, mem) of processes outside it, the host included; where
// the kernel has scoping (ABI 6) it cannot signal them or reach their abstract Unix sockets.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// A Policy is what a sandboxed plugin may reach.
type Policy struct {
	// ReadOnly lists folders and files the plugin may read and execute.
	ReadOnly []string
	// ReadWrite lists folders and files the plugin may read, execute, create, change and
	// remove.
	ReadWrite []string
	// ListOnly lists folders whose entries the plugin may list, and nothing more: no reading,
	// creating or removing there unless another grant allows it (Protect makes them).
	ListOnly []string
	// Network allows TCP and UDP. When false, the kernel refuses the plugin's TCP connect and
	// bind (Landlock ABI 4) and UDP (ABI 10); Unix sockets are not affected.
	Network bool
}

// SocketDirEnv is the variable go-plugin uses to tell a plugin where to create its socket.
// The wrapper grants that folder read-write, so the plugin can listen there.
const SocketDirEnv = "PLUGIN_UNIX_SOCKET_DIR"

// Command is the hidden subcommand of halo that runs the wrapper.
const Command = "__sandbox"

// Wrap returns the command line that runs argv (program first) inside policy p, through the
// halo executable at halo.
func Wrap(halo string, p Policy, argv []string) []string {
	out := append([]string{halo, Command}, p.Args()...)
	out = append(out, "--")
	return append(out, argv...)
}

// WrapCommand returns a host/tool/plugin Command.Wrap function that starts the command
// through the wrapper at halo, inside p: how plugins were started before the host confined
// a thread of its own for them (Command.Sandbox, ConfineThread). The benchmarks compare
// against it.
func WrapCommand(halo string, p Policy) func(*exec.Cmd) error {
	return func(c *exec.Cmd) error {
		if halo == "" {
			return errors.New("the sandbox wrapper needs the path of the halo executable")
		}
		c.Args = Wrap(halo, p, c.Args)
		c.Path = halo
		return nil
	}
}

// Args writes p as the wrapper's flags: --ro PATH, --rw PATH, --ls PATH, --net.
func (p Policy) Args() []string {
	var out []string
	for _, d := range p.ReadOnly {
		out = append(out, "--ro", d)
	}
	for _, d := range p.ReadWrite {
		out = append(out, "--rw", d)
	}
	for _, d := range p.ListOnly {
		out = append(out, "--ls", d)
	}
	if p.Network {
		out = append(out, "--net")
	}
	return out
}

// ErrUsage marks a malformed wrapper command line.
var ErrUsage = errors.New("usage: halo __sandbox [--ro PATH]... [--rw PATH]... [--ls PATH]... [--net] -- PROGRAM [ARG]...")

// ParseArgs reads the wrapper's arguments (what follows `__sandbox`) back into a policy and
// the command to run. Paths must be absolute: the wrapper never guesses a folder.
func ParseArgs(args []string) (Policy, []string, error) {
	for i, a := range args {
		if a != "--" {
			continue
		}
		p, err := ParseFlags(args[:i])
		if err != nil {
			return p, nil, err
		}
		argv := args[i+1:]
		if len(argv) == 0 {
			return p, nil, fmt.Errorf("no program after --: %w", ErrUsage)
		}
		return p, argv, nil
	}
	if _, err := ParseFlags(args); err != nil {
		return Policy{}, nil, err
	}
	return Policy{}, nil, fmt.Errorf("missing --: %w", ErrUsage)
}

// ParseFlags reads flags written by Policy.Args.
func ParseFlags(args []string) (Policy, error) {
	var p Policy
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "--net":
			p.Network = true
		case "--ro", "--rw", "--ls":
			if i+1 >= len(args) {
				return p, fmt.Errorf("%s needs a path: %w", a, ErrUsage)
			}
			i++
			path := args[i]
			if !filepath.IsAbs(path) {
				return p, fmt.Errorf("%s %q: the path must be absolute", a, path)
			}
			switch a {
			case "--ro":
				p.ReadOnly = append(p.ReadOnly, filepath.Clean(path))
			case "--rw":
				p.ReadWrite = append(p.ReadWrite, filepath.Clean(path))
			default:
				p.ListOnly = append(p.ListOnly, filepath.Clean(path))
			}
		default:
			return p, fmt.Errorf("unknown argument %q: %w", a, ErrUsage)
		}
	}
	return p, nil
}

// SystemReadOnly are the folders a program needs to load and run at all (the dynamic loader,
// shared libraries, locale and time-zone data) and nothing a user keeps secrets in. Paths
// that do not exist are skipped.
var SystemReadOnly = []string{
	"/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/usr/share/zoneinfo",
}

// ShellReadOnly adds what a shell and the usual command-line tools read: programs, /sys, and
// the DNS configuration under /run. /etc is granted through EtcReadOnly, /proc through
// ProcReadOnly, and /dev only through Devices: a host running as root would otherwise hand
// its plugins root-owned secrets (/etc/shadow) and raw disks (/dev/sda), which file
// ownership alone still allows.
var ShellReadOnly = []string{
	"/bin", "/sbin", "/usr", "/opt", "/sys", "/nix", "/snap",
	"/run/systemd/resolve", "/run/current-system",
}

// ProcSecrets are the entries of /proc that ProcReadOnly leaves out besides every process's:
// the kernel keyrings' listings, the kernel log and memory, and the switches that act on the
// system.
var ProcSecrets = []string{
	"keys", "key-users", "kmsg", "kcore", "kallsyms", "kpagecgroup", "kpagecount", "kpageflags",
	"sysrq-trigger", "timer_list", "vmallocinfo", "slabinfo", "pagetypeinfo",
}

// ProcReadOnly lists what a shell may read of proc (normally "/proc"): its system-wide
// entries (cpuinfo, meminfo, loadavg, sys, ...), one by one, and not /proc itself. Landlock
// grants a folder with everything below it, and every process's /proc/<pid> is below /proc:
// the host's command line (cmdline, with the values of --input), status, and what
// /proc/net/unix says of other plugins' sockets. So a process's entries are left out, its
// own included (a command cannot read /proc/self/status), as are the symbolic links into
// them (self, thread-self, net, mounts) and ProcSecrets. Process substitution (/dev/fd/N, a
// pipe) still works: a pipe is not a file Landlock guards.
func ProcReadOnly(proc string) []string {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if name == "" || (name[0] >= '0' && name[0] <= '9') || e.Type()&os.ModeSymlink != 0 || slices.Contains(ProcSecrets, name) {
			continue
		}
		out = append(out, filepath.Join(proc, name))
	}
	return out
}

// EtcSecrets are the files below /etc that EtcReadOnly leaves out: password hashes, sudo
// rules, host keys, private TLS keys.
var EtcSecrets = []string{
	"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "security/opasswd",
	"ssh/ssh_host_rsa_key", "ssh/ssh_host_dsa_key", "ssh/ssh_host_ecdsa_key", "ssh/ssh_host_ed25519_key",
	"ssl/private", "pki/tls/private", "wireguard", "NetworkManager/system-connections",
}

// EtcReadOnly lists what a shell may read of etc (normally "/etc"): every entry except
// EtcSecrets, descending only into the folders that hold one.
func EtcReadOnly(etc string) []string {
	return grantExcept(etc, EtcSecrets)
}

func grantExcept(dir string, deny []string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		var below []string
		denied := false
		for _, d := range deny {
			if d == name {
				denied = true
			} else if rest, ok := strings.CutPrefix(d, name+"/"); ok {
				below = append(below, rest)
			}
		}
		switch {
		case denied:
		case len(below) > 0 && e.IsDir():
			out = append(out, grantExcept(filepath.Join(dir, name), below)...)
		default:
			out = append(out, filepath.Join(dir, name))
		}
	}
	return out
}

// Devices are the device files every program may read and write. /dev/tty is not one: a
// plugin starts in a session of its own, without a controlling terminal, and must not reach
// the user's (see package seccomp for TIOCSTI).
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// A Status says what the running kernel can enforce.
type Status struct {
	// OS is the operating system (runtime.GOOS).
	OS string `json:"os"`
	// ABI is the Landlock ABI version, 0 when Landlock is not available.
	ABI int `json:"abi"`
	// Files: access to files is limited to the granted paths.
	Files bool `json:"files"`
	// TCP, UDP: Landlock keeps a plugin without network from connecting or binding.
	TCP bool `json:"tcp"`
	UDP bool `json:"udp"`
	// Sockets: the kernel can install the seccomp filter (package seccomp), which keeps every
	// plugin from injecting terminal input and from the kernel keyrings, and a plugin without
	// network from creating any socket but a Unix socket (TCP, UDP, raw, ICMP, packet),
	// whatever Landlock can do.
	Sockets bool `json:"sockets"`
	// Scoped: a plugin cannot signal, or reach the abstract Unix sockets of, processes
	// outside its sandbox.
	Scoped bool `json:"scoped"`
	// Reason says why nothing is enforced, when Files is false.
	Reason string `json:"reason,omitempty"`
}

// Enforced reports whether the file sandbox works on this system.
func (s Status) Enforced() bool { return s.Files }

// String is the one line `halo tools` prints and the warning the host logs.
func (s Status) String() string {
	if !s.Files {
		return "sandbox: NOT ENFORCED: " + s.Reason + "; plugins run with a clean environment but can read and write whatever your user can"
	}
	parts := []string{"files"}
	if s.TCP && !s.Sockets {
		net := "TCP"
		if s.UDP {
			net = "TCP and UDP"
		}
		parts = append(parts, net+" for plugins without network")
	}
	if s.Scoped {
		parts = append(parts, "signals", "abstract sockets")
	}
	parts = append(parts, "other processes' /proc entries")
	missing := []string{}
	switch {
	case s.Sockets:
	case !s.TCP:
		missing = append(missing, "network")
	case !s.UDP:
		missing = append(missing, "UDP")
	}
	if !s.Scoped {
		missing = append(missing, "signals")
	}
	line := fmt.Sprintf("sandbox: Landlock ABI %d confines %s", s.ABI, strings.Join(parts, ", "))
	if s.Sockets {
		line += "; seccomp denies plugins terminal injection, the kernel keyrings and, without network, every socket but Unix sockets"
	}
	if len(missing) > 0 {
		line += " (this kernel cannot limit " + strings.Join(missing, ", ") + ")"
	}
	return line
}

// withDefaults returns the policy with what every sandboxed program needs added: the
// program itself, the system libraries, devices, and the plugin socket folder.
func (p Policy) withDefaults(program string, getenv func(string) string) Policy {
	out := Policy{Network: p.Network, ListOnly: p.ListOnly}
	out.ReadOnly = append(append(append([]string{}, p.ReadOnly...), SystemReadOnly...), program)
	out.ReadWrite = append(append([]string{}, p.ReadWrite...), Devices...)
	if dir := getenv(SocketDirEnv); dir != "" && filepath.IsAbs(dir) {
		out.ReadWrite = append(out.ReadWrite, dir)
	}
	out.ReadOnly = slices.Compact(out.ReadOnly)
	return out
}

// Main runs the wrapper: args are what follows `halo __sandbox`, env is the whole
// environment the plugin gets (the host already cleaned it). It returns only on failure,
// with the exit status to use.
func Main(args, env []string, stderr io.Writer) int {
	p, argv, err := ParseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "halo sandbox: %v\n", err)
		return 2
	}
	err = Exec(p, argv, env, envLookup(env), stderr)
	fmt.Fprintf(stderr, "halo sandbox: %v\n", err)
	return 1
}

// envLookup reads a variable from an environment list ("K=V" strings); the last one wins,
// as in exec.
func envLookup(env []string) func(string) string {
	return func(k string) string {
		v := ""
		for _, kv := range env {
			if key, val, ok := strings.Cut(kv, "="); ok && key == k {
				v = val
			}
		}
		return v
	}
}
