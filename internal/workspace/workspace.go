// Package workspace is homard's confined file access: every file a tool
// reads or writes goes through it.
//
// Contract:
//   - A Workspace has one or more named roots, each opened as an os.Root.
//     Every access goes through that os.Root (never by joining strings onto
//     the root path), so a symlink that leads outside a root — including one
//     swapped in after a path was resolved — is refused when the file is
//     opened.
//   - Resolve turns the path a model sent into a Path (root name + cleaned,
//     slash-separated relative path) or refuses it with a sentinel error
//     from errors.go: empty, NUL or control characters, any ".." element,
//     percent-encoded dots/slashes/backslashes, an absolute path outside
//     every root, or a symlink leading outside the root.
//   - WriteFile is atomic (temp file, fsync, rename in the same directory),
//     never writes through a symlink, and refuses protected locations (any
//     ".git" element, Options.Protected, the checkpoint directory) after
//     checking the real location of the opened parent directory, not just
//     the path text.
//   - homard's own files (Options.Protected, the checkpoint directory) are
//     invisible to reads as well: ReadFile, ReadDir, Stat, Lstat and the
//     fs.FS from FS refuse them with ErrProtected, judged by the real
//     location of the opened file (/proc/self/fd), and directory listings
//     leave them out. Git metadata stays readable. Which protected paths
//     lie inside each root is worked out once at Open; in a root that holds
//     none, reads pay nothing for the check.
//   - Sensitive files (credentials: DefaultSensitive, Options.Sensitive;
//     Sensitive and (*Workspace).Sensitive) are neither read nor written,
//     judged by the path as written and by the real location of the opened
//     file or its parent, so a symlink to .env or a .env reached through a
//     symlinked folder is refused (ErrSensitive); listings show them and
//     callers mark them. The owner allows one path with
//     Options.AllowSensitive.
//   - A hard link to one of homard's own files is refused by reads and
//     writes (ErrProtected): their (device, inode) pairs are collected at
//     Open, and a file with several links is compared again with the
//     protected paths as they are now.
//   - A read-only root (Root.ReadOnly) is never written: every write
//     refuses with ErrReadOnly. Only a read-only root may hold another
//     root; the inner one is invisible from it, like homard's own files,
//     and OffLimits names both for a command's view to mask.
//   - Real resolves a Path's symlinks inside its root; plans add it to
//     their targets so grants and rules match where a path really leads.
//   - Before an existing file is replaced its old content is saved as a
//     checkpoint, bounded by count and bytes; Rollback restores one only
//     when given the hash its preview shows.
//   - A command's effects arrive as a change set (changes*.go): the upper
//     layer of its overlay, read by ReadChanges, graded against the real
//     root by Grade, applied all or nothing by ApplyChanges through a
//     journal and one pinned checkpoint, by descriptor and never through a
//     symlink; Rollback undoes it as a whole and RecoverChanges rolls back
//     one a crash interrupted.
//
// The package imports no other homard package. It is Linux-only: verifying
// the real location of a directory reads /proc/self/fd.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Root is one named directory tree a Workspace may touch.
type Root struct {
	// Name identifies the root in Path.Root and in policy targets
	// ("name:rel"). It must be non-empty and may not contain ':', '/' or
	// whitespace.
	Name string
	// Path is the directory. A relative path is made absolute against the
	// current directory when the Workspace is opened.
	Path string
	// ReadOnly makes the root readable only: every write to it (WriteFile,
	// ApplyChanges, a rollback) fails with ErrReadOnly, whatever the mode
	// or grants. Another root may lie inside a read-only root; it is then
	// reached only by its own name (see Options.Roots).
	ReadOnly bool
}

