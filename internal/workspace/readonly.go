package workspace

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// nest checks how the roots overlap and records, in each read-only root,
// the roots inside it. Two roots may overlap only when one lies strictly
// inside the other and the outer one is read-only; the inner one is then
// left out of the outer one (nestedRels), so a file has one policy target.
func nest(roots []*root) error {
	for i, a := range roots {
		for _, b := range roots[i+1:] {
			outer, inner := a, b
			if within(b.real, a.real) {
				outer, inner = b, a
			} else if !within(a.real, b.real) {
				continue
			}
			if outer.real == inner.real || !outer.readOnly {
				return fmt.Errorf("open workspace: roots %q (%s) and %q (%s) overlap; make them disjoint, or make the outer one read-only (access = \"ro\"): a root may lie inside a read-only one",
					a.name, a.path, b.name, b.path)
			}
			rel, err := filepath.Rel(outer.real, inner.real)
			if err != nil {
				return fmt.Errorf("open workspace: roots %q and %q: %w", outer.name, inner.name, err)
			}
			outer.nested = append(outer.nested, nestedRoot{rel: filepath.ToSlash(rel), name: inner.name})
		}
	}
	return nil
}

// nestedRels are r's nested roots as protected locations.
func nestedRels(r *root) []string {
	var out []string
	for _, n := range r.nested {
		if !slices.Contains(out, n.rel) {
			out = append(out, n.rel)
		}
	}
	return out
}

// nestedAt returns the nested root holding rel, if any.
func (r *root) nestedAt(rel string) (string, bool) {
	for _, n := range r.nested {
		if rel == n.rel || strings.HasPrefix(rel, n.rel+"/") {
			return n.name, true
		}
	}
	return "", false
}

// readOnlyRefusal is the error for a write to a read-only root.
func readOnlyRefusal(op string, p Path) error {
	return fmt.Errorf("%s %s: %w: workspace root %q is read-only (access = \"ro\" in config); tools may read it but never change it", op, p, ErrReadOnly, p.Root)
}

// refuseRead is the error for a read of a protected location rel (as
// written or where it really leads): another root nested in this one, or
// homard's own files.
func (r *root) refuseRead(op string, p Path, rel string) error {
	if name, ok := r.nestedAt(rel); ok {
		return fmt.Errorf("%s %s: %w: it lies in workspace root %q; name it in that root", op, p, ErrProtected, name)
	}
	if name, ok := r.nestedAt(p.Rel); ok {
		return fmt.Errorf("%s %s: %w: it lies in workspace root %q; name it in that root", op, p, ErrProtected, name)
	}
	return readRefusal(op, p)
}

// OffLimits returns the absolute paths inside the named root that no tool
// may reach: homard's own files (Options.Protected, the checkpoints) and
// the other roots nested in it. A command running in that root must see
// them hidden (sandbox.Spec.Hide); they are named under the root's path as
// configured. The list may hold paths that do not exist.
func (w *Workspace) OffLimits(rootName string) []string {
	r, err := w.root(rootName)
	if err != nil {
		return nil
	}
	var out []string
	for _, rel := range r.protected {
		if rel == "." {
			continue // the root itself: every access is refused anyway
		}
		p := filepath.Join(r.path, filepath.FromSlash(rel))
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
