package seccomp

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// run executes the filter on a seccomp_data for one syscall. x/net/bpf's VM loads words
// big-endian, so the test lays the fields out that way; the kernel loads them in the CPU's
// order from the same offsets.
func run(t *testing.T, vm *bpf.VM, c call) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[offNr:], c.nr)
	binary.BigEndian.PutUint32(data[offArch:], c.arch)
	binary.BigEndian.PutUint32(data[offArg0:], c.arg0)
	binary.BigEndian.PutUint32(data[offArg1:], c.arg1)
	v, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

type call struct {
	name       string
	arch, nr   uint32
	arg0, arg1 uint32
	// want is what the filter returns without network rules, and with DenyNetwork.
	want, noNet uint32
}

const (
	allow  = retAllow
	eacces = retErrno | errEACCES
	enosys = retErrno | errENOSYS
	eperm  = retErrno | errEPERM

	afInet, afInet6, afNetlink, afPacket = 2, 10, 16, 17
	read                                 = 0
	tcgets                               = 0x5401
	tiocgwinsz                           = 0x5413
)

var cases = map[string][]call{
	"amd64": {
		{"socket(AF_UNIX)", 0xc000003e, 41, afUnix, 0, allow, allow},
		{"socket(AF_INET)", 0xc000003e, 41, afInet, 0, allow, eacces},
		{"socket(AF_INET6)", 0xc000003e, 41, afInet6, 0, allow, eacces},
		{"socket(AF_PACKET)", 0xc000003e, 41, afPacket, 0, allow, eacces},
		{"socket(AF_NETLINK)", 0xc000003e, 41, afNetlink, 0, allow, eacces},
		{"read", 0xc000003e, read, 0, 0, allow, allow},
		{"connect", 0xc000003e, 42, 3, 0, allow, allow},
		{"io_uring_setup", 0xc000003e, 425, 8, 0, enosys, enosys},
		{"x32 socket", 0xc000003e, x32SyscallBit | 41, afInet, 0, enosys, enosys},
		{"x32 ioctl(TIOCSTI)", 0xc000003e, x32SyscallBit | 514, 0, tiocsti, enosys, enosys},
		{"ioctl(TIOCSTI)", 0xc000003e, 16, 0, tiocsti, eperm, eperm},
		{"add_key", 0xc000003e, 248, 0, 0, enosys, enosys},
		{"request_key", 0xc000003e, 249, 0, 0, enosys, enosys},
		{"keyctl", 0xc000003e, 250, 11, 0, enosys, enosys},
		{"i386 keyctl", 0x40000003, 288, 11, 0, enosys, enosys},
		{"i386 add_key", 0x40000003, 286, 0, 0, enosys, enosys},
		{"ioctl(TIOCLINUX)", 0xc000003e, 16, 5, tioclinux, eperm, eperm},
		{"ioctl(TCGETS)", 0xc000003e, 16, 1, tcgets, allow, allow},
		{"ioctl(TIOCGWINSZ)", 0xc000003e, 16, 1, tiocgwinsz, allow, allow},
		{"i386 socket(AF_INET)", 0x40000003, 359, afInet, 0, allow, eacces},
		{"i386 socket(AF_UNIX)", 0x40000003, 359, afUnix, 0, allow, allow},
		{"i386 socketcall", 0x40000003, 102, 1, 0, allow, eacces},
		{"i386 io_uring_setup", 0x40000003, 425, 8, 0, enosys, enosys},
		{"i386 ioctl(TIOCSTI)", 0x40000003, 54, 0, tiocsti, eperm, eperm},
		{"i386 ioctl(TCGETS)", 0x40000003, 54, 0, tcgets, allow, allow},
		{"i386 read", 0x40000003, 3, 0, 0, allow, allow},
		{"i386 call numbered as amd64's ioctl", 0x40000003, 16, 0, tiocsti, allow, allow},
		{"unknown ABI", 0xc00000b7, 198, afUnix, 0, eperm, eperm},
	},
	"arm64": {
		{"socket(AF_UNIX)", 0xc00000b7, 198, afUnix, 0, allow, allow},
		{"socket(AF_INET)", 0xc00000b7, 198, afInet, 0, allow, eacces},
		{"socket(AF_INET6)", 0xc00000b7, 198, afInet6, 0, allow, eacces},
		{"read", 0xc00000b7, 63, 0, 0, allow, allow},
		{"io_uring_setup", 0xc00000b7, 425, 8, 0, enosys, enosys},
		{"ioctl(TIOCSTI)", 0xc00000b7, 29, 0, tiocsti, eperm, eperm},
		{"ioctl(TIOCLINUX)", 0xc00000b7, 29, 0, tioclinux, eperm, eperm},
		{"add_key", 0xc00000b7, 217, 0, 0, enosys, enosys},
		{"request_key", 0xc00000b7, 218, 0, 0, enosys, enosys},
		{"keyctl", 0xc00000b7, 219, 11, 0, enosys, enosys},
		{"arm keyctl", 0x40000028, 311, 11, 0, enosys, enosys},
		{"ioctl(TCGETS)", 0xc00000b7, 29, 0, tcgets, allow, allow},
		{"socket numbered as on amd64 is another syscall", 0xc00000b7, 41, afInet, 0, allow, allow},
		{"arm socket(AF_INET)", 0x40000028, 281, afInet, 0, allow, eacces},
		{"arm socket(AF_UNIX)", 0x40000028, 281, afUnix, 0, allow, allow},
		{"arm ioctl(TIOCSTI)", 0x40000028, 54, 0, tiocsti, eperm, eperm},
		{"unknown ABI", 0xc000003e, 41, afInet, 0, eperm, eperm},
	},
}

func TestProgram(t *testing.T) {
	for goarch, calls := range cases {
		for _, r := range []Rules{{}, {DenyNetwork: true}} {
			prog, err := Program(goarch, r)
			if err != nil {
				t.Fatal(err)
			}
			ins := make([]bpf.Instruction, len(prog))
			for i, raw := range prog {
				ins[i] = raw.Disassemble()
			}
			vm, err := bpf.NewVM(ins)
			if err != nil {
				t.Fatalf("%s %+v: %v", goarch, r, err)
			}
			for _, c := range calls {
				want := c.want
				if r.DenyNetwork {
					want = c.noNet
				}
				if got := run(t, vm, c); got != want {
					t.Errorf("%s %+v %s: filter returns %#x, want %#x", goarch, r, c.name, got, want)
				}
			}
		}
	}
}

func TestProgramUnsupported(t *testing.T) {
	if _, err := Program("riscv64", Rules{}); err == nil {
		t.Fatal("a filter for an architecture without a table")
	}
}
