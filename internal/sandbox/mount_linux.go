package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	changeset "github.com/homard/homard/internal/workspace"
)

// mountArg is argv[1] of a re-executed homard that must act as the mount
// stage: it runs as root of a fresh user namespace (mapped to homard's own
// uid, so it holds no privilege outside), in a fresh mount and network
// namespace, and prepares the view the command will see before it starts
// the confined command stage (the landlock helper, or bubblewrap).
const mountArg = "__homard-sandbox-mount"

// File descriptors of the mount stage, in exec.Cmd.ExtraFiles order.
const (
	mountRequestFD = 3 // mountRequest JSON (memfd), read to EOF
	mountStatusFD  = 4 // a setup error is written here (shared with the landlock stage)
	mountNextFD    = 5 // the landlock stage's request (memfd), handed on as its fd 3
	mountChangesFD = 6 // overlay mode: the upper layer is written here as a tar stream
	mountRelayFD   = 7 // a service's relay socket (mountRequest.Relay), handed on as bwrap's relayCtlFD
)

// overlayMagic is OVERLAYFS_SUPER_MAGIC, the f_type statfs reports for an
// overlay mount; the stage checks it before running anything on the view.
const overlayMagic = 0x794c7630

// mountRequest is what homard hands the mount stage.
type mountRequest struct {
	Mode Mode   `json:"mode"`
	Root string `json:"root"`
	Dir  string `json:"dir"` // the command's working folder, entered through the new view
	// Hide are absolute paths inside Root covered by an empty, unreadable,
	// read-only object before the command starts.
	Hide []string `json:"hide"`
	// GitConfigs are the config files of the repositories under Root
	// (absolute); each is covered by a read-only, sanitized copy (see
	// sanitizeGitConfig).
	GitConfigs []string `json:"git_configs"`
	// Scratch is an empty folder outside Root that the stage covers with
	// its own size-capped tmpfs: the overlay's upper and work folders, the
	// masks and the command's home live there, out of the command's reach.
	Scratch      string `json:"scratch"`
	ScratchBytes int64  `json:"scratch_bytes"`
	ScratchFiles int64  `json:"scratch_files"`
	// Next is the command stage: "landlock" (re-exec of this binary with
	// the request at mountNextFD) or "bwrap" (NextArgv, a full argv).
	Next     string   `json:"next"`
	NextArgv []string `json:"next_argv"`
	// Limits are applied to a bwrap command stage before its first
	// instruction (the landlock stage applies its own).
	Limits Limits `json:"limits"`
	// Extra are further folders shown read-only, each with its own masks
	// and sanitized git configs (a service's other declared roots). None
	// may overlap Root or another.
	Extra []extraRoot `json:"extra,omitempty"`
	// Relay: mountRelayFD holds a service's relay socket, which the bwrap
	// stage gets as its relayCtlFD.
	Relay bool `json:"relay,omitempty"`
	// Cache is Spec.Cache: mounted at the command's cache view (see
	// mountCacheView). CacheWritable is Spec.cacheRefresh.
	Cache         string `json:"cache,omitempty"`
	CacheWritable bool   `json:"cache_writable,omitempty"`
}

// extraRoot is a read-only folder of a staged service besides Root.
type extraRoot struct {
	Root       string   `json:"root"`
	Hide       []string `json:"hide"`
	GitConfigs []string `json:"git_configs"`
}

// Scratch layout, relative to mountRequest.Scratch.
const (
	scratchUpper = "upper"
	scratchWork  = "work"
	scratchHome  = "home" // the command's HOME, TMPDIR and caches (landlock)
	scratchMaskF = "mask-file"
	scratchMaskD = "mask-dir"
	// The cache view's writable layer (see mountCacheView).
	scratchCacheUpper = "cache-upper"
	scratchCacheWork  = "cache-work"
)

