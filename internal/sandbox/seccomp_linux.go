package sandbox

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// seccompArch returns the audit architecture the seccomp filter accepts.
func seccompArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// deniedSyscalls fail with EPERM in both backends. Each is kernel attack
// surface a build or a test has no business with, or a way around the
// other barriers:
//
//   - io_uring_setup, io_uring_enter, io_uring_register: io_uring performs
//     opens, connects and reads without the syscalls seccomp sees, and has
//     been a steady source of kernel bugs (Docker's default profile denies
//     it too; libraries fall back to epoll on EPERM);
//   - userfaultfd: the classic way to win kernel races;
//   - bpf, perf_event_open: kernel programs and performance counters;
//   - keyctl, add_key, request_key: the kernel keyrings are not namespaced
//     (a session keyring may hold the owner's credentials).
var deniedSyscalls = []struct {
	name string
	nr   uint32
}{
	{"io_uring_setup", unix.SYS_IO_URING_SETUP},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER},
	{"userfaultfd", unix.SYS_USERFAULTFD},
	{"bpf", unix.SYS_BPF},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
	{"keyctl", unix.SYS_KEYCTL},
	{"add_key", unix.SYS_ADD_KEY},
	{"request_key", unix.SYS_REQUEST_KEY},
}

// seccompFilter is the one filter both backends apply to the command (the
// landlock helper to itself before its execve, bubblewrap to its child
// through --add-seccomp-fd):
//
//   - a foreign syscall ABI (32-bit compat) kills the process: the numbers
//     below would mean other syscalls there; the x32 range of this ABI is
//     refused with EACCES;
//   - every deniedSyscalls entry fails with EPERM;
//   - socket(AF_UNIX, ...) fails with EACCES, so no pathname socket is
//     reachable: Landlock restricts connect(2) on them only from ABI v9, a
//     network namespace does not isolate them, and a read-only or overlay
//     mount does not stop a connect either. A workspace can hold the
//     socket of a server the owner runs (a database started in the project
//     folder with peer authentication, a language server, git's fsmonitor
//     daemon in .git); bubblewrap's namespaces do not hide those, so the
//     rule holds in both backends. socketpair(2) still works, so pipes
//     between the command's own processes do.
//
// Everything else is allowed; Landlock, the mounts and the namespaces do
// the rest.
func seccompFilter() ([]unix.SockFilter, error) {
	arch, ok := seccompArch()
	if !ok {
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	const (
		ld    = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret   = unix.BPF_RET | unix.BPF_K
		nrOff = 0  // offsetof(struct seccomp_data, nr)
		arOff = 4  // offsetof(struct seccomp_data, arch)
		a0Off = 16 // offsetof(struct seccomp_data, args[0]), low word (little endian)
		x32   = 0x40000000
	)
	// Layout (n = len(deniedSyscalls)):
	//   0..2      arch check
	//   3         load nr
	//   4         x32 range → EACCES
	//   5..4+n    denied syscalls → EPERM
	//   5+n       socket → AF_UNIX check
	//   6+n       allow
	//   7+n       load args[0]
	//   8+n       AF_UNIX → EACCES
	//   9+n       allow
	//   10+n      return EACCES
	//   11+n      return EPERM
	n := len(deniedSyscalls)
	eacces, eperm := 10+n, 11+n
	jump := func(from, to int) uint8 { return uint8(to - from - 1) }
	f := []unix.SockFilter{
		{Code: ld, K: arOff},
		{Code: jeq, K: arch, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: nrOff},
		{Code: jge, K: x32, Jt: jump(4, eacces)},
	}
	for i, d := range deniedSyscalls {
		f = append(f, unix.SockFilter{Code: jeq, K: d.nr, Jt: jump(5+i, eperm)})
	}
	f = append(f,
		unix.SockFilter{Code: jeq, K: unix.SYS_SOCKET, Jt: jump(5+n, 7+n)},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ld, K: a0Off},
		unix.SockFilter{Code: jeq, K: unix.AF_UNIX, Jt: jump(8+n, eacces)},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	)
	return f, nil
}

// bwrapSeccompFD is the descriptor bubblewrap reads the filter from
// (--add-seccomp-fd): the first extra file of whoever starts bwrap (homard
// in the writable mode, the mount stage otherwise).
const bwrapSeccompFD = 3

// seccompFile returns a sealed memfd holding seccompFilter as the raw
// array of struct sock_filter bubblewrap expects.
func seccompFile() (*os.File, error) {
	f, err := seccompFilter()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, ins := range f {
		// struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }
		_ = binary.Write(&b, binary.NativeEndian, ins)
	}
	return memfdWith(b.Bytes())
}
