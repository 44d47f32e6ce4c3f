package workspace

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// maxPathBytes is Linux's PATH_MAX; longer paths cannot be opened anyway.
const maxPathBytes = 4096

// Path is a location inside one root, produced by Resolve or ResolveIn.
type Path struct {
	Root string // root name
	Rel  string // cleaned, slash-separated, relative; "." is the root itself

	inDefault bool // set by Resolve/ResolveIn when Root is the default root
}

// Target is the string policy rules match: Rel in the default root,
// "name:Rel" in any other root. A Path not built by this package is
// treated as being in a non-default root.
func (p Path) Target() string {
	if p.inDefault {
		return p.Rel
	}
	return p.Root + ":" + p.Rel
}

// String is Target.
func (p Path) String() string { return p.Target() }

// Resolve maps the path a model sent to a Path. Relative paths are in the
// default root; absolute paths must lie (lexically) under a root's
// configured or real path. The path need not exist, but if a symlink on the
// way leads outside the root, Resolve refuses it. Refusals wrap a sentinel
// from errors.go.
func (w *Workspace) Resolve(p string) (Path, error) {
	if err := checkText(p); err != nil {
		return Path{}, fmt.Errorf("path %q: %w", p, err)
	}
	r, rel := w.roots[0], p
	if filepath.IsAbs(p) {
		clean := filepath.Clean(p)
		r = nil
		best := ""
		for _, c := range w.roots {
			// The longest matching base wins, in case a root's configured
			// path lies lexically under another root's.
			for _, base := range []string{c.path, c.real} {
				if within(base, clean) && len(base) > len(best) {
					r, best = c, base
					rel, _ = filepath.Rel(base, clean) // cannot fail: clean is under base
				}
			}
		}
		if r == nil {
			return Path{}, fmt.Errorf("path %q: %w", p, ErrOutside)
		}
	}
	rel = path.Clean(filepath.ToSlash(rel))
	return w.resolved(r, rel, p)
}

// ResolveIn re-resolves a Path given by root name and relative path, as a
// plan body stores it, applying every check Resolve applies.
func (w *Workspace) ResolveIn(rootName, rel string) (Path, error) {
	r, err := w.rootRel(rootName, rel)
	if err != nil {
		return Path{}, err
	}
	return w.resolved(r, rel, rel)
}

// PathIn names a Path by root name and relative path, as a plan body
// stores it, with the same lexical checks as ResolveIn but without asking
// the file system. It is for a tool's Run, whose very next operation goes
// through the os.Root (which refuses a path that leaves the root at that
// moment) and the protected-path checks on the opened file: a second
// check beforehand would only be older than the operation itself.
func (w *Workspace) PathIn(rootName, rel string) (Path, error) {
	r, err := w.rootRel(rootName, rel)
	if err != nil {
		return Path{}, err
	}
	return Path{Root: r.name, Rel: rel, inDefault: r == w.roots[0]}, nil
}

// rootRel is the lexical part of ResolveIn and PathIn: the root named
// rootName, once rel has passed checkRel.
func (w *Workspace) rootRel(rootName, rel string) (*root, error) {
	r, err := w.root(rootName)
	if err != nil {
		return nil, err
	}
	if err := checkRel(rel); err != nil {
		return nil, fmt.Errorf("path %q: %w", rel, err)
	}
	return r, nil
}

// Display is the string a model should use to name p again: Rel in the
// default root, the absolute path in any other root (Resolve maps both back).
func (w *Workspace) Display(p Path) string {
	r, err := w.root(p.Root)
	if err != nil || r == w.roots[0] {
		return p.Rel
	}
	return filepath.Join(r.path, filepath.FromSlash(p.Rel))
}

func (w *Workspace) resolved(r *root, rel, orig string) (Path, error) {
	if err := escapes(r, rel); err != nil {
		return Path{}, fmt.Errorf("path %q: %w", orig, err)
	}
	return Path{Root: r.name, Rel: rel, inDefault: r == w.roots[0]}, nil
}

// escapes asks the os.Root whether following rel leaves the root. A path
// that does not exist (yet) is fine; other errors are left for the actual
// operation to report, which goes through the os.Root again.
func escapes(r *root, rel string) error {
	_, err := r.fs.Stat(rel)
	if isEscape(err) {
		return ErrEscape
	}
	return nil
}

// isEscape recognises os.Root's refusal to leave the root anywhere in the
// error chain (MkdirAll nests PathErrors). os does not export the error, so
// it is matched by its exact text.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// checkText applies the checks on the raw text a model sent.
func checkText(p string) error {
	if p == "" {
		return ErrEmptyPath
	}
	if len(p) > maxPathBytes {
		return ErrTooLong
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == 0:
			return ErrNUL
		case c < 0x20 || c == 0x7f:
			return ErrControl
		}
	}
	low := strings.ToLower(p)
	for _, enc := range []string{"%2e", "%2f", "%5c", "%00"} {
		if strings.Contains(low, enc) {
			return ErrEncoded
		}
	}
	// strings.Cut rather than Split: this runs on every path of every
	// call, and Cut does not allocate.
	for rest, more := p, true; more; {
		var e string
		e, rest, more = strings.Cut(rest, "/")
		if e == ".." {
			return ErrDotDot
		}
	}
	return nil
}

// checkRel validates a relative path held in a Path or a plan body: the
// text checks plus being exactly the clean, relative form Resolve makes.
func checkRel(rel string) error {
	if err := checkText(rel); err != nil {
		return err
	}
	if strings.HasPrefix(rel, "/") || path.Clean(rel) != rel {
		return fmt.Errorf("%w: want a clean relative path", ErrOutside)
	}
	return nil
}

// elements splits a checked relative path; "." has none.
func elements(rel string) []string {
	if rel == "." {
		return nil
	}
	return strings.Split(rel, "/")
}

// check validates a Path from a caller and returns its root.
func (w *Workspace) check(p Path) (*root, error) {
	r, err := w.root(p.Root)
	if err != nil {
		return nil, err
	}
	if err := checkRel(p.Rel); err != nil {
		return nil, fmt.Errorf("path %q: %w", p.Rel, err)
	}
	return r, nil
}
