package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Folders of a root's persistent cache (Caches.Dir), and where the
// command sees them: Spec.Cache is shown at $HOME/.build-cache.
const (
	cacheView    = ".build-cache"
	cacheGoBuild = "go-build" // GOCACHE: written only by Caches.Refresh
	cacheGoMod   = "gomod"    // GOMODCACHE: never written by a sandboxed process
	cacheNPM     = "npm"      // npm_config_cache: likewise
	cachePip     = "pip"      // PIP_CACHE_DIR: likewise
)

// DefaultRefreshTimeout bounds one Caches.Refresh (both of its commands).
const DefaultRefreshTimeout = 3 * time.Minute

// Caches keeps a warm build cache per workspace root, under one folder of
// homard's (its data folder's "cache"), without letting a command poison
// it: a command sees its root's cache through Spec.Cache, read-only
// beneath a layer that dies with the run, and only Refresh — homard's own
// fixed, compile-only warm-up — writes the Go build cache. See
// docs/ARCHITECTURE.md, "Warm build caches".
type Caches struct {
	dir     string
	timeout time.Duration

	ctx    context.Context // ends with Close; parent of every background refresh
	cancel context.CancelFunc
	wg     sync.WaitGroup // the background refreshes (Schedule)

	mu      sync.Mutex // guards the fields below
	closed  bool
	queued  map[string]*Warmup     // per cache folder: the refresh to run after the current one
	running map[string]bool        // per cache folder: a background refresh is running
	serial  map[string]*sync.Mutex // per cache folder: one Refresh at a time
}

// NewCaches returns the caches kept under dir (created 0700 on first
// use). timeout bounds each refresh; zero means DefaultRefreshTimeout.
// Close ends the background refreshes.
func NewCaches(dir string, timeout time.Duration) *Caches {
	if timeout <= 0 {
		timeout = DefaultRefreshTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Caches{dir: filepath.Clean(dir), timeout: timeout, ctx: ctx, cancel: cancel,
		queued: map[string]*Warmup{}, running: map[string]bool{}, serial: map[string]*sync.Mutex{}}
}

// RootID names root's cache folder: the root's base name (for a person
// reading the folder) and 16 hex digits of the SHA-256 of its absolute
// path, so two roots never share a cache and a moved root starts cold.
func RootID(root string) string {
	sum := sha256.Sum256([]byte(root))
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(root))
	if len(base) > 32 {
		base = base[:32]
	}
	return strings.TrimLeft(base, ".") + "-" + hex.EncodeToString(sum[:8])
}

// Dir returns root's cache folder, made (0700, with its go-build, gomod,
// npm and pip folders) if missing; root must be absolute and clean. It
// returns "" without an error when the folder cannot be shown to a
// command (it lies inside root, root inside it, or its path holds a
// character an overlay mount cannot name): the command then runs with
// cold caches, as without Caches.
func (c *Caches) Dir(root string) (string, error) {
	if c == nil {
		return "", nil
	}
	dir := filepath.Join(c.dir, RootID(root))
	if !filepath.IsAbs(root) || dir == root || strings.HasPrefix(dir, root+"/") || strings.HasPrefix(root, dir+"/") ||
		strings.ContainsAny(dir, ",:\\") {
		return "", nil
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return "", fmt.Errorf("create the build-cache folder: %w", err)
	}
	for _, sub := range []string{"", cacheGoBuild, cacheGoMod, cacheNPM, cachePip} {
		p := filepath.Join(dir, sub)
		if err := os.Mkdir(p, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create the build-cache folder: %w", err)
		}
		// A symlink would aim the refresh's writable bind elsewhere; only
		// homard makes these, so one is refused, not followed.
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("build-cache folder %s is not a folder", p)
		}
	}
	// The overlay names its lower layer by path: no symlink in it either.
	if real, err := filepath.EvalSymlinks(dir); err != nil || real != dir {
		return "", nil
	}
	return dir, nil
}

// Warmup is what Refresh compiles: everything is chosen by homard, none
// of it by the model.
type Warmup struct {
	// Backend runs the warm-up; the host backend is refused (it has no
	// view to make the root read-only and the cache the only writable
	// place).
	Backend Backend
	// Go is the absolute, resolved path of the go command the owner's
	// command ran: on the system path or commands.path, never inside a
	// writable root.
	Go string
	// Root is the workspace root, Dir the folder (inside it) holding the
	// module to compile; both absolute and clean.
	Root, Dir string
	// ProgramDirs are shown read-only, as for the command (Spec.ProgramDirs).
	ProgramDirs []string
	// Hold takes the root's lock (so no change lands while the tree is
	// compiled: an entry's key and its object must come from the same
	// files) and lists the paths to hide, as for a command: a hidden file
	// compiled into the cache (go:embed) would be readable there. It
	// returns the function that releases the lock.
	Hold func(ctx context.Context) (hide []string, release func(), err error)
}

// warmupArgs are the two fixed commands of a refresh: compile every
// package and its test binary while running nothing (-exec replaces
// running a test binary with /bin/true, -run=^$ would select no test
// anyway, -count=1 writes no test result to the cache: a cached "ok"
// would report a test that never ran), then build every package (those
// without tests too).
var warmupArgs = [][]string{
	{"test", "-count=1", "-run=^$", "-exec=/bin/true", "./..."},
	{"build", "./..."},
}

