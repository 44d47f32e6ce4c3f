package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ApplyOptions say what was approved.
type ApplyOptions struct {
	// Grade are the options the change set was graded with for the card;
	// ApplyChanges grades again with them (Since is its own argument).
	Grade GradeOptions
	// Approved is the highest grade the owner or the policy approved. A
	// change set that now grades higher is not applied (ErrNotApproved).
	Approved Grade
	// Digest, if set, must equal the new grading's Digest: the changes
	// applied are exactly the ones the owner saw.
	Digest string
	// Lock is the root's lock if the caller holds it (LockRoot); nil
	// means ApplyChanges takes and releases it.
	Lock *RootLock
	// Run is the id of the tool run applying the change set (kept in its
	// journal, listed by AppliedBy); "" names none.
	Run string
	// By describes the change set in its checkpoint ("write_file
	// notes.md"); empty means "a command's changes".
	By string
}

// Applied says what ApplyChanges did.
type Applied struct {
	// CheckpointID undoes the whole change set (Rollback); "" when
	// nothing was applied.
	CheckpointID string
	// Graded is the grading ApplyChanges made under the root's lock.
	Graded *Graded
	// Skipped are refused changes left out (only when Approved is
	// GradeCritical; otherwise a refused change stops everything).
	Skipped []Change
}

// ApplyChanges applies a change set to the real root rootName, all or
// nothing, as one checkpoint. since is when the command started: a file the
// change set replaces or deletes that changed at or after it is a conflict
// (ErrConflict) and nothing is applied.
//
// Under the root's lock it grades the change set again against the root as
// it is now and refuses (ErrNotApproved) if that grade is above
// o.Approved or the digest differs; it then saves the old content of every
// file it replaces or deletes, writes the journal and the pinned
// checkpoint, and only then changes the root: every path is reached by
// openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS (never through a
// symlink, the owner's own included), files are written to a temp file
// next to their place and renamed in, only content and mode&0777&^022 are
// written. If a step fails (the owner changed a file at that moment) the
// steps done are undone and the checkpoint removed. A crash leaves the
// journal "applying"; RecoverChanges rolls it back.
func (w *Workspace) ApplyChanges(ctx context.Context, rootName string, cs *ChangeSet, since time.Time, o ApplyOptions) (Applied, error) {
	r, err := w.root(rootName)
	if err != nil {
		return Applied{}, err
	}
	if r.readOnly {
		return Applied{}, readOnlyRefusal("apply changes to", Path{Root: r.name, Rel: ".", inDefault: r.inDefault})
	}
	lock := o.Lock
	if lock == nil {
		if lock, err = w.LockRoot(ctx, rootName); err != nil {
			return Applied{}, err
		}
		defer lock.Unlock()
	} else if lock.root != rootName || lock.f == nil {
		return Applied{}, fmt.Errorf("apply changes: the lock given is not held for root %q", rootName)
	}
	dirfd, err := r.rootFd()
	if err != nil {
		return Applied{}, err
	}
	defer closeFd(dirfd)
	gopt := o.Grade
	gopt.Since = since
	g, err := w.grade(r, dirfd, cs, gopt)
	if err != nil {
		return Applied{}, fmt.Errorf("apply changes: %w", err)
	}
	res := Applied{Graded: g}
	switch {
	case g.Grade > o.Approved:
		return res, fmt.Errorf("apply changes: %w: graded %s, approved %s", ErrNotApproved, g.Grade, o.Approved)
	case o.Digest != "" && o.Digest != g.Digest:
		return res, fmt.Errorf("apply changes: %w: the changes differ from the ones shown", ErrNotApproved)
	case len(g.Conflicts) > 0:
		return res, fmt.Errorf("apply changes: %w: %s", ErrConflict, quoteList(g.Conflicts))
	}
	var todo []Change
	for _, c := range g.Changes {
		if c.Refused != "" {
			res.Skipped = append(res.Skipped, c)
			continue
		}
		todo = append(todo, c)
	}
	if len(todo) == 0 {
		return res, nil
	}
	if _, freeAfterPruning, err := w.CheckpointRoom(); err != nil {
		return res, err
	} else if g.CheckpointBytes > freeAfterPruning {
		return res, fmt.Errorf("apply changes: %w (%d bytes needed, %d free)", ErrNoRoom, g.CheckpointBytes, freeAfterPruning)
	}
	j, setLock, err := w.prepare(ctx, rootName, dirfd, todo, o.Run, o.By)
	if err != nil {
		return res, fmt.Errorf("apply changes: %w", err)
	}
	defer setLock.Close()
	defer w.stampApplied(rootName)() // applied.go
	for i := range j.Steps {
		if err := applyStep(dirfd, cs, todo[i], j.Steps[i]); err != nil {
			conflicts, uerr := w.undo(dirfd, j, i)
			if len(conflicts) == 0 && uerr == nil {
				w.cps.mu.Lock()
				w.cps.remove(Checkpoint{ID: j.ID, Kind: KindChanges})
				w.cps.mu.Unlock()
			} else {
				j.State = stateApplied // left for the owner to roll back
				w.cps.writeJournal(j)
			}
			return res, fmt.Errorf("apply changes: %s: %w", todo[i].Rel, errors.Join(err, uerr))
		}
		if w.changesHook != nil {
			if err := w.changesHook(i); err != nil {
				return res, err // a simulated crash: nothing more happens
			}
		}
	}
	// Every file placed and every entry renamed, in one syncfs: until it
	// returns the journal still says "applying", so a crash rolls back.
	if err := syncFSAt(dirfd); err != nil {
		return res, fmt.Errorf("apply changes: sync: %w", err)
	}
	j.State = stateApplied
	if err := w.cps.writeJournal(j); err != nil {
		return res, fmt.Errorf("apply changes: mark journal done: %w", err)
	}
	res.CheckpointID = j.ID
	w.cps.mu.Lock()
	perr := w.cps.prune()
	w.cps.mu.Unlock()
	return res, perr
}