// Options configure a Workspace.
type Options struct {
	// Roots are the directories tools may use; the first is the default
	// root, where relative paths are resolved. At least one is required and
	// roots may not overlap (one inside another would give one file two
	// policy targets), except that a root may lie inside a ReadOnly one
	// (the owner's home read-only, a project in it writable): the inner
	// root is then invisible in the outer one, as homard's own files are,
	// so each file still has one target.
	Roots []Root
	// Protected are absolute paths that are never written nor read, nor
	// anything under them: homard's config file, its data directory, its
	// secrets. They may lie inside a root, where they are left out of
	// listings. Relative entries are made absolute. The checkpoint
	// directory is always protected, whether listed or not.
	//
	// A protected directory that strictly contains a root does not protect
	// that root: the owner chose that folder as a workspace (the XDG layout
	// puts the default workspace inside the data directory), and the os.Root
	// keeps every access inside it, away from the rest of the protected
	// directory. A root that is itself a protected path is wholly refused.
	Protected []string
	// Sensitive are patterns of credential files added to DefaultSensitive
	// (same syntax: slash-separated path.Match elements matched, without
	// regard to case, against any run of a path's elements). Nil means the
	// defaults alone.
	Sensitive []string
	// AllowSensitive are paths the owner lets tools use although they match
	// a sensitive pattern: "rel" in the default root or "name:rel" in
	// another, clean and relative to the root, compared exactly with the
	// real path (symlinks resolved); a folder allows what is in it. Nil
	// means none.
	AllowSensitive []string
	// MaxFileBytes caps the size of a file read or written, and of the old
	// content a replacement checkpoints. Zero means 8 MiB.
	MaxFileBytes int64
	// CheckpointDir holds saved file contents for rollback. Required: it is
	// created (mode 0700) if missing.
	CheckpointDir string
	// MaxCheckpoints bounds how many checkpoints are kept; the oldest are
	// pruned. Zero means 100.
	MaxCheckpoints int
	// MaxCheckpointBytes bounds the total size of saved contents; the
	// oldest are pruned. Zero means 64 MiB. It may not be below
	// MaxFileBytes, so the newest checkpoint always fits.
	MaxCheckpointBytes int64
	// Now stamps checkpoints. Nil means time.Now.
	Now func() time.Time
}

// Defaults applied to zero Options fields.
const (
	DefaultMaxFileBytes       = 8 << 20
	DefaultMaxCheckpoints     = 100
	DefaultMaxCheckpointBytes = 64 << 20
)

// Workspace is a set of opened roots plus the checkpoint store. It is safe
// for concurrent use.
type Workspace struct {
	roots   []*root // roots[0] is the default; immutable after Open
	maxFile int64
	cps     *checkpoints
	sens    *sensitivity // immutable after Open

	// testHook, if set, runs at named points of WriteFile ("checked":
	// after the pre-check, before the parent is opened; "rename": before
	// the temp file is renamed) so tests can change the tree there.
	testHook func(point string)
	// changesHook, if set, runs after step i of ApplyChanges; an error
	// stops it there as a crash would (tests of RecoverChanges).
	changesHook func(i int) error
}

type root struct {
	name string
	path string // cleaned absolute path as configured
	real string // path with symlinks evaluated at Open
	fs   *os.Root
	// protected lists the protected locations inside this root as clean
	// slash paths relative to real ("." when the root itself is
	// protected). Empty in the common case: then no path walk runs.
	protected []string
	sens      *sensitivity    // the workspace's, shared by every root
	prot      *protectedFiles // homard's files by inode, shared
	inDefault bool            // this is the default root
	readOnly  bool            // Root.ReadOnly: nothing is ever written here
	// nested are the other roots inside this (read-only) one, as clean
	// slash paths relative to real, with their names; they are also in
	// protected, so reads and listings leave them out.
	nested []nestedRoot
}

// nestedRoot is another root lying inside a read-only root.
type nestedRoot struct{ rel, name string }

