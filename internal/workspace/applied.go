package workspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// When changes were last applied to a root is kept in the checkpoint
// directory as applied/<root>: 8 bytes, the newest stamp in unix
// nanoseconds, big-endian. Every change homard makes to a root — a file
// written (WriteFile, a file rollback), a change set applied, rolled back
// or recovered — stamps it before it starts and again when it ends, so a
// crash in the middle still leaves a stamp, and a reader that saw the
// first stamp sees a later one once the change is done. The stamp only
// grows: it is read and raised under an exclusive lock on the file, so two
// processes stamping at once keep the later time.
//
// The arbiter compares it with an approval's creation time: approval to
// run workspace code lapses when the code may have changed since the card
// was drawn.

const appliedDir = "applied"

// LastApplied returns when changes were last applied in the root a plan
// target names ("rel" in the default root, "name:rel" in another; a target
// that could name either gives the later of both), the zero time if never.
func (w *Workspace) LastApplied(target string) (time.Time, error) {
	var latest time.Time
	for _, r := range w.rootsOfTarget(target) {
		t, err := w.readApplied(r.name)
		if err != nil {
			return time.Time{}, err
		}
		if t.After(latest) {
			latest = t
		}
	}
	return latest, nil
}

// rootsOfTarget is the root(s) a plan target may name: the root whose
// name prefixes it, and the default root when the text could also be a
// path there (a default-root file may be called "docs:x").
func (w *Workspace) rootsOfTarget(target string) []*root {
	var out []*root
	if name, _, ok := strings.Cut(target, ":"); ok {
		for _, r := range w.roots {
			if r.name == name && !r.inDefault {
				out = append(out, r)
			}
		}
	}
	return append(out, w.roots[0])
}

func (w *Workspace) appliedPath(rootName string) string {
	return filepath.Join(w.cps.dir, appliedDir, rootName)
}

func (w *Workspace) readApplied(rootName string) (time.Time, error) {
	b, err := os.ReadFile(w.appliedPath(rootName))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("last change of root %s: %w", rootName, err)
	case len(b) != 8:
		// A torn or foreign file: say "just now", so approvals to run
		// code there lapse rather than survive a change.
		return w.cps.now(), nil
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC(), nil
}

// stampApplied records that changes are being applied to rootName now.
// It returns a func stamping again, for the end of the change:
//
//	defer w.stampApplied(name)()
//
// A failure to stamp is not a failure of the change; it only costs an
// approval its lapse, so it is ignored (doctor reads the stamps).
func (w *Workspace) stampApplied(rootName string) func() {
	w.raiseApplied(rootName)
	return func() { w.raiseApplied(rootName) }
}

func (w *Workspace) raiseApplied(rootName string) {
	dir := filepath.Join(w.cps.dir, appliedDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return
	}
	f, err := os.OpenFile(w.appliedPath(rootName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_ = withFd(f, func(fd int) error {
		err := unix.Flock(fd, unix.LOCK_EX)
		for errors.Is(err, unix.EINTR) {
			err = unix.Flock(fd, unix.LOCK_EX)
		}
		if err != nil {
			return err
		}
		var old [8]byte
		n, _ := unix.Pread(fd, old[:], 0)
		now := w.cps.now().UnixNano()
		if n == 8 && int64(binary.BigEndian.Uint64(old[:])) >= now {
			return nil
		}
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(now))
		if _, err := unix.Pwrite(fd, b[:], 0); err != nil {
			return err
		}
		return unix.Ftruncate(fd, 8)
	})
}
