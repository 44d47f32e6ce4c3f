package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxScan bounds the walk that looks for .git entries in a workspace, so a
// huge tree cannot make every command slow; past it the run is refused
// (fail closed) rather than run with a .git left writable.
const maxScan = 200_000

// gitEntries returns every entry named ".git" under root — the root's own
// and those of nested repositories — without following symlinks and
// without descending into them. A writable .git lets a sandboxed command
// plant hooks or config that run later on the host, the next time the
// owner uses git there.
func gitEntries(root string) ([]string, error) {
	var out []string
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			if errors.Is(err, fs.ErrPermission) {
				return nil // unreadable for homard: not listable, and not bindable either
			}
			return err
		}
		if n++; n > maxScan {
			return fmt.Errorf("%w: the workspace %s has more than %d entries to scan for .git folders; use a smaller workspace root", ErrUnenforceable, root, maxScan)
		}
		if d.Name() == ".git" && p != root {
			out = append(out, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s for .git: %w", root, err)
	}
	return out, nil
}

// isSymlink reports whether p is a symlink (without following it).
func isSymlink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
