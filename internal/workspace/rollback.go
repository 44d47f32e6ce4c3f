package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Preview shows what Rollback would do, so the owner can confirm it with
// the saved content's hash.
type Preview struct {
	Checkpoint Checkpoint
	// Exists says whether the file is there now; when it is not, rollback
	// recreates it.
	Exists        bool
	CurrentSize   int64
	CurrentSHA256 string
	// Same is true when the current content already equals the saved one.
	Same bool
	// Diff shows, line by line, how rollback changes the current content:
	// "-" lines are removed, "+" lines come back. It is cut short for
	// long changes and omitted for binary content.
	Diff string
	// Steps, for a command's change set (Checkpoint.Kind KindChanges),
	// list what rollback does, one path per line.
	Steps []string
}

// SavedSHA256 is the hash Rollback must be given.
func (p Preview) SavedSHA256() string { return p.Checkpoint.SHA256 }

// String renders the preview for a person.
func (p Preview) String() string {
	var b strings.Builder
	cp := p.Checkpoint
	if cp.Kind == KindChanges {
		fmt.Fprintf(&b, "rollback %s: undo %s, applied at %s\n", cp.ID, cp.Target, cp.Time.Format("2006-01-02 15:04:05 MST"))
		for _, s := range p.Steps {
			b.WriteString("  " + s + "\n")
		}
		fmt.Fprintf(&b, "journal sha256 %s\n", cp.SHA256)
		return b.String()
	}
	fmt.Fprintf(&b, "rollback %s: restore %s as saved at %s\n", cp.ID, cp.Target, cp.Time.Format("2006-01-02 15:04:05 MST"))
	if p.Exists {
		fmt.Fprintf(&b, "current: %d bytes, sha256 %s\n", p.CurrentSize, p.CurrentSHA256)
	} else {
		b.WriteString("current: the file does not exist; rollback recreates it\n")
	}
	fmt.Fprintf(&b, "saved:   %d bytes, sha256 %s\n", cp.Size, cp.SHA256)
	if p.Same {
		b.WriteString("the current content already equals the saved content\n")
	} else if p.Diff != "" {
		b.WriteString(p.Diff)
	}
	return b.String()
}

// RollbackPreview shows what Rollback(id, ...) would change.
func (w *Workspace) RollbackPreview(id string) (Preview, error) {
	cp, saved, err := w.cps.loadSaved(id)
	if err != nil {
		return Preview{}, err
	}
	if cp.Kind == KindChanges {
		return w.changesPreview(cp)
	}
	pv := Preview{Checkpoint: cp}
	p, err := w.ResolveIn(cp.Root, cp.Rel)
	if err != nil {
		return Preview{}, fmt.Errorf("rollback %s: %w", id, err)
	}
	current, err := w.ReadFile(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		pv.Diff = diff(nil, saved)
		return pv, nil
	case err != nil:
		return Preview{}, fmt.Errorf("rollback %s: %w", id, err)
	}
	sum := sha256.Sum256(current)
	pv.Exists = true
	pv.CurrentSize = int64(len(current))
	pv.CurrentSHA256 = hex.EncodeToString(sum[:])
	pv.Same = pv.CurrentSHA256 == cp.SHA256
	if !pv.Same {
		pv.Diff = diff(current, saved)
	}
	return pv, nil
}

// RollbackCheckpoint restores a checkpoint's content. hash must be the saved
// content's SHA-256 as shown by RollbackPreview, in full or as a prefix of
// at least 8 hex digits. The restore goes through WriteFile, so the
// current content is checkpointed first and every write check applies.
//
// The checkpoint of a command's change set (Kind KindChanges; its hash is
// the journal's) is undone as a whole: created paths are removed when
// they still hold what the command wrote, replaced and deleted ones come
// back; a path changed since is a conflict (ErrConflict), left alone and
// named in the error.
func (w *Workspace) RollbackCheckpoint(id, hash string) error {
	cp, saved, err := w.cps.loadSaved(id)
	if err != nil {
		return err
	}
	hash = strings.ToLower(strings.TrimSpace(hash))
	if len(hash) < 8 || !strings.HasPrefix(cp.SHA256, hash) {
		return fmt.Errorf("rollback %s: %w", id, ErrHashMismatch)
	}
	if cp.Kind == KindChanges {
		return w.rollbackChanges(cp)
	}
	p, err := w.ResolveIn(cp.Root, cp.Rel)
	if err != nil {
		return fmt.Errorf("rollback %s: %w", id, err)
	}
	if _, err := w.writeFile(p, saved); err != nil {
		return fmt.Errorf("rollback %s: %w", id, err)
	}
	return nil
}

// Bounds of a preview diff.
const (
	diffContext  = 2
	diffMaxLines = 40
)

// diff shows the lines rollback changes: the common head and tail are
// trimmed and the differing middle is shown as removed current lines and
// restored saved lines. It is not a minimal diff; it is short and honest.
func diff(current, saved []byte) string {
	if !isText(current) || !isText(saved) {
		return "binary content: no line diff shown\n"
	}
	a, b := lines(current), lines(saved)
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	from := max(head-diffContext, 0)
	var out strings.Builder
	fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n", from+1, len(a)-tail-from, from+1, len(b)-tail-from)
	n := 0
	emit := func(prefix string, ls []string) {
		for i, l := range ls {
			if n == diffMaxLines {
				fmt.Fprintf(&out, "... %d more %q lines not shown\n", len(ls)-i, prefix)
				return
			}
			out.WriteString(prefix + l + "\n")
			n++
		}
	}
	emit(" ", a[from:head])
	emit("-", a[head:len(a)-tail])
	emit("+", b[head:len(b)-tail])
	emit(" ", a[len(a)-tail:min(len(a), len(a)-tail+diffContext)])
	return out.String()
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

// Restored is a file a rollback writes back, with the content it gets.
type Restored struct {
	Rel  string
	Data []byte
}

// RollbackWrites lists the files rolling checkpoint id back would write,
// with their saved content, so the gate can grade the restoration as any
// other write (folders, symlinks and removals are left out: they run no
// code by their content). It changes nothing.
func (w *Workspace) RollbackWrites(id string) (root string, files []Restored, err error) {
	cp, saved, err := w.cps.loadSaved(id)
	if err != nil {
		return "", nil, err
	}
	if cp.Kind != KindChanges {
		return cp.Root, []Restored{{Rel: cp.Rel, Data: saved}}, nil
	}
	j, err := w.cps.readJournal(cp.ID)
	if err != nil {
		return "", nil, err
	}
	if j.State == stateUndone {
		return cp.Root, nil, nil
	}
	for _, s := range j.Steps {
		if s.Op == "create" || s.OldKind != "file" || s.Saved == "" {
			continue
		}
		if s.OldSize > w.maxFile {
			return "", nil, fmt.Errorf("rollback %s: %s: %w", id, s.Rel, ErrTooLarge)
		}
		b, err := os.ReadFile(filepath.Join(w.cps.setDir(cp.ID), s.Saved))
		if err != nil {
			return "", nil, fmt.Errorf("rollback %s: %w", id, err)
		}
		files = append(files, Restored{Rel: s.Rel, Data: b})
	}
	return cp.Root, files, nil
}
