// Package sandbox runs one already-decided program as a child process inside
// a confined environment and returns its bounded output. It is the last step
// of the arbiter pipeline (DESIGN.md §2 step 9) and does not trust the checks
// made before it.
//
// Contract:
//
//   - A Spec is executed with argv only: Spec.Path is an absolute, already
//     resolved program path and Spec.Args are passed to it verbatim. No shell
//     is ever involved, so ";", "&&" or "$()" in an argument are plain bytes.
//   - The child sees exactly Spec.Env (nothing is inherited from homard) and
//     starts in Spec.Dir, which must lie inside Spec.Root.
//   - Every run is bounded: a timeout (zero means 60s) after which the whole
//     process group is killed, an output cap (zero means 64 KiB, stdout and
//     stderr combined, read through one pipe and never buffered beyond the
//     cap) and optional rlimits (Limits). Descendants that outlive the main
//     process are killed when it exits.
//   - Backends fail closed. A backend that cannot run on this machine says so
//     from Available() with what to install or configure; Select never falls
//     back from a configured backend to a weaker one, and "auto" never falls
//     back to the unconfined host backend.
//
// Backends:
//
//   - "bwrap": Debian's bubblewrap. New user, mount, pid, net, ipc, uts and
//     cgroup namespaces (no network at all), no capabilities, an unprivileged
//     uid inside, no_new_privs, read-only system directories, a minimal /etc,
//     the workspace root read-write with its .git read-only.
//   - "landlock": homard re-executes itself as a helper (argv[1]
//     "__homard-sandbox-landlock"; main must call MaybeRunHelper first) in new
//     user and network namespaces; the helper applies Landlock (the strict
//     configuration of the kernel's ABI, v1 or later), a seccomp filter
//     against UNIX sockets and no_new_privs to itself, then execs the
//     program. Read-only system directories and minimal /etc, the workspace
//     read-write; a workspace containing .git is refused (Landlock cannot
//     keep it read-only). homard itself is never restricted.
//   - "host": no confinement beyond argv-only exec, a fixed cwd, a cleared
//     environment, a process group and rlimits. Only used when configured
//     explicitly.
//
// The landlock helper sets rlimits on itself right before its execve. The
// other backends apply them race-free without a helper binary: the child is started
// with PTRACE_TRACEME, so the kernel stops it right after execve and before the
// program's first instruction; the parent sets the limits with prlimit(2) and
// detaches. When Limits is zero no ptrace is used. If ptrace is forbidden on
// the machine (seccomp, Yama scope 3) a run that asks for limits fails instead
// of running unlimited.
package sandbox