// runMountStage is the mount stage's main. It returns the exit status to
// use; on a setup failure it reports to mountStatusFD and returns 127.
func runMountStage() int {
	status := os.NewFile(mountStatusFD, "status")
	fail := func(err error) int {
		if _, werr := fmt.Fprintf(status, "%v", err); werr != nil {
			fmt.Fprintf(os.Stderr, "homard sandbox mount stage: %v\n", err)
		}
		return 127
	}
	for _, fd := range []int{mountRequestFD, mountStatusFD, mountNextFD, mountChangesFD, mountRelayFD} {
		// Nothing opened by homard may reach bubblewrap or the command
		// (the relay socket is handed on explicitly).
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	}
	// Nor anything homard inherited itself.
	if err := markInheritedCloexec(mountRelayFD + 1); err != nil {
		return fail(err)
	}
	reqFile := os.NewFile(mountRequestFD, "request")
	b, err := io.ReadAll(io.LimitReader(reqFile, 16<<20))
	reqFile.Close()
	if err != nil {
		return fail(fmt.Errorf("read mount request: %w", err))
	}
	var req mountRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return fail(fmt.Errorf("decode mount request: %w", err))
	}
	if err := prepareView(req); err != nil {
		return fail(err)
	}
	code, err := runNext(req, status)
	if err != nil {
		return fail(err)
	}
	if req.Mode == ModeOverlay {
		out := os.NewFile(mountChangesFD, "changes")
		// The stream's format is package workspace's, which reads it back.
		lim := changeset.TarLimits{MaxEntries: int(req.ScratchFiles), MaxBytes: req.ScratchBytes}
		if err := changeset.WriteUpperTar(out, filepath.Join(req.Scratch, scratchUpper), lim); err != nil {
			return fail(fmt.Errorf("read the command's changes: %w", err))
		}
		out.Close()
	}
	return code
}

