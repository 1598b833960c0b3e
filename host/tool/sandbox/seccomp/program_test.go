package seccomp

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
)

// run executes the filter on a seccomp_data for one syscall. x/net/bpf's VM loads words
// big-endian, so the test lays the fields out that way; the kernel loads them in the CPU's
// order from the same offsets.
func run(t *testing.T, vm *bpf.VM, arch, nr uint32, arg0 uint32) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[offNr:], nr)
	binary.BigEndian.PutUint32(data[offArch:], arch)
	binary.BigEndian.PutUint32(data[offArg0:], arg0)
	v, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

func TestProgram(t *testing.T) {
	const (
		allow  = retAllow
		eacces = retErrno | errEACCES
		enosys = retErrno | errENOSYS
		eperm  = retErrno | errEPERM

		afInet, afInet6, afNetlink, afPacket = 2, 10, 16, 17
		read                                 = 0
	)
	type call struct {
		name     string
		arch, nr uint32
		arg0     uint32
		want     uint32
	}
	cases := map[string][]call{
		"amd64": {
			{"socket(AF_UNIX)", 0xc000003e, 41, afUnix, allow},
			{"socket(AF_INET)", 0xc000003e, 41, afInet, eacces},
			{"socket(AF_INET6)", 0xc000003e, 41, afInet6, eacces},
			{"socket(AF_PACKET)", 0xc000003e, 41, afPacket, eacces},
			{"socket(AF_NETLINK)", 0xc000003e, 41, afNetlink, eacces},
			{"read", 0xc000003e, read, 0, allow},
			{"connect", 0xc000003e, 42, 3, allow},
			{"io_uring_setup", 0xc000003e, 425, 8, enosys},
			{"x32 socket", 0xc000003e, x32SyscallBit | 41, afInet, enosys},
			{"i386 socket(AF_INET)", 0x40000003, 359, afInet, eacces},
			{"i386 socket(AF_UNIX)", 0x40000003, 359, afUnix, allow},
			{"i386 socketcall", 0x40000003, 102, 1, eacces},
			{"i386 io_uring_setup", 0x40000003, 425, 8, enosys},
			{"i386 read", 0x40000003, 3, 0, allow},
			{"unknown ABI", 0xc00000b7, 198, afUnix, eperm},
		},
		"arm64": {
			{"socket(AF_UNIX)", 0xc00000b7, 198, afUnix, allow},
			{"socket(AF_INET)", 0xc00000b7, 198, afInet, eacces},
			{"socket(AF_INET6)", 0xc00000b7, 198, afInet6, eacces},
			{"read", 0xc00000b7, 63, 0, allow},
			{"io_uring_setup", 0xc00000b7, 425, 8, enosys},
			{"socket numbered as on amd64 is another syscall", 0xc00000b7, 41, afInet, allow},
			{"arm socket(AF_INET)", 0x40000028, 281, afInet, eacces},
			{"arm socket(AF_UNIX)", 0x40000028, 281, afUnix, allow},
			{"unknown ABI", 0xc000003e, 41, afInet, eperm},
		},
	}
	for goarch, calls := range cases {
		prog, err := Program(goarch)
		if err != nil {
			t.Fatal(err)
		}
		ins := make([]bpf.Instruction, len(prog))
		for i, r := range prog {
			ins[i] = r.Disassemble()
		}
		vm, err := bpf.NewVM(ins)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		for _, c := range calls {
			if got := run(t, vm, c.arch, c.nr, c.arg0); got != c.want {
				t.Errorf("%s %s: filter returns %#x, want %#x", goarch, c.name, got, c.want)
			}
		}
	}
}

func TestProgramUnsupported(t *testing.T) {
	if _, err := Program("riscv64"); err == nil {
		t.Fatal("a filter for an architecture without a table")
	}
}
