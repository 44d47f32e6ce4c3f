package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// stageFor says how a backend's command stage is reached from the mount
// stage: "landlock" with its request, or "bwrap" with its argv.
type stageFor struct {
	next     string
	nextReq  []byte   // landlock: the helperRequest JSON
	nextArgv []string // bwrap: the full argv
	limits   Limits   // bwrap: applied to bwrap before its first instruction
}

// runStaged runs a normalized spec through the mount stage (see
// runMountStage): homard re-executes itself in new user (mapped to
// homard's own uid), mount and network namespaces; the stage builds the
// read-only or overlay view of Root and hides Spec.Hide, then starts the
// command stage, which next builds for scratch, an empty folder made for
// this run (newScratch) and removed after it.
func runStaged(ctx context.Context, spec Spec, cg cgroupLimits, next func(scratch string) (stageFor, error)) (Result, error) {
	scratch, done, err := newScratch()
	if err != nil {
		return Result{}, err
	}
	defer done()
	st, err := next(scratch)
	if err != nil {
		return Result{}, err
	}
	if !helperHooked.Load() {
		return Result{}, fmt.Errorf("%w: this binary does not call sandbox.MaybeRunHelper at startup, so it cannot build the command's read-only or overlay view", ErrUnavailable)
	}
	gitConfigs, err := repoConfigs(spec.Root)
	if err != nil {
		return Result{}, err
	}
	reqFile, err := memfdJSON("mount request", mountRequest{
		Mode: spec.Mode, Root: spec.Root, Dir: spec.Dir, Hide: spec.Hide, GitConfigs: gitConfigs,
		Scratch: scratch, ScratchBytes: spec.ScratchBytes, ScratchFiles: spec.ScratchFiles,
		Next: st.next, NextArgv: st.nextArgv, Limits: st.limits,
		Cache: spec.Cache, CacheWritable: spec.cacheRefresh,
	})
	if err != nil {
		return Result{}, err
	}
	defer reqFile.Close()
	var nextFile *os.File
	if st.nextReq != nil {
		if nextFile, err = memfdWith(st.nextReq); err != nil {
			return Result{}, err
		}
		defer nextFile.Close()
	}
	var changes *os.File
	if spec.Mode == ModeOverlay {
		if changes, err = anonymousFile(); err != nil {
			return Result{}, err
		}
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		if changes != nil {
			changes.Close()
		}
		return Result{}, fmt.Errorf("create status pipe: %w", err)
	}
	defer statusR.Close()
	res, err := execute(ctx, command{
		path:       "/proc/self/exe",
		argv:       []string{"homard-sandbox", mountArg},
		env:        nil,
		dir:        "/",
		stdin:      spec.Stdin,
		timeout:    spec.Timeout,
		maxOutput:  spec.MaxOutput,
		extraFiles: []*os.File{reqFile, statusW, nextFile, changes},
		// The stage is pid 1 of its own pid namespace: when it dies —
		// killed with homard (Pdeathsig), by the timeout, or crashing —
		// the kernel kills everything below it, bubblewrap and every
		// nested namespace included, whatever those processes do.
		ns: namespaces{
			cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET | syscall.CLONE_NEWPID,
			uidMap:     []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			gidMap:     []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		},
		cgroup: cg,
	})
	statusW.Close()
	msg, _ := io.ReadAll(io.LimitReader(statusR, 4096))
	// The stage exits (with the command's status) only after the stream is
	// complete or its failure is reported; killed by a signal (the OOM
	// killer of the run's memory cgroup, say), the stream may stop at any
	// entry and would read as a shorter, valid change set: drop it.
	keep := err == nil && len(msg) == 0 && !res.TimedOut && !res.signaled
	if changes != nil {
		if keep {
			if _, serr := changes.Seek(0, io.SeekStart); serr != nil {
				changes.Close()
				return res, fmt.Errorf("rewind the change set: %w", serr)
			}
			res.Changes = changes
		} else {
			changes.Close()
		}
	}
	if len(msg) > 0 {
		return res, fmt.Errorf("sandbox setup failed: %s", msg)
	}
	return res, err
}

