package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// MaybeRunHelper must be the first call in main of every binary that uses
// the landlock backend or a service's Proxy (homard, and this package's
// test binary from TestMain); started as a service's relay it runs the
// relay (runRelay) and exits with the service's status. When the process was started as the landlock helper it confines
// itself and execs the requested program, never returning; on a setup
// failure it reports the error to homard and exits with status 127.
// Otherwise it returns at once and records that the helper is reachable.
func MaybeRunHelper() {
	if len(os.Args) >= 2 && os.Args[1] == mountArg {
		os.Exit(runMountStage())
	}
	if len(os.Args) >= 2 && os.Args[1] == relayArg {
		os.Exit(runRelay(os.Args[2:]))
	}
	if len(os.Args) < 2 || os.Args[1] != helperArg {
		helperHooked.Store(true)
		return
	}
	err := runHelper()
	status := os.NewFile(helperStatusFD, "status")
	if _, werr := fmt.Fprintf(status, "%v", err); werr != nil {
		fmt.Fprintf(os.Stderr, "homard sandbox helper: %v\n", err)
	}
	os.Exit(127)
}

// landlockConfigs are the strict (not best-effort) configurations handling
// every access right of Landlock ABI v1, v2, ...: the helper uses the newest
// one the kernel supports, so nothing the kernel can restrict is left
// unhandled and nothing is silently dropped.
var landlockConfigs = []landlock.Config{
	landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11,
}

// runHelper runs in the re-executed child, in its new user and network
// namespaces, already in Spec.Dir. It returns only on failure.
func runHelper() error {
	if _, err := unix.FcntlInt(helperStatusFD, unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
		return fmt.Errorf("status fd: %w", err)
	}
	if err := markInheritedCloexec(helperStatusFD + 1); err != nil {
		return err
	}
	specFile := os.NewFile(helperSpecFD, "spec")
	b, err := io.ReadAll(io.LimitReader(specFile, 64<<20))
	specFile.Close()
	if err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	var req helperRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fmt.Errorf("decode request: %w", err)
	}
	if req.Mode == ModeWritable {
		if err := checkLandlockRoot(req.Root); err != nil {
			return err
		}
	}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("landlock unsupported (ABI %d): %v", abi, err)
	}
	cfg := landlockConfigs[min(abi, len(landlockConfigs))-1]
	rules, err := landlockRules(req, abi)
	if err != nil {
		return err
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("build landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("build landlock ruleset: nothing to enforce")
	}
	// Prepare execve's arguments before limits are set: RLIMIT_AS could
	// make any later allocation fail.
	argv0, err := syscall.BytePtrFromString(req.Path)
	if err != nil {
		return err
	}
	argv, err := syscall.SlicePtrFromStrings(append([]string{req.Path}, req.Args...))
	if err != nil {
		return err
	}
	envv, err := syscall.SlicePtrFromStrings(req.Env)
	if err != nil {
		return err
	}
	filter, err := seccompFilter()
	if err != nil {
		return err
	}
	// Landlock, no_new_privs and seccomp are per thread until execve, which
	// keeps only the calling thread: stay on it. Never unlocked.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	unix.Close(fd)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0); err != nil {
		return fmt.Errorf("install seccomp filter: %w", err)
	}
	if err := applyLimits(0, req.Limits); err != nil {
		return fmt.Errorf("apply resource limits: %w", err)
	}
	_, _, errno := syscall.RawSyscall(unix.SYS_EXECVE, uintptr(unsafe.Pointer(argv0)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return fmt.Errorf("exec %s: %w", req.Path, errno)
}

// landlockRules lists what the child may touch (see Landlock's doc).
func landlockRules(req helperRequest, abi int) ([]landlock.Rule, error) {
	root := req.Root
	var rules []landlock.Rule
	ro := func(paths ...string) error {
		for _, p := range paths {
			fi, err := os.Stat(p)
			switch {
			case errors.Is(err, os.ErrNotExist):
				continue
			case err != nil:
				return fmt.Errorf("inspect %s: %w", p, err)
			case fi.IsDir():
				rules = append(rules, landlock.RODirs(p))
			default:
				rules = append(rules, landlock.ROFiles(p))
			}
		}
		return nil
	}
	if err := ro(append([]string{"/usr"}, systemDirs...)...); err != nil {
		return nil, err
	}
	if err := ro(etcFiles...); err != nil {
		return nil, err
	}
	// /proc/self resolves to this process's /proc/PID, which stays the
	// program's after execve (same pid). Its own children get nothing.
	if err := ro("/proc/self", "/dev/zero", "/dev/random", "/dev/urandom"); err != nil {
		return nil, err
	}
	// The owner's program folders (commands.path): read and execute.
	if err := ro(req.ProgramDirs...); err != nil {
		return nil, err
	}
	rules = append(rules, landlock.RWFiles("/dev/null"))
	if req.Mode == ModeReadOnly {
		// The mount is read-only too; Landlock is the second line.
		rules = append(rules, landlock.RODirs(root))
	} else {
		rw := landlock.RWDirs(root)
		if abi >= 2 { // rename and link between directories of the workspace
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	if req.Home != "" {
		rw := landlock.RWDirs(req.Home)
		if abi >= 2 {
			rw = rw.WithRefer()
		}
		rules = append(rules, rw)
	}
	return rules, nil
}
