package app

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/workspace"
)

// slotInside resolves a path operand of a command against a command
// grant's slot when the grant is matched (policy.Inside): dir is the
// working folder as a Plan target ("rel" in the default root, "name:rel"
// elsewhere), slot a folder relative to it ("." for dir itself) and op the
// operand as the model wrote it. The operand must resolve — symlinks
// followed, within the root — strictly inside the slot's real folder, to a
// place the file tools could write (not protected, not sensitive); a
// write slot's operand (newOnly) must not exist yet. Any doubt answers
// false, and the call asks.
func slotInside(ws *workspace.Workspace) policy.Inside {
	return func(dir, slot, op string, newOnly bool) bool {
		roots := ws.Roots()
		if len(roots) == 0 {
			return false
		}
		rootName, rel := roots[0].Name, dir
		if n, r, ok := strings.Cut(dir, ":"); ok {
			rootName, rel = n, r
		}
		base := path.Join(rel, slot)
		target := path.Join(rel, op)
		bp, err := ws.PathIn(rootName, base)
		if err != nil {
			return false
		}
		tp, err := ws.PathIn(rootName, target)
		if err != nil {
			return false
		}
		breal, err := ws.Real(bp)
		if err != nil {
			return false
		}
		treal, err := ws.Real(tp)
		if err != nil || treal.Root != breal.Root {
			return false
		}
		if breal.Rel != "." && !strings.HasPrefix(treal.Rel, breal.Rel+"/") {
			return false
		}
		if treal.Rel == "." || treal.Rel == breal.Rel {
			return false
		}
		if ws.Sensitive(treal.Root, treal.Rel) || ws.CheckWrite(treal) != nil {
			return false
		}
		if newOnly {
			if _, err := ws.Lstat(treal); !errors.Is(err, fs.ErrNotExist) {
				return false // it exists (or cannot be told): not a new file
			}
		}
		return true
	}
}
