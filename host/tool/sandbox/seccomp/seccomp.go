// Package seccomp builds and installs the seccomp filter the host puts on every plugin (and
// every MCP stdio server) it starts, on the thread it starts them from.
//
// Every filter refuses ioctl(2) TIOCSTI and TIOCLINUX, whatever descriptor they name: TIOCSTI
// queues bytes into a terminal's input, which the user's shell reads as typed commands once
// halo exits, and TIOCLINUX can paste a console's selection the same way. It refuses the
// kernel keyring calls, keyctl(2), add_key(2) and request_key(2), as a kernel without keyrings
// would (ENOSYS): a plugin running as the user (or as root without capabilities) could
// otherwise read the keys in that user's keyring. It also refuses io_uring_setup(2) (io_uring runs system calls the filter never sees) and, in 64-bit
// processes, the system calls of the x32 ABI and of any ABI the table below does not know,
// whose numbers differ from the native ones; the 32-bit compat ABI (i386, ARM) gets the same
// rules under its own numbers.
//
// A plugin without network also gets socket(2) refused for every address family but AF_UNIX
// (plugins serve the host over a Unix socket), and i386's socketcall(2). Landlock limits TCP
// connect and bind (ABI 4) and, from ABI 10, UDP; it never limits raw sockets, ICMP, packet
// sockets or Multipath TCP, which then cannot even be created, on any kernel with seccomp
// (Linux 3.5).
package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/net/bpf"
)

// ErrUnsupported says this operating system or CPU architecture has no filter here.
var ErrUnsupported = errors.New("seccomp: no filter for this system")

// Rules say what a filter refuses beyond what every filter refuses.
type Rules struct {
	// DenyNetwork refuses every socket but Unix sockets.
	DenyNetwork bool
}

// Linux values the filter is built from. They are fixed by the kernel's ABI, so they are
// written here rather than taken from a package that exists only when building for Linux,
// which keeps the program buildable and testable everywhere.
const (
	retAllow = 0x7fff0000 // SECCOMP_RET_ALLOW
	retErrno = 0x00050000 // SECCOMP_RET_ERRNO, with the errno in the low 16 bits

	errEPERM  = 1
	errEACCES = 13
	errENOSYS = 38

	afUnix = 1

	// ioctl requests refused everywhere (the same numbers on every architecture here).
	tiocsti   = 0x5412
	tioclinux = 0x541c

	// Offsets in struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6].
	// The filter reads the low 32 bits of an argument, which on a little-endian CPU come
	// first. For ioctl that is the whole request: the kernel takes it as an unsigned int, so
	// high bits set to dodge the filter are dropped by the kernel too.
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24

	x32SyscallBit = 0x40000000 // __X32_SYSCALL_BIT
)

// An abi is one system call ABI a process on an architecture may use.
type abi struct {
	arch uint32 // AUDIT_ARCH_*
	// The syscall numbers; socketcall is i386's multiplexer, 0 where the ABI has none.
	socket, socketcall, ioUringSetup, ioctl uint32
	// keys are add_key, request_key and keyctl.
	keys [3]uint32
	// x32 is set on amd64, where syscall numbers with __X32_SYSCALL_BIT belong to the x32 ABI.
	x32 bool
}

// abis lists, per GOARCH, the native ABI first and then the compat one.
var abis = map[string][]abi{
	"amd64": {
		{arch: 0xc000003e, socket: 41, ioUringSetup: 425, ioctl: 16, keys: [3]uint32{248, 249, 250}, x32: true},        // AUDIT_ARCH_X86_64
		{arch: 0x40000003, socket: 359, socketcall: 102, ioUringSetup: 425, ioctl: 54, keys: [3]uint32{286, 287, 288}}, // AUDIT_ARCH_I386
	},
	"arm64": {
		{arch: 0xc00000b7, socket: 198, ioUringSetup: 425, ioctl: 29, keys: [3]uint32{217, 218, 219}}, // AUDIT_ARCH_AARCH64
		{arch: 0x40000028, socket: 281, ioUringSetup: 425, ioctl: 54, keys: [3]uint32{309, 310, 311}}, // AUDIT_ARCH_ARM
	},
}

