//go:build linux

package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditArch names this build's architecture to seccomp. Architectures
// whose programs open sockets through socketcall (386, arm, s390x, ppc64)
// are left out: a filter on socket would not see them.
var auditArch = map[string]uint32{
	"amd64":   unix.AUDIT_ARCH_X86_64,
	"arm64":   unix.AUDIT_ARCH_AARCH64,
	"riscv64": unix.AUDIT_ARCH_RISCV64,
	"loong64": unix.AUDIT_ARCH_LOONGARCH64,
}

// Offsets in struct seccomp_data (the low half of each 64-bit argument on
// these little-endian architectures).
const (
	seccompNr   = 0
	seccompArch = 4
	seccompArg0 = 16
	seccompArg1 = 24
	seccompArg2 = 32
	x32Bit      = 0x40000000 // system calls of the x32 ABI on amd64
)

// installFilter installs the command's seccomp filter. It makes
// socket(AF_INET or AF_INET6, …, IPPROTO_MPTCP) fail with
// EPROTONOSUPPORT, as on a kernel without Multipath TCP (Go, curl and
// others then use plain TCP): Landlock's TCP rules do not apply to
// Multipath TCP sockets, which reach any TCP server. io_uring_setup fails
// with ENOSYS (its operations bypass seccomp). The ioctls TIOCSTI and
// TIOCLINUX, which push input into a terminal, fail with EPERM: through a
// terminal the command could reach (another of its user's), it would type
// commands that a shell outside the sandbox runs. Processes of another
// ABI (x32, 32-bit) are killed: the filter cannot vouch for their calls.
// Like Landlock, it is set on this thread, which executes the command.
func installFilter() error {
	arch, ok := auditArch[runtime.GOARCH]
	if !ok {
		return nil
	}
	const (
		allow   = unix.SECCOMP_RET_ALLOW
		noProto = unix.SECCOMP_RET_ERRNO | uint32(unix.EPROTONOSUPPORT)
		noSys   = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		noPerm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		kill    = unix.SECCOMP_RET_KILL_PROCESS
	)
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	prog := []unix.SockFilter{
		/* 0 */ ld(seccompArch),
		/* 1 */ jeq(arch, 1, 0),
		/* 2 */ ret(kill),
		/* 3 */ ld(seccompNr),
		/* 4 */ {Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: x32Bit, Jt: 0, Jf: 1},
		/* 5 */ ret(kill),
		/* 6 */ jeq(uint32(unix.SYS_IO_URING_SETUP), 0, 1),
		/* 7 */ ret(noSys),
		/* 8 */ jeq(uint32(unix.SYS_IOCTL), 0, 5),
		/* 9 */ ld(seccompArg1), // the request: the kernel reads 32 bits of it
		/* 10 */ jeq(unix.TIOCSTI, 2, 0),
		/* 11 */ jeq(unix.TIOCLINUX, 1, 0),
		/* 12 */ ret(allow),
		/* 13 */ ret(noPerm),
		/* 14 */ jeq(uint32(unix.SYS_SOCKET), 0, 6),
		/* 15 */ ld(seccompArg0),
		/* 16 */ jeq(unix.AF_INET, 1, 0),
		/* 17 */ jeq(unix.AF_INET6, 0, 3),
		/* 18 */ ld(seccompArg2),
		/* 19 */ jeq(unix.IPPROTO_MPTCP, 0, 1),
		/* 20 */ ret(noProto),
		/* 21 */ ret(allow),
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0); err != nil {
		return fmt.Errorf("installing the seccomp filter (Multipath TCP, io_uring, terminal input): %w", err)
	}
	return nil
}