// prepare saves the old content, writes the journal (naming run) and the
// pinned checkpoint, and returns the journal and the held lock of the
// change set's folder. On error nothing of it is left.
func (w *Workspace) prepare(ctx context.Context, rootName string, dirfd int, todo []Change, run, by string) (j *journal, setLock *os.File, err error) {
	c := w.cps
	c.mu.Lock()
	id, t := c.newID()
	c.mu.Unlock()
	unlockStore, _ := c.storeLock(false)
	defer unlockStore()
	dir := c.setDir(id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			if setLock != nil {
				setLock.Close()
			}
			os.Remove(c.journalPath(id))
			os.RemoveAll(dir)
		}
	}()
	if setLock, err = lockFile(ctx, filepath.Join(dir, ".lock")); err != nil {
		return nil, nil, err
	}
	j = &journal{ID: id, Root: rootName, Run: run, Time: t, State: stateApplying, Steps: make([]step, len(todo))}
	var saved int64
	for i, ch := range todo {
		s := step{Op: ch.Op.String(), Rel: ch.Rel, Kind: kindName(ch.Kind), Mode: uint32(ch.Mode.Perm()),
			Size: ch.Size, SHA256: ch.SHA256, Target: ch.Target, Tmp: tmpName(id, i)}
		if ch.Op != OpCreate && ch.old != nil {
			s.OldKind, s.OldMode, s.OldTarget = kindName(ch.old.kind), uint32(ch.old.mode.Perm()), ch.old.target
			if ch.old.kind == EntryFile {
				s.Saved, s.OldSize = strconv.Itoa(i), ch.old.size
				if s.OldSHA256, err = saveOld(dirfd, ch.Rel, ch.old, dir, s.Saved); err != nil {
					return nil, nil, err
				}
				saved += ch.old.size
			}
		}
		if ch.Op == OpDelete {
			s.Kind, s.Mode, s.Size, s.Target = s.OldKind, 0, 0, ""
		}
		j.Steps[i] = s
	}
	if err := syncFS(dir); err != nil { // the saved old contents, before the journal names them
		return nil, nil, err
	}
	if err := c.writeJournal(j); err != nil {
		return nil, nil, err
	}
	cp := Checkpoint{ID: id, Time: t, Root: rootName, Rel: ".", Size: saved, SHA256: stepsDigest(j.Steps),
		Target: fmt.Sprintf("%s: %s (%s)", rootName, cmp.Or(by, "a command's changes"), plural(len(j.Steps), "path")), Kind: KindChanges, Pinned: true, Paths: len(j.Steps)}
	if err := c.writeMeta(cp); err != nil {
		return nil, nil, err
	}
	return j, setLock, nil
}