// prepareView builds the command's view of Root in this mount namespace:
// read-only, or an overlay whose writes land on the scratch tmpfs; then it
// covers every Hide path. Every step is checked; any error aborts the run
// before the command starts, so a failure never falls through to the real
// root.
func prepareView(req mountRequest) error {
	// Mount events must not propagate back to the host's namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// The stage is pid 1 of a new pid namespace: a /proc of that
	// namespace, so pids it reads and writes (its children's uid_map,
	// bubblewrap's /proc/PID/ns) are its own.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc for the run's pid namespace: %w", err)
	}
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700", req.ScratchBytes, req.ScratchFiles)
	if err := unix.Mount("homard-scratch", req.Scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount the scratch tmpfs: %w", err)
	}
	for _, d := range []string{scratchUpper, scratchWork, scratchHome} {
		if err := os.Mkdir(filepath.Join(req.Scratch, d), 0o700); err != nil {
			return fmt.Errorf("prepare scratch: %w", err)
		}
	}
	// The command's uid inside its own namespace maps to this stage's
	// root, so its home must belong to root here.
	if err := os.Chmod(filepath.Join(req.Scratch, scratchHome), 0o755); err != nil {
		return fmt.Errorf("prepare scratch: %w", err)
	}
	switch req.Mode {
	case ModeReadOnly:
		if err := unix.Mount(req.Root, req.Root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind the workspace: %w", err)
		}
		if err := setAttr(req.Root, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
			return fmt.Errorf("make the workspace read-only: %w", err)
		}
	case ModeOverlay:
		if strings.ContainsAny(req.Root, ",:\\") {
			return fmt.Errorf("%w: the workspace path %q contains , : or \\, which an overlay mount cannot name", ErrUnenforceable, req.Root)
		}
		opts := "lowerdir=" + req.Root +
			",upperdir=" + filepath.Join(req.Scratch, scratchUpper) +
			",workdir=" + filepath.Join(req.Scratch, scratchWork) +
			// userxattr: the only mode an unprivileged overlay has; no
			// metacopy or index, and a renamed lower folder is copied
			// (redirect_dir=nofollow), so the upper layer holds whole files
			// and plain whiteouts homard can read without overlay's help.
			",userxattr,metacopy=off,index=off,redirect_dir=nofollow"
		if err := unix.Mount("homard-overlay", req.Root, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("%w: mount the overlay on %s: %v", ErrUnenforceable, req.Root, err)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(req.Root, &st); err != nil || st.Type != overlayMagic {
			return fmt.Errorf("%w: %s is not an overlay after mounting it (type %#x, %v)", ErrUnenforceable, req.Root, st.Type, err)
		}
	default:
		return fmt.Errorf("%w: mount stage for mode %d", ErrInvalidSpec, req.Mode)
	}
	if err := hidePaths(req.Root, req.Hide, req.Scratch); err != nil {
		return err
	}
	if err := mountCacheView(req); err != nil {
		return err
	}
	if err := sanitizeGitConfigs(req.Root, req.GitConfigs, req.Scratch, "git-config"); err != nil {
		return err
	}
	for i, x := range req.Extra {
		if err := unix.Mount(x.Root, x.Root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", x.Root, err)
		}
		if err := setAttr(x.Root, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV); err != nil {
			return fmt.Errorf("make %s read-only: %w", x.Root, err)
		}
		if err := hidePaths(x.Root, x.Hide, req.Scratch); err != nil {
			return err
		}
		if err := sanitizeGitConfigs(x.Root, x.GitConfigs, req.Scratch, fmt.Sprintf("git-config-x%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// sanitizeGitConfigs covers each repository config with a read-only copy
// that keeps only gitConfigKeep's keys, so nothing the model wrote into a
// repository's config (a filter, a diff driver, an fsmonitor, an include)
// runs when git reads it inside the sandbox.
func sanitizeGitConfigs(root string, configs []string, scratch, prefix string) error {
	if len(configs) == 0 {
		return nil
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	for i, p := range configs {
		rel, err := relInside(root, p, "git config")
		if err != nil {
			return err
		}
		fd, err := openBeneath(rootFD, rel, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EACCES) {
			continue // gone, a symlink (git will not find a config there), or hidden
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		f := os.NewFile(uintptr(fd), p)
		b, err := io.ReadAll(io.LimitReader(f, 1<<20))
		if err != nil {
			f.Close()
			return fmt.Errorf("read %s: %w", p, err)
		}
		copyPath := filepath.Join(scratch, fmt.Sprintf("%s-%d", prefix, i))
		if err := os.WriteFile(copyPath, sanitizeGitConfig(b), 0o444); err != nil {
			f.Close()
			return fmt.Errorf("write sanitized %s: %w", p, err)
		}
		err = attachMask(copyPath, fd)
		f.Close()
		if err != nil {
			return fmt.Errorf("cover %s: %w", p, err)
		}
	}
	return nil
}

// relInside is p, an absolute path strictly inside root, relative to root;
// what names p in the ErrInvalidSpec error of a path that is not.
func relInside(root, p, what string) (string, error) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("%w: %s %q is not inside %s", ErrInvalidSpec, what, p, root)
	}
	return rel, nil
}

// openBeneath opens rel beneath the folder open at rootFD with flags,
// following no symlink and no magic link on the way and never leaving
// the folder (RESOLVE_BENEATH), so a path swapped for a symlink cannot
// aim the open elsewhere.
func openBeneath(rootFD int, rel string, flags uint64) (int, error) {
	return unix.Openat2(rootFD, rel, &unix.OpenHow{
		Flags:   flags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// setAttr applies mount attributes to path and every mount below it.
func setAttr(path string, set uint64) error {
	return unix.MountSetattr(unix.AT_FDCWD, path, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: set})
}

// hidePaths covers every Hide path with an empty, mode-000, read-only mask
// (a folder for a folder, a file for anything else), reached by a
// descriptor opened beneath Root without following any symlink, so a path
// swapped for a symlink cannot aim the mount elsewhere. A symlink itself is
// left alone: what it points to is hidden, if sensitive, under its own name.
func hidePaths(root string, hide []string, scratch string) error {
	if len(hide) == 0 {
		return nil
	}
	maskF := filepath.Join(scratch, scratchMaskF)
	maskD := filepath.Join(scratch, scratchMaskD)
	// The masks are made once per run (a staged service hides paths in
	// more than one root).
	if err := os.WriteFile(maskF, nil, 0); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create mask: %w", err)
	}
	if err := os.Mkdir(maskD, 0); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create mask: %w", err)
	}
	if err := os.Chmod(maskF, 0); err != nil {
		return fmt.Errorf("create mask: %w", err)
	}
	rootFD, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	for _, p := range hide {
		rel, err := relInside(root, p, "hidden path")
		if err != nil {
			return err
		}
		fd, err := openBeneath(rootFD, rel, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC)
		if errors.Is(err, unix.ENOENT) {
			continue // gone since homard looked: nothing to hide
		}
		if errors.Is(err, unix.ELOOP) {
			continue // a symlink: see above
		}
		if err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return fmt.Errorf("hide %s: %w", p, err)
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			continue
		}
		mask := maskF
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			mask = maskD
		}
		err = attachMask(mask, fd)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	return nil
}

// attachMask puts a read-only copy of the mask's mount over the object
// open at fd: a detached clone (open_tree) is made read-only, nosuid,
// nodev and noexec before it is attached (move_mount), so there is no
// moment in which the mask is writable, and fd names the exact object
// homard resolved.
func attachMask(mask string, fd int) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, mask, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("clone mask: %w", err)
	}
	defer unix.Close(tree)
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, attr); err != nil {
		return fmt.Errorf("make mask read-only: %w", err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("attach mask: %w", err)
	}
	return nil
}

// runNext starts the command stage and returns its exit status. The
// landlock stage gets a nested user namespace in which it is an ordinary
// uid (so it cannot undo a mount: they are locked to this namespace), a
// nested mount namespace and a pid namespace of its own: when the program
// (its pid 1) exits, the kernel kills every process left in it, so nothing
// the command started outlives the run (not even a `setsid -f` child), and
// the upper layer is read only after all of them are gone. bubblewrap
// makes the same namespaces itself.
func runNext(req mountRequest, status *os.File) (int, error) {
	var cmd *exec.Cmd
	switch req.Next {
	case "landlock":
		next := os.NewFile(mountNextFD, "next")
		cmd = &exec.Cmd{
			Path:       "/proc/self/exe",
			Args:       []string{"homard-sandbox", helperArg},
			Env:        []string{},
			ExtraFiles: []*os.File{next, status},
			SysProcAttr: &syscall.SysProcAttr{
				Pdeathsig:  syscall.SIGKILL,
				Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
				Credential: &syscall.Credential{Uid: sandboxID, Gid: sandboxID, NoSetGroups: true},
				// The command's uid maps to this stage's root, which is
				// homard's own uid outside.
				UidMappings: []syscall.SysProcIDMap{{ContainerID: sandboxID, HostID: 0, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: sandboxID, HostID: 0, Size: 1}},
			},
		}
	case "bwrap":
		if len(req.NextArgv) == 0 {
			return 0, fmt.Errorf("%w: no bwrap command", ErrInvalidSpec)
		}
		// bwrap reads the seccomp filter from its fd 3 (bwrapSeccompFD).
		filter, err := seccompFile()
		if err != nil {
			return 0, fmt.Errorf("prepare the seccomp filter: %w", err)
		}
		defer filter.Close()
		extra := []*os.File{filter}
		if req.Relay {
			extra = append(extra, os.NewFile(mountRelayFD, "relay")) // bwrap's relayCtlFD
		}
		cmd = &exec.Cmd{
			Path:        req.NextArgv[0],
			Args:        req.NextArgv,
			Env:         []string{},
			ExtraFiles:  extra,
			SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
		}
	default:
		return 0, fmt.Errorf("%w: unknown command stage %q", ErrInvalidSpec, req.Next)
	}
	cmd.Dir = "/"
	if req.Next == "landlock" {
		cmd.Dir = req.Dir // after the mounts: the folder inside the new view
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	var err error
	if req.Next == "bwrap" {
		err = startWithLimits(cmd, req.Limits, nil)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return 0, fmt.Errorf("start the command stage: %w", err)
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return 0, fmt.Errorf("wait for the command stage: %w", err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return cmd.ProcessState.ExitCode(), nil
}
