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
// Modes (Spec.Mode) — enforcement, not classification: what a command is
// classed as decides which view it gets, and the view holds whatever the
// command really does.
//
//   - ModeReadOnly: the root and everything below it is mounted read-only.
//   - ModeOverlay: the root is an overlay whose upper layer is a
//     size- and inode-capped tmpfs the command cannot reach; when every
//     process of the run is gone (a pid namespace: a `setsid -f` child dies
//     with the command) the upper layer comes back as Result.Changes, a tar
//     stream that homard grades and applies (package workspace). Nothing
//     reaches the real root before that. A mount that fails, or that statfs
//     does not show as an overlay, fails the run.
//   - ModeWritable: the root read-write (bwrap keeps every .git read-only,
//     landlock refuses a root holding .git): the backends' old contract,
//     used by their own tests. run_command never asks for it.
//
// The first two go through a mount stage: homard re-executes itself
// (argv[1] "__homard-sandbox-mount") as root of a new user namespace mapped
// to homard's own uid, in new mount, network and pid namespaces (it is pid
// 1 there, with its own /proc: when it dies, with homard or by the
// timeout, the kernel kills everything below it); it mounts a
// scratch tmpfs outside the root, builds the view, covers Spec.Hide with
// empty mode-000 read-only masks attached by descriptor (open_tree +
// mount_setattr + move_mount, resolved beneath the root without following
// symlinks), covers every repository config with a read-only allow-listed
// copy (no drivers, filters, textconv, includes, fsmonitor), then starts
// the command stage: the landlock helper in a nested user, mount and pid
// namespace as an ordinary uid (the mounts are locked), or bubblewrap.
// HOME, TMPDIR, XDG_* and tool caches point at a fresh folder outside every
// root; GOTOOLCHAIN=local, GOENV=off, GOPROXY=off. With Spec.Cache the
// build caches (Go's build and module caches, npm's, pip's) point instead
// at the root's persistent cache, mounted as an overlay's lower layer
// beneath a writable layer on the scratch tmpfs: read by the command,
// never written by it. Only Caches.Refresh — homard's fixed, compile-only
// warm-up, with the root read-only — writes its go-build folder.
//
// Backends:
//
//   - "bwrap": Debian's bubblewrap. New user, mount, pid, net, ipc, uts and
//     cgroup namespaces (no network at all), no capabilities, an unprivileged
//     uid inside, no_new_privs, the landlock helper's seccomp filter
//     (--add-seccomp-fd), read-only system directories, a minimal /etc, a
//     read-only /dev with a capped /dev/shm, a /tmp capped at ScratchBytes,
//     the workspace root read-write with its .git read-only.
//   - "landlock": homard re-executes itself as a helper (argv[1]
//     "__homard-sandbox-landlock"; main must call MaybeRunHelper first) in new
//     user and network namespaces; the helper applies Landlock (the strict
//     configuration of the kernel's ABI, v1 or later), the seccomp filter
//     (UNIX sockets, io_uring, userfaultfd, bpf, perf_event_open, keyrings)
//     and no_new_privs to itself, then execs the
//     program. Read-only system directories and minimal /etc, the workspace
//     read-write; a workspace containing .git is refused (Landlock cannot
//     keep it read-only). homard itself is never restricted.
//   - "host": no confinement beyond argv-only exec, a fixed cwd, a cleared
//     environment, a process group and rlimits. Only used when configured
//     explicitly.
//
// Services (ServiceSpec, Backend.StartService): a long-lived process (an
// MCP server, a skill's entrypoint) talking over pipes, in bwrap only (host
// and landlock refuse): no network (ServiceSpec.Proxy: only through a
// relay to homard's proxy), no files but the system's, its
// declared read-only mounts and workspace roots, a fresh /tmp and
// ServiceHome; homard's home and data directory are never bound (a mount
// holding one is refused); the environment is exactly ServiceSpec.Env;
// Stop kills the whole tree through bwrap's pid namespace. A service with
// workspace roots starts through the mount stage, as commands do: each
// root gets its masks and sanitized git configs, and its one writable root
// is an overlay whose upper layer Service.Changes returns as a change set
// after Wait. ServiceSpec.Limits bound the whole tree like Spec.Limits.
//
// Limits.TreeMemoryBytes caps the memory of the whole process tree with a
// cgroup made for the run (with the pids cgroup of a root homard, see
// Limits.Processes), entered before the first instruction like the
// rlimits below. Without one, ModeOverlay and ModeWritable runs fail with
// ErrUnenforceable; ModeReadOnly runs without the tree limit.
//
// The landlock helper sets rlimits on itself right before its execve. The
// other backends apply them race-free without a helper binary: the child is started
// with PTRACE_TRACEME, so the kernel stops it right after execve and before the
// program's first instruction; the parent sets the limits with prlimit(2) and
// detaches. When Limits is zero no ptrace is used. If ptrace is forbidden on
// the machine (seccomp, Yama scope 3) a run that asks for limits fails instead
// of running unlimited.
package sandbox
