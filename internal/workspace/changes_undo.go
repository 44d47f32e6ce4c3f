package workspace

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Undoing a change set walks its journal backwards. Each step is undone
// only when the path holds what the step wrote (or still the old state,
// or a leftover temp file): anything else is a conflict, reported and left
// alone. The same code rolls back an applied change set on the owner's
// request and a half-applied one after a crash, since every step was a
// single rename, unlink or mkdir.

// undo undoes steps last..0 of j. conflicts describe paths left alone.
func (w *Workspace) undo(dirfd int, j *journal, last int) (conflicts []string, err error) {
	dir := w.cps.setDir(j.ID)
	deleted := map[string]*step{} // a type change deletes before it creates
	for i := range j.Steps[:last+1] {
		if s := &j.Steps[i]; s.Op == "delete" {
			deleted[s.Rel] = s
		}
	}
	for i := last; i >= 0; i-- {
		c, err := undoStep(dirfd, dir, j.Steps[i], deleted[j.Steps[i].Rel])
		if err != nil {
			return conflicts, fmt.Errorf("undo %s: %w", j.Steps[i].Rel, err)
		}
		if c != "" {
			conflicts = append(conflicts, c)
		}
	}
	if err := syncFSAt(dirfd); err != nil {
		return conflicts, fmt.Errorf("undo: sync: %w", err)
	}
	return conflicts, nil
}

// undoStep undoes one step; a non-empty conflict says why it was left.
// prior is the step that deleted what was at the same path before a
// create, if any: finding that old entry means the create never ran.
func undoStep(dirfd int, setDir string, s step, prior *step) (conflict string, err error) {
	parent, name := path.Dir(s.Rel), path.Base(s.Rel)
	pfd, err := openBeneath(dirfd, parent, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
		if s.Op == "create" {
			return "", nil // its folder is gone, and it with it
		}
		return fmt.Sprintf("%q: its folder is gone or is no longer a folder", s.Rel), nil
	}
	if err != nil {
		return "", err
	}
	defer unix.Close(pfd)
	unix.Unlinkat(pfd, s.Tmp, 0) // a leftover temp file, if any
	now, err := statBeneath(dirfd, s.Rel)
	if err != nil {
		return "", err
	}
	isNew, err := holds(dirfd, s.Rel, now, s.Kind, s.SHA256, s.Target)
	if err != nil {
		return "", err
	}
	isOld, err := holds(dirfd, s.Rel, now, s.OldKind, s.OldSHA256, s.OldTarget)
	if err != nil {
		return "", err
	}
	switch s.Op {
	case "create":
		if now == nil {
			return "", nil
		}
		if !isNew {
			if prior != nil && s.Op == "create" {
				if wasOld, err := holds(dirfd, s.Rel, now, prior.OldKind, prior.OldSHA256, prior.OldTarget); err != nil || wasOld {
					return "", err // not created yet: the old entry is still there
				}
			}
			return fmt.Sprintf("%q was changed after the command created it; left in place", s.Rel), nil
		}
		flags := 0
		if now.kind == EntryDir {
			flags = unix.AT_REMOVEDIR
		}
		err := unix.Unlinkat(pfd, name, flags)
		if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
			return fmt.Sprintf("folder %q holds files the command did not create; left in place", s.Rel), nil
		}
		return "", err
	case "modify":
		if s.Kind == "folder" {
			if now == nil || now.kind != EntryDir {
				return fmt.Sprintf("folder %q is gone", s.Rel), nil
			}
			return "", chmodDir(dirfd, s.Rel, s.OldMode)
		}
		if isOld && (now.kind != EntryFile || uint32(now.mode.Perm()) == s.OldMode) {
			return "", nil
		}
		if isOld || isNew || now == nil {
			return "", restore(pfd, name, s, setDir, false)
		}
		return fmt.Sprintf("%q was changed after the command wrote it; left in place", s.Rel), nil
	case "delete":
		if now != nil {
			if isOld {
				return "", nil
			}
			return fmt.Sprintf("%q: something else is there now; not restored", s.Rel), nil
		}
		if s.Kind == "folder" {
			if err := unix.Mkdirat(pfd, name, 0o700); err != nil {
				return "", err
			}
			return "", chmodDir(dirfd, s.Rel, s.OldMode)
		}
		return "", restore(pfd, name, s, setDir, true)
	}
	return "", fmt.Errorf("unknown step %q", s.Op)
}

