package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// writeTemp matches the temp files WriteFile creates next to the file it
// replaces (see replace): nothing else is ever removed by SweepTemp.
var writeTemp = regexp.MustCompile(`^\.homard-[0-9a-f]{16}\.tmp$`)

// Sweep is what SweepTemp did.
type Sweep struct {
	Removed []string // targets ("rel" or "name:rel") of the temp files removed
	Left    int      // stray-looking temp files left: too young, or being written
	// Truncated is set when a root held more entries than the walk's
	// bound; the rest of it was not looked at.
	Truncated bool
}

// SweepOptions bound a sweep. Zero values mean the defaults.
type SweepOptions struct {
	// MinAge is how old a temp file must be to be removed. Zero means two
	// minutes: WriteFile writes at most MaxFileBytes, which takes
	// milliseconds, and keeps the file locked while it does.
	MinAge time.Duration
	// MaxEntries bounds the directory entries looked at per root. Zero
	// means 20,000.
	MaxEntries int
}

// SweepTemp removes the temp files a killed WriteFile left in the roots
// (.homard-<16 hex digits>.tmp, regular files only), walking each root
// through its os.Root without following symlinks and without entering
// .git, node_modules or homard's own protected folders. A file is removed
// only when it is older than MinAge and nobody holds its lock — WriteFile
// locks its temp file (flock) from creation to rename — so a write in
// progress in another process is never touched. Run it at start.
func (w *Workspace) SweepTemp(o SweepOptions) (Sweep, error) {
	if o.MinAge <= 0 {
		o.MinAge = 2 * time.Minute
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 20_000
	}
	var sw Sweep
	cutoff := w.cps.now().Add(-o.MinAge)
	var errs []error
	for _, r := range w.roots {
		if r.readOnly {
			continue // homard never writes there, so it left nothing there
		}
		seen := 0
		err := fs.WalkDir(r.fs.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				if rel == "." {
					return err
				}
				return nil // an unreadable folder is skipped, not fatal
			}
			if seen++; seen > o.MaxEntries {
				sw.Truncated = true
				return fs.SkipAll
			}
			if d.IsDir() {
				if rel != "." && (strings.EqualFold(d.Name(), ".git") || d.Name() == "node_modules" || r.protectedRel(rel)) {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || !writeTemp.MatchString(d.Name()) {
				return nil
			}
			switch removed, err := r.removeStale(rel, cutoff); {
			case err != nil:
				errs = append(errs, err)
			case removed:
				p := Path{Root: r.name, Rel: rel, inDefault: r.inDefault}
				sw.Removed = append(sw.Removed, p.Target())
			default:
				sw.Left++
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep root %s: %w", r.name, err))
		}
	}
	return sw, errors.Join(errs...)
}

// removeStale removes the temp file rel if it is older than cutoff and
// unlocked. It holds the lock while it removes, so a writer cannot take it
// in between.
func (r *root) removeStale(rel string, cutoff time.Time) (bool, error) {
	f, err := r.fs.OpenFile(rel, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, nil // gone meanwhile (renamed into place) or not ours
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
		return false, nil
	}
	if ok, err := tryFlock(f, unix.LOCK_EX); err != nil || !ok {
		return false, nil
	}
	// Still the same file under that name? A rename could have put
	// another one there since it was opened.
	now, err := r.fs.Lstat(rel)
	if err != nil || !os.SameFile(fi, now) {
		return false, nil
	}
	if err := r.fs.Remove(rel); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("remove stray temp file %s: %w", path.Join(r.name, rel), err)
	}
	return true, nil
}