// repoConfigs lists the config file of every repository folder (.git)
// under root.
func repoConfigs(root string) ([]string, error) {
	gits, err := gitEntries(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range gits {
		cfg := filepath.Join(g, "config")
		if fi, err := os.Lstat(cfg); err == nil && fi.Mode().IsRegular() {
			out = append(out, cfg)
		}
	}
	return out, nil
}

// anonymousFile returns a read-write temporary file that has no name, so
// nothing is left behind whatever happens to homard.
func anonymousFile() (*os.File, error) {
	f, err := os.CreateTemp("", "homard-changes-")
	if err != nil {
		return nil, fmt.Errorf("create the change-set file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("unlink the change-set file: %w", err)
	}
	return f, nil
}

// newScratch makes the empty folder the mount stage covers with its tmpfs.
// It is removed after the run (the tmpfs lived only in the run's mount
// namespace, so the host only ever sees an empty folder).
func newScratch() (string, func(), error) {
	dir, err := os.MkdirTemp("", "homard-sandbox-")
	if err != nil {
		return "", nil, fmt.Errorf("create scratch folder: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("resolve scratch folder: %w", err)
	}
	return real, func() { os.RemoveAll(dir) }, nil
}

// cleanEnv returns env without the variables that name a home, a
// temporary folder or a per-user configuration or cache, followed by
// homard's own: they all point at home, a fresh folder on the run's tmpfs
// outside every root, so no tool reads configuration planted in the
// workspace (or the owner's) and nothing written there outlives the run.
// With cache, the Go build and module caches, npm's and pip's point into
// the cache view (home/.build-cache, see mountCacheView) instead: warm,
// and as throw-away as the rest. Toolchains are pinned: GOTOOLCHAIN=local
// (no download of another Go), GOENV=off (no go env file), GOPROXY=off
// (there is no network); GOFLAGS is dropped.
func cleanEnv(env []string, home string, cache bool) []string {
	drop := func(k string) bool {
		switch k {
		case "HOME", "TMPDIR", "TMP", "TEMP", "GOCACHE", "GOPATH", "GOMODCACHE", "GOENV", "GOTOOLCHAIN",
			"GOFLAGS", "GOPROXY", "npm_config_userconfig", "NPM_CONFIG_USERCONFIG", "npm_config_cache",
			"NPM_CONFIG_CACHE", "PIP_CACHE_DIR", "PIP_CONFIG_FILE", "PYTHONUSERBASE", "PYTHONSTARTUP",
			"CARGO_HOME", "RUSTUP_HOME":
			return true
		}
		return strings.HasPrefix(k, "XDG_")
	}
	out := make([]string, 0, len(env)+18)
	for _, e := range env {
		k, _, _ := strings.Cut(e, "=")
		if !drop(k) {
			out = append(out, e)
		}
	}
	caches := []string{"GOCACHE=" + home + "/.cache/go-build", "npm_config_cache=" + home + "/.npm"}
	if cache {
		view := home + "/" + cacheView
		caches = []string{"GOCACHE=" + view + "/" + cacheGoBuild, "GOMODCACHE=" + view + "/" + cacheGoMod,
			"npm_config_cache=" + view + "/" + cacheNPM, "PIP_CACHE_DIR=" + view + "/" + cachePip}
	}
	out = append(out,
		"HOME="+home, "TMPDIR="+home,
		"XDG_CONFIG_HOME="+home+"/.config", "XDG_CACHE_HOME="+home+"/.cache",
		"XDG_DATA_HOME="+home+"/.local/share", "XDG_STATE_HOME="+home+"/.local/state",
		"GOPATH="+home+"/go",
		"GOTOOLCHAIN=local", "GOENV=off", "GOPROXY=off",
		"npm_config_userconfig=/dev/null",
		"PIP_CONFIG_FILE=/dev/null", "PYTHONDONTWRITEBYTECODE=1",
		"CARGO_HOME="+home+"/.cargo",
	)
	return append(out, caches...)
}