// holds reports whether the real entry now is of kind with the given
// content hash (a file) or target (a symlink).
func holds(dirfd int, rel string, now *realStat, kind, sha, target string) (bool, error) {
	if now == nil || kind == "" || kindName(now.kind) != kind || now.kind.special() {
		return false, nil
	}
	switch now.kind {
	case EntrySymlink:
		return now.target == target, nil
	case EntryFile:
		got, err := hashBeneath(dirfd, rel)
		return got == sha, err
	}
	return true, nil
}

// restore puts back a step's old file or symlink.
func restore(pfd int, name string, s step, setDir string, noReplace bool) error {
	if s.OldKind == "symlink" {
		return placeSymlink(pfd, name, s.Tmp, s.OldTarget, noReplace)
	}
	f, err := os.Open(filepath.Join(setDir, s.Saved))
	if err != nil {
		return fmt.Errorf("saved content: %w", err)
	}
	defer f.Close()
	return placeFile(pfd, name, s.Tmp, f, s.OldSHA256, s.OldMode, noReplace)
}

// rollbackChanges undoes an applied change set (Rollback of a checkpoint
// of kind KindChanges).
func (w *Workspace) rollbackChanges(cp Checkpoint) error {
	j, err := w.cps.readJournal(cp.ID)
	if err != nil {
		return err
	}
	if stepsDigest(j.Steps) != cp.SHA256 {
		return fmt.Errorf("rollback %s: %w", cp.ID, ErrCheckpointCorrupt)
	}
	if j.State == stateUndone {
		return fmt.Errorf("rollback %s: the command's changes were already rolled back", cp.ID)
	}
	r, err := w.root(j.Root)
	if err != nil {
		return fmt.Errorf("rollback %s: %w", cp.ID, err)
	}
	if r.readOnly {
		return readOnlyRefusal("rollback "+cp.ID+" in", Path{Root: r.name, Rel: ".", inDefault: r.inDefault})
	}
	lock, err := w.LockRoot(context.Background(), j.Root)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	setLock, err := os.OpenFile(filepath.Join(w.cps.setDir(cp.ID), ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("rollback %s: %w", cp.ID, err)
	}
	defer setLock.Close()
	if ok, err := tryFlock(setLock, unix.LOCK_EX); err != nil || !ok {
		return fmt.Errorf("rollback %s: the change set is being applied right now; try again", cp.ID)
	}
	defer w.stampApplied(j.Root)()
	conflicts, err := w.undoAll(r, j)
	if err != nil {
		return fmt.Errorf("rollback %s: %w", cp.ID, err)
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("rollback %s: %w: %s", cp.ID, ErrConflict, strings.Join(conflicts, "; "))
	}
	j.State = stateUndone
	if err := w.cps.writeJournal(j); err != nil {
		return fmt.Errorf("rollback %s: %w", cp.ID, err)
	}
	cp.Pinned = false
	return w.cps.writeMeta(cp)
}

// undoAll undoes every step of j in its root r, whose lock the caller
// holds and whose change the caller stamps, and returns the changes it
// could not undo.
func (w *Workspace) undoAll(r *root, j *journal) (conflicts []string, err error) {
	dirfd, err := r.rootFd()
	if err != nil {
		return nil, err
	}
	defer closeFd(dirfd)
	return w.undo(dirfd, j, len(j.Steps)-1)
}

// Unpin marks a change set accepted: its checkpoint may now be pruned
// like any other.
func (w *Workspace) Unpin(id string) error {
	w.cps.mu.Lock()
	defer w.cps.mu.Unlock()
	cp, err := w.cps.load(id)
	if err != nil {
		return err
	}
	if !cp.Pinned {
		return nil
	}
	cp.Pinned = false
	return w.cps.writeMeta(cp)
}

// writeMeta writes a checkpoint's metadata durably.
func (c *checkpoints) writeMeta(cp Checkpoint) error {
	meta, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(c.dir, cp.ID+".json", meta)
}

// Recovery says what RecoverChanges found.
type Recovery struct {
	// RolledBack are change sets a crash left half-applied, now undone
	// and removed.
	RolledBack []string
	// Conflicts describe paths of such change sets that could not be
	// undone; their checkpoints stay for the owner.
	Conflicts []string
	// Busy are change sets another process is applying right now.
	Busy []string
	// Removed counts leftover folders of change sets that never started.
	Removed int
}

// RecoverChanges rolls back every change set a crash left half-applied
// (journal still "applying" and nobody holding its lock), removing the
// temp files it left, and removes folders of change sets that never got a
// journal. Rolling back, not forward: the new content lived in the
// crashed process's spool, while the old content is in the checkpoint.
// Run it at start; doctor may run it too.
func (w *Workspace) RecoverChanges(ctx context.Context) (Recovery, error) {
	var rec Recovery
	entries, err := os.ReadDir(w.cps.dir)
	if err != nil {
		return rec, fmt.Errorf("recover changes: %w", err)
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), changesDirSuffix)
		if !ok || !e.IsDir() || !checkpointID.MatchString(id) {
			continue
		}
		if err := w.recoverOne(ctx, id, &rec); err != nil {
			return rec, fmt.Errorf("recover changes %s: %w", id, err)
		}
	}
	return rec, nil
}