// Program returns the filter with rules r for a process on goarch, as classic BPF. For every
// ABI the architecture runs: ioctl TIOCSTI and TIOCLINUX fail with EPERM; add_key,
// request_key, keyctl, io_uring_setup(2) and x32 syscalls fail with ENOSYS, as on a kernel without them; a syscall from an ABI the
// table does not know fails with EPERM. With r.DenyNetwork, socket(2) succeeds only for
// AF_UNIX and fails with EACCES otherwise, and i386's socketcall(2), which hides its
// arguments in memory, fails with EACCES. Everything else is allowed.
func Program(goarch string, r Rules) ([]bpf.RawInstruction, error) {
	table, ok := abis[goarch]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, goarch)
	}
	var a assembler
	a.emit(bpf.LoadAbsolute{Off: offArch, Size: 4})
	for i, x := range table {
		a.jumpIf(x.arch, abiLabel(i), "")
	}
	a.ret(retErrno | errEPERM)
	for i, x := range table {
		a.label(abiLabel(i))
		a.emit(bpf.LoadAbsolute{Off: offNr, Size: 4})
		if x.x32 {
			a.jumpIfAtLeast(x32SyscallBit, "enosys", "")
		}
		a.jumpIf(x.ioUringSetup, "enosys", "")
		for _, nr := range x.keys {
			a.jumpIf(nr, "enosys", "")
		}
		a.jumpIf(x.ioctl, "ioctl", "")
		if r.DenyNetwork {
			if x.socketcall != 0 {
				a.jumpIf(x.socketcall, "eacces", "")
			}
			a.jumpIf(x.socket, "family", "")
		}
		a.jump("allow")
	}
	a.label("ioctl")
	a.emit(bpf.LoadAbsolute{Off: offArg1, Size: 4})
	a.jumpIf(tiocsti, "eperm", "")
	a.jumpIf(tioclinux, "eperm", "allow")
	if r.DenyNetwork {
		a.label("family")
		a.emit(bpf.LoadAbsolute{Off: offArg0, Size: 4})
		a.jumpIf(afUnix, "allow", "eacces")
	}
	a.label("allow")
	a.ret(retAllow)
	a.label("eacces")
	a.ret(retErrno | errEACCES)
	a.label("enosys")
	a.ret(retErrno | errENOSYS)
	a.label("eperm")
	a.ret(retErrno | errEPERM)
	return a.assemble()
}

func abiLabel(i int) string { return fmt.Sprintf("abi%d", i) }

// assembler resolves the forward jumps of a small BPF program by label: classic BPF jumps
// are relative skips, which are easy to get wrong by hand.
type assembler struct {
	ins    []bpf.Instruction
	labels map[string]int
	jumps  []jump
}

// A jump is a jump at ins[at] whose targets are labels ("" is the next one): conditional
// (true, false), or unconditional (always).
type jump struct {
	at          int
	true, false string
	always      string
}

func (a *assembler) emit(in bpf.Instruction) { a.ins = append(a.ins, in) }

func (a *assembler) ret(v uint32) { a.emit(bpf.RetConstant{Val: v}) }

func (a *assembler) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.ins)
}

func (a *assembler) jumpIf(v uint32, t, f string) {
	a.jumps = append(a.jumps, jump{at: len(a.ins), true: t, false: f})
	a.emit(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v})
}

func (a *assembler) jumpIfAtLeast(v uint32, t, f string) {
	a.jumps = append(a.jumps, jump{at: len(a.ins), true: t, false: f})
	a.emit(bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: v})
}

// jump jumps to label t whatever the accumulator holds.
func (a *assembler) jump(t string) {
	a.jumps = append(a.jumps, jump{at: len(a.ins), always: t})
	a.emit(bpf.Jump{})
}

func (a *assembler) assemble() ([]bpf.RawInstruction, error) {
	skip := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := a.labels[label]
		if !ok || to <= from || to-from-1 > 255 {
			return 0, fmt.Errorf("seccomp: bad jump from %d to %q", from, label)
		}
		return uint8(to - from - 1), nil
	}
	for _, j := range a.jumps {
		if j.always != "" {
			to, ok := a.labels[j.always]
			if !ok || to <= j.at {
				return nil, fmt.Errorf("seccomp: bad jump from %d to %q", j.at, j.always)
			}
			a.ins[j.at] = bpf.Jump{Skip: uint32(to - j.at - 1)}
			continue
		}
		in := a.ins[j.at].(bpf.JumpIf)
		var err error
		if in.SkipTrue, err = skip(j.at, j.true); err != nil {
			return nil, err
		}
		if in.SkipFalse, err = skip(j.at, j.false); err != nil {
			return nil, err
		}
		a.ins[j.at] = in
	}
	return bpf.Assemble(a.ins)
}