// warmupEnv is the refresh's whole environment (cleanEnv adds the home
// and cache variables): nothing of homard's or the owner's, nothing from
// the root. GOFLAGS is set so no other flags apply (no -toolexec, no
// -overlay, no -mod=mod); -buildvcs=false runs no git. GOWORK=off ignores
// a go.work; GOTOOLCHAIN=local keeps this go whatever go.mod's toolchain
// line says; GOPROXY=off downloads nothing; GOENV=off reads no go env
// file.
//
// cgo: CC, CXX and PKG_CONFIG are /bin/false, so no C compiler or
// pkg-config ever runs and a package with C code fails to compile (it is
// not warmed). CGO_ENABLED is what a command's go picks by itself (1 when
// gcc is on the fixed system path): it is part of every test binary's
// and command's build information, so a different value would leave
// their main package cold.
func warmupEnv(goBin string) []string {
	cgo := "0"
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if fi, err := os.Stat(filepath.Join(d, "gcc")); err == nil && fi.Mode().IsRegular() {
			cgo = "1"
			break
		}
	}
	return []string{
		"PATH=" + filepath.Dir(goBin) + ":/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8",
		"GOFLAGS=-buildvcs=false", "GOWORK=off", "CGO_ENABLED=" + cgo,
		"CC=/bin/false", "CXX=/bin/false", "PKG_CONFIG=/bin/false",
	}
}

// Refresh runs homard's warm-up of w.Root's cache and waits for it: under
// w.Hold, with w.Root read-only, no network, the persistent go-build
// folder the only writable one that outlives the run, it runs
// `go test -count=1 -run=^$ -exec=/bin/true ./...` then `go build ./...`
// in w.Dir with warmupEnv. Compiling runs no code of the tree (Go runs no
// package code at build time; cgo is off), so what it adds is the
// toolchain's own output for the files as they are. One Refresh per root
// at a time; the whole refresh is bounded by the Caches' timeout. A
// compile error is not an error: the entries of what did compile stay.
func (c *Caches) Refresh(ctx context.Context, w Warmup) error {
	if w.Backend == nil || w.Backend.Name() == "host" {
		return fmt.Errorf("%w: a cache refresh needs a sandboxed backend", ErrUnavailable)
	}
	if !absClean(w.Go) {
		return fmt.Errorf("%w: go program %q must be absolute and clean", ErrInvalidSpec, w.Go)
	}
	if w.Go == w.Root || strings.HasPrefix(w.Go, w.Root+"/") {
		return fmt.Errorf("%w: go program %q lies in the root it would compile", ErrInvalidSpec, w.Go)
	}
	dir, err := c.Dir(w.Root)
	if err != nil || dir == "" {
		return err
	}
	serial := c.serialFor(dir)
	serial.Lock()
	defer serial.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var hide []string
	if w.Hold != nil {
		h, release, err := w.Hold(ctx)
		if err != nil {
			return fmt.Errorf("refresh the build cache: %w", err)
		}
		defer release()
		hide = h
	}
	for _, args := range warmupArgs {
		left := time.Until(deadlineOf(ctx))
		if left <= 0 {
			return fmt.Errorf("refresh the build cache: %w", context.DeadlineExceeded)
		}
		res, err := w.Backend.Run(ctx, Spec{
			Path: w.Go, Args: args, Dir: w.Dir, Root: w.Root, Env: warmupEnv(w.Go),
			Timeout: left, MaxOutput: 16 << 10, Mode: ModeReadOnly, Hide: hide,
			ProgramDirs: w.ProgramDirs, Cache: dir, cacheRefresh: true,
			Limits: Limits{CPUSeconds: uint64(left/time.Second) + 1, MemoryBytes: 2 << 30,
				TreeMemoryBytes: DefaultTreeMemoryBytes, Processes: 512},
		})
		if res.Changes != nil {
			res.Changes.Close()
		}
		if err != nil {
			return fmt.Errorf("refresh the build cache: %w", err)
		}
		if res.TimedOut {
			return fmt.Errorf("refresh the build cache: %w", context.DeadlineExceeded)
		}
	}
	return nil
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline() // always set: Refresh adds its timeout
	return d
}

func (c *Caches) serialFor(dir string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.serial[dir]
	if m == nil {
		m = &sync.Mutex{}
		c.serial[dir] = m
	}
	return m
}

// Schedule runs Refresh(w) in the background and returns at once, so the
// command's result is never delayed by it. While a refresh of the same
// root runs, the latest w waits and runs after it (earlier waiting ones
// are dropped: the later one compiles the newer tree). A failure leaves
// the cache as it was plus what did compile (see docs/ARCHITECTURE.md);
// it is not reported. After Close it does nothing.
func (c *Caches) Schedule(w Warmup) {
	if c == nil {
		return
	}
	dir, err := c.Dir(w.Root)
	if err != nil || dir == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	if c.running[dir] {
		c.queued[dir] = &w
		return
	}
	c.running[dir] = true
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for next := &w; next != nil; {
			_ = c.Refresh(c.ctx, *next)
			c.mu.Lock()
			next = c.queued[dir]
			delete(c.queued, dir)
			if next == nil || c.closed {
				next = nil
				delete(c.running, dir)
			}
			c.mu.Unlock()
		}
	}()
}

// Wait returns when no background refresh is running or waiting.
func (c *Caches) Wait() {
	if c != nil {
		c.wg.Wait()
	}
}

// Close cancels the background refreshes (a cancelled one keeps what it
// compiled) and waits for them to end. Schedule does nothing after it.
func (c *Caches) Close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}