func (w *Workspace) recoverOne(ctx context.Context, id string, rec *Recovery) error {
	setLock, err := os.OpenFile(filepath.Join(w.cps.setDir(id), ".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer setLock.Close()
	if ok, err := tryFlock(setLock, unix.LOCK_EX); err != nil {
		return err
	} else if !ok {
		rec.Busy = append(rec.Busy, id)
		return nil
	}
	j, err := w.cps.readJournal(id)
	if errors.Is(err, ErrCheckpointNotFound) {
		rec.Removed++
		return os.RemoveAll(w.cps.setDir(id)) // prepared, never started
	}
	if err != nil || j.State != stateApplying {
		return nil
	}
	r, err := w.root(j.Root)
	if err != nil {
		rec.Conflicts = append(rec.Conflicts, fmt.Sprintf("change set %s: root %q is no longer configured", id, j.Root))
		return nil
	}
	lock, err := w.LockRoot(ctx, j.Root)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	defer w.stampApplied(j.Root)()
	conflicts, err := w.undoAll(r, j)
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		rec.Conflicts = append(rec.Conflicts, conflicts...)
		j.State = stateApplied // pinned, listed: the owner decides
		return w.cps.writeJournal(j)
	}
	rec.RolledBack = append(rec.RolledBack, id)
	w.cps.mu.Lock()
	defer w.cps.mu.Unlock()
	return w.cps.remove(Checkpoint{ID: id, Kind: KindChanges})
}

// hasher is a SHA-256 that reports in hex.
type hasher struct{ hash.Hash }

func newHasher() hasher      { return hasher{sha256.New()} }
func (h hasher) hex() string { return hex.EncodeToString(h.Sum(nil)) }

// changesPreview lists what rolling back a change set does.
func (w *Workspace) changesPreview(cp Checkpoint) (Preview, error) {
	j, err := w.cps.readJournal(cp.ID)
	if err != nil {
		return Preview{}, err
	}
	pv := Preview{Checkpoint: cp}
	if j.State == stateUndone {
		pv.Steps = []string{"(already rolled back)"}
		return pv, nil
	}
	for i := len(j.Steps) - 1; i >= 0; i-- {
		s := j.Steps[i]
		var line string
		switch s.Op {
		case "create":
			line = fmt.Sprintf("remove %s %q (created)", s.Kind, s.Rel)
		case "modify":
			line = fmt.Sprintf("restore %s %q (changed)", s.Kind, s.Rel)
		default:
			line = fmt.Sprintf("recreate %s %q (deleted)", s.Kind, s.Rel)
		}
		pv.Steps = append(pv.Steps, line)
	}
	return pv, nil
}