// Open opens every root and the checkpoint directory.
func Open(o Options) (*Workspace, error) {
	if len(o.Roots) == 0 {
		return nil, errors.New("open workspace: no roots configured; add at least one workspace root")
	}
	if o.CheckpointDir == "" {
		return nil, errors.New("open workspace: checkpoint directory is not set; give homard a data directory for checkpoints")
	}
	w := &Workspace{maxFile: o.MaxFileBytes}
	if w.maxFile <= 0 {
		w.maxFile = DefaultMaxFileBytes
	}
	maxCP, maxCPBytes := o.MaxCheckpoints, o.MaxCheckpointBytes
	if maxCP <= 0 {
		maxCP = DefaultMaxCheckpoints
	}
	if maxCPBytes <= 0 {
		maxCPBytes = DefaultMaxCheckpointBytes
	}
	if maxCPBytes < w.maxFile {
		return nil, fmt.Errorf("open workspace: checkpoint byte limit %d is below the file size limit %d; raise it", maxCPBytes, w.maxFile)
	}
	ok := false
	defer func() {
		if !ok {
			w.Close()
		}
	}()
	seen := make(map[string]bool)
	for _, rc := range o.Roots {
		if !validRootName(rc.Name) {
			return nil, fmt.Errorf("open workspace: invalid root name %q; use letters, digits, '-', '_' or '.'", rc.Name)
		}
		if seen[rc.Name] {
			return nil, fmt.Errorf("open workspace: root name %q is used twice", rc.Name)
		}
		seen[rc.Name] = true
		abs, err := filepath.Abs(rc.Path)
		if err != nil {
			return nil, fmt.Errorf("open workspace root %q: %w", rc.Name, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return nil, fmt.Errorf("open workspace root %q (%s): %w; create the directory or fix the config", rc.Name, abs, err)
		}
		r, err := os.OpenRoot(real)
		if err != nil {
			return nil, fmt.Errorf("open workspace root %q (%s): %w", rc.Name, abs, err)
		}
		w.roots = append(w.roots, &root{name: rc.Name, path: abs, real: real, fs: r, readOnly: rc.ReadOnly})
	}
	if err := nest(w.roots); err != nil {
		return nil, err
	}
	cpDir, err := filepath.Abs(o.CheckpointDir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: checkpoint directory: %w", err)
	}
	if err := os.MkdirAll(cpDir, 0o700); err != nil {
		return nil, fmt.Errorf("open workspace: create checkpoint directory: %w", err)
	}
	var protected []string
	for _, p := range append([]string{cpDir}, o.Protected...) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("open workspace: protected path %q: %w", p, err)
		}
		protected = append(protected, abs, realPath(abs))
	}
	prot := newProtectedFiles(protected, w.roots)
	if w.sens, err = newSensitivity(o.Sensitive, o.AllowSensitive, w.roots); err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	for i, r := range w.roots {
		r.protected = append(protectedIn(r, protected), nestedRels(r)...)
		r.sens, r.prot, r.inDefault = w.sens, prot, i == 0
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	w.cps = &checkpoints{dir: cpDir, max: maxCP, maxBytes: maxCPBytes, now: now}
	ok = true
	return w, nil
}

// Close releases the roots. The Workspace must not be used afterwards.
func (w *Workspace) Close() error {
	var errs []error
	for _, r := range w.roots {
		errs = append(errs, r.fs.Close())
	}
	return errors.Join(errs...)
}

// Roots returns the configured roots, default first, with absolute paths.
func (w *Workspace) Roots() []Root {
	out := make([]Root, len(w.roots))
	for i, r := range w.roots {
		out[i] = Root{Name: r.name, Path: r.path, ReadOnly: r.readOnly}
	}
	return out
}

// ReadOnly reports whether the named root is read-only (false for an
// unknown root).
func (w *Workspace) ReadOnly(rootName string) bool {
	r, err := w.root(rootName)
	return err == nil && r.readOnly
}

// MaxFileBytes is the effective file size limit.
func (w *Workspace) MaxFileBytes() int64 { return w.maxFile }

func (w *Workspace) root(name string) (*root, error) {
	for _, r := range w.roots {
		if r.name == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("root %q: %w", name, ErrUnknownRoot)
}

func validRootName(s string) bool {
	if s == "" || len(s) > 64 || s == "." || s == ".." {
		return false
	}
	return strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) < 0
}

// within reports whether p is base or lies under it. Both are clean
// absolute paths.
func within(base, p string) bool {
	if base == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == base || strings.HasPrefix(p, base+"/")
}

// realPath evaluates symlinks in the longest existing prefix of abs and
// appends the rest, so a protected path that does not exist yet is still
// matched at its real future location.
func realPath(abs string) string {
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
