package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The unix-socket filter: a seccomp program that refuses socket(AF_UNIX,
// ...) with EACCES and allows every other system call. Landlock before
// ABI 9 does not mediate connect() on a unix socket named by a path, so
// without it a Landlock run could reach a server of the user's (a terminal
// multiplexer, an ssh agent) through its socket file. socketpair() stays
// allowed: it makes a connected pair that reaches no one else (node and
// Python use it for a child's standard streams).

// Offsets in struct seccomp_data: the system call's number, its
// architecture, and the low 32 bits of its first argument (little endian:
// the domain, an int, is those bits).
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16
	// x32Bit marks a system call of the x32 ABI on x86_64 (same
	// architecture value, numbers with this bit set).
	x32Bit = 0x40000000
)

// filterArch is one architecture a process of this machine can call the
// kernel with: its AUDIT_ARCH value, the numbers of socket(), and of
// socketcall() (0: none), whose arguments sit in memory a filter cannot
// read, so it is refused whole.
type filterArch struct {
	arch       uint32
	socket     []uint32
	socketcall uint32
}

// filterArches are the architectures of goarch's kernel: the native one
// and its 32-bit compatibility one.
func filterArches(goarch string) ([]filterArch, error) {
	switch goarch {
	case "amd64":
		return []filterArch{
			{arch: unix.AUDIT_ARCH_X86_64, socket: []uint32{41, 41 | x32Bit}},
			{arch: unix.AUDIT_ARCH_I386, socket: []uint32{359}, socketcall: 102},
		}, nil
	case "arm64":
		return []filterArch{
			{arch: unix.AUDIT_ARCH_AARCH64, socket: []uint32{198}},
			{arch: unix.AUDIT_ARCH_ARM, socket: []uint32{281}},
		}, nil
	}
	return nil, fmt.Errorf("no unix-socket filter for %s: the landlock sandbox refuses unix sockets with seccomp, written for amd64 and arm64 only (choose `sandbox: bwrap`, or allow them with sandbox.allow_sockets)", goarch)
}

// unixSocketProgram is the filter for goarch. A call from an architecture
// it does not know is refused.
func unixSocketProgram(goarch string) ([]bpf.Instruction, error) {
	arches, err := filterArches(goarch)
	if err != nil {
		return nil, err
	}
	var p prog
	p.add(bpf.LoadAbsolute{Off: seccompArch, Size: 4})
	for i, a := range arches {
		p.jumpIf(a.arch, fmt.Sprint("arch", i))
	}
	p.jumpTo("deny")
	for i, a := range arches {
		p.label(fmt.Sprint("arch", i))
		p.add(bpf.LoadAbsolute{Off: seccompNr, Size: 4})
		for _, nr := range a.socket {
			p.jumpIf(nr, "domain")
		}
		if a.socketcall != 0 {
			p.jumpIf(a.socketcall, "deny")
		}
		p.add(bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	}
	p.label("domain")
	p.add(bpf.LoadAbsolute{Off: seccompArg0, Size: 4})
	p.jumpIf(unix.AF_UNIX, "deny")
	p.add(bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	p.label("deny")
	p.add(bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)})
	return p.resolve()
}

// prog assembles a program with forward jumps to labels.
type prog struct {
	ins    []bpf.Instruction
	jumps  map[int]string // instruction index → label it jumps to
	labels map[string]int
}

func (p *prog) add(i bpf.Instruction) { p.ins = append(p.ins, i) }

func (p *prog) label(l string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[l] = len(p.ins)
}

// jumpIf jumps to l when the loaded word equals v, else goes on.
func (p *prog) jumpIf(v uint32, l string) {
	if p.jumps == nil {
		p.jumps = map[int]string{}
	}
	p.jumps[len(p.ins)] = l
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v})
}

// jumpTo jumps to l.
func (p *prog) jumpTo(l string) {
	if p.jumps == nil {
		p.jumps = map[int]string{}
	}
	p.jumps[len(p.ins)] = l
	p.add(bpf.Jump{})
}

func (p *prog) resolve() ([]bpf.Instruction, error) {
	for i, l := range p.jumps {
		to, ok := p.labels[l]
		if !ok || to <= i || to-i-1 > 255 {
			return nil, fmt.Errorf("unix-socket filter: bad jump to %s", l)
		}
		switch j := p.ins[i].(type) {
		case bpf.JumpIf:
			j.SkipTrue = uint8(to - i - 1)
			p.ins[i] = j
		case bpf.Jump:
			j.Skip = uint32(to - i - 1)
			p.ins[i] = j
		}
	}
	return p.ins, nil
}

// refuseUnixSockets installs the filter on the calling thread, which
// must have no_new_privs set; what it executes keeps the filter.
func refuseUnixSockets() error {
	ins, err := unixSocketProgram(runtime.GOARCH)
	if err != nil {
		return err
	}
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return fmt.Errorf("unix-socket filter: %w", err)
	}
	f := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		f[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fp := unix.SockFprog{Len: uint16(len(f)), Filter: &f[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fp)))
	runtime.KeepAlive(f)
	if errno != 0 {
		if errors.Is(errno, unix.EINVAL) || errors.Is(errno, unix.ENOSYS) {
			return fmt.Errorf("seccomp filters are not available in this kernel (%v): the landlock sandbox needs one to refuse unix sockets (choose `sandbox: bwrap`, or allow them with sandbox.allow_sockets)", errno)
		}
		return fmt.Errorf("seccomp unix-socket filter: %w", errno)
	}
	return nil
}