// applyStep makes one change, checking first that the real path is still
// what grading saw.
func applyStep(dirfd int, cs *ChangeSet, c Change, s step) error {
	now, err := statBeneath(dirfd, c.Rel)
	if err != nil {
		return err
	}
	if !stillOld(c.old, now) {
		return fmt.Errorf("%w: %s changed while the change set was being applied", ErrConflict, c.Rel)
	}
	pfd, err := openBeneath(dirfd, path.Dir(c.Rel), oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	name := path.Base(c.Rel)
	if c.Op == OpDelete {
		flags := 0
		if c.Kind == EntryDir {
			flags = unix.AT_REMOVEDIR
		}
		err := unix.Unlinkat(pfd, name, flags)
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%w: folder %s has new content", ErrConflict, c.Rel)
		}
		return err
	}
	switch c.Kind {
	case EntryDir:
		if c.Op == OpCreate {
			if err := unix.Mkdirat(pfd, name, 0o700); err != nil {
				return err
			}
		}
		return chmodDir(dirfd, c.Rel, uint32(c.Mode.Perm()))
	case EntryFile:
		return placeFile(pfd, name, s.Tmp, cs.Open(cs.Entries[c.entry]), "", uint32(c.Mode.Perm()), c.Op == OpCreate)
	case EntrySymlink:
		return placeSymlink(pfd, name, s.Tmp, c.Target, c.Op == OpCreate)
	}
	return fmt.Errorf("%s: cannot apply a %s", c.Rel, c.Kind)
}

// stillOld reports whether the real entry now is the one grading saw.
// A folder's times change with its content, so only its identity counts.
func stillOld(old, now *realStat) bool {
	if old == nil || now == nil {
		return old == now
	}
	if old.kind == EntryDir {
		return now.kind == EntryDir && now.ino == old.ino && now.dev == old.dev
	}
	return old.same(now)
}

// chmodDir sets a folder's mode through a descriptor.
func chmodDir(dirfd int, rel string, mode uint32) error {
	fd, err := openBeneath(dirfd, rel, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode)
}

// placeFile writes content to tmp next to name and renames it into place;
// noReplace fails if name exists. A non-empty wantSHA is checked.
func placeFile(pfd int, name, tmp string, content io.Reader, wantSHA string, mode uint32, noReplace bool) error {
	unix.Unlinkat(pfd, tmp, 0) // a leftover of an earlier attempt
	fd, err := unix.Openat(pfd, tmp, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = func() error {
		h := newHasher()
		if _, err := io.Copy(io.MultiWriter(f, h), content); err != nil {
			return err
		}
		if wantSHA != "" && h.hex() != wantSHA {
			return ErrCheckpointCorrupt
		}
		// Not synced here: the caller syncs the filesystem once after
		// its last step (apply and undo both run under a journal).
		return f.Chmod(os.FileMode(mode))
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = renameIn(pfd, tmp, name, noReplace)
	}
	if err != nil {
		unix.Unlinkat(pfd, tmp, 0)
	}
	return err
}

// placeSymlink creates a symlink at tmp and renames it into place.
func placeSymlink(pfd int, name, tmp, target string, noReplace bool) error {
	unix.Unlinkat(pfd, tmp, 0)
	if err := unix.Symlinkat(target, pfd, tmp); err != nil {
		return err
	}
	if err := renameIn(pfd, tmp, name, noReplace); err != nil {
		unix.Unlinkat(pfd, tmp, 0)
		return err
	}
	return nil
}

func renameIn(pfd int, tmp, name string, noReplace bool) error {
	if noReplace {
		err := renameNoReplace(pfd, tmp, name)
		if errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("%w: %s appeared while the change set was being applied", ErrConflict, name)
		}
		return err
	}
	return unix.Renameat(pfd, tmp, pfd, name)
}

// quoteList quotes paths for an error message, showing at most ten.
func quoteList(paths []string) string {
	var b strings.Builder
	for i, p := range paths {
		if i == 10 {
			fmt.Fprintf(&b, " … and %d more", len(paths)-10)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%q", p)
	}
	return b.String()
}

// plural: "1 path", "3 paths".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
