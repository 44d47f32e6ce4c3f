package tools

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
	"github.com/homard/homard/internal/workspace"
)

// maxHideScan bounds the walk that looks for sensitive files to hide from
// a command; past it the command is refused (fail closed) rather than run
// with a sensitive file readable.
const maxHideScan = 200_000

// hiddenPaths lists the absolute paths under the root's real path that a
// command must not read: off, the root's off-limits paths (homard's own
// files and the roots nested in it, workspace.OffLimits), which the walk
// does not enter, and what hidden reports (sensitive files by the
// workspace's rules, the owner's patterns and allowances included, and
// what the operator's deny rules match). The walk does not follow
// symlinks; a symlink's target is listed under its own name.
func hiddenPaths(off []string, rootPath string, hidden func(rel string) bool) ([]string, error) {
	out := slices.Clone(off)
	n := 0
	err := filepath.WalkDir(rootPath, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == rootPath {
				return err
			}
			if errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		if p == rootPath {
			return nil
		}
		if n++; n > maxHideScan {
			return fmt.Errorf("the workspace has more than %d entries to check for sensitive files; use a smaller workspace root", maxHideScan)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		rel, err := filepath.Rel(rootPath, p)
		if err != nil {
			return err
		}
		if slices.Contains(off, p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if hidden(filepath.ToSlash(rel)) {
			out = append(out, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("look for sensitive files: %w", err)
	}
	return out, nil
}

// settler is run_command's settler.
func (t *RunCommand) settler() settler {
	return settler{ws: t.ws, holdDir: t.o.HoldDir, deny: t.o.DenyPaths, hostTools: t.o.HostTools}
}

func commandHidden(ws *workspace.Workspace, deny []string, root, rel string) bool {
	if ws.Sensitive(root, rel) {
		return true
	}
	if len(deny) == 0 {
		return false
	}
	p, err := ws.PathIn(root, rel)
	if err != nil {
		return true
	}
	target := p.Target()
	for _, pat := range deny {
		if policy.MatchPath(pat, target) {
			return true
		}
	}
	return false
}

// heldMeta describes a change set that a command produced and that was
// not applied: it waits in CommandOptions.HoldDir for apply_changes.
type heldMeta struct {
	ID      string    `json:"id"`
	Root    string    `json:"root"`
	Since   time.Time `json:"since"` // when the command started
	Command []string  `json:"command"`
	SHA256  string    `json:"sha256"` // of the tar stream
	// Grade options the command was graded with, so apply_changes grades
	// the same way.
	Expected  []string  `json:"expected"`
	RunsCode  bool      `json:"runs_code"`
	HostTools []string  `json:"host_tools"`
	Created   time.Time `json:"created"`
}

// validHeldID: "cs_" and 16 lowercase hex digits.
func validHeldID(id string) bool {
	if len(id) != 3+16 || !strings.HasPrefix(id, "cs_") {
		return false
	}
	for _, c := range id[3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// holdChanges copies the change-set stream into dir as <id>.tar with its
// metadata beside it (written last, so a crash leaves no half-held set
// that apply_changes would offer).
func holdChanges(dir string, changes *os.File, meta heldMeta) (heldMeta, error) {
	if dir == "" {
		return meta, errors.New("no folder is configured for held change sets")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return meta, fmt.Errorf("hold change set: %w", err)
	}
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return meta, err
	}
	meta.ID = "cs_" + hex.EncodeToString(rnd[:])
	meta.Created = time.Now().UTC()
	if _, err := changes.Seek(0, io.SeekStart); err != nil {
		return meta, fmt.Errorf("hold change set: %w", err)
	}
	tarPath := filepath.Join(dir, meta.ID+".tar")
	f, err := os.OpenFile(tarPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return meta, fmt.Errorf("hold change set: %w", err)
	}
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h), changes)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tarPath)
		return meta, fmt.Errorf("hold change set: %w", err)
	}
	meta.SHA256 = hex.EncodeToString(h.Sum(nil))
	b, _ := json.Marshal(meta)
	tmp := filepath.Join(dir, meta.ID+".json.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		os.Remove(tarPath)
		return meta, fmt.Errorf("hold change set: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, meta.ID+".json")); err != nil {
		os.Remove(tarPath)
		os.Remove(tmp)
		return meta, fmt.Errorf("hold change set: %w", err)
	}
	return meta, nil
}

// loadHeld opens a held change set and checks its stream against the
// hash recorded when it was held.
func loadHeld(dir, id string) (heldMeta, *os.File, error) {
	var meta heldMeta
	if !validHeldID(id) {
		return meta, nil, fmt.Errorf("%q is not a change-set id (cs_ and 16 hex digits)", id)
	}
	b, err := os.ReadFile(filepath.Join(dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return meta, nil, fmt.Errorf("no held change set %s (applied, discarded, or never held)", id)
	}
	if err != nil {
		return meta, nil, err
	}
	if err := json.Unmarshal(b, &meta); err != nil || meta.ID != id {
		return meta, nil, fmt.Errorf("held change set %s: damaged metadata", id)
	}
	f, err := os.Open(filepath.Join(dir, id+".tar"))
	if err != nil {
		return meta, nil, fmt.Errorf("held change set %s: %w", id, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return meta, nil, err
	}
	if hex.EncodeToString(h.Sum(nil)) != meta.SHA256 {
		f.Close()
		return meta, nil, fmt.Errorf("held change set %s changed since it was held; it will not be applied", id)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return meta, nil, err
	}
	return meta, f, nil
}

// dropHeld removes a held change set.
func dropHeld(dir, id string) {
	if validHeldID(id) {
		os.Remove(filepath.Join(dir, id+".json"))
		os.Remove(filepath.Join(dir, id+".tar"))
	}
}

// settler grades, applies or holds the change sets of sandboxed runs:
// run_command's and run_skill's writes to a workspace root.
type settler struct {
	ws        *workspace.Workspace
	holdDir   string   // where change sets that were not applied wait for apply_changes
	deny      []string // the operator's deny-rule path patterns
	hostTools []string // added to workspace.DefaultHostTools
}

// hidden reports a path no sandboxed run may read or change: a sensitive
// file (workspace rules) or one an operator deny rule matches.
func (c settler) hidden(root, rel string) bool { return commandHidden(c.ws, c.deny, root, rel) }

// hide lists the paths of root (at its real path) a sandboxed run must
// not read (hiddenPaths with the root's off-limits paths).
func (c settler) hide(root, path string) ([]string, error) {
	return hiddenPaths(c.ws.OffLimits(root), path, func(rel string) bool { return c.hidden(root, rel) })
}

// settle grades what an overlay run changed and applies it when the grade
// is within what the plan allowed (medium: ordinary creates, overwrites
// and deletes inside the root, where expected; high in yolo); otherwise it holds the
// change set for apply_changes, which always asks the owner. It returns
// the text the model reads; what names the run in it ("the command").
func (c settler) settle(ctx context.Context, what, rootName string, changes *os.File, since time.Time, argv []string, expected []string, runsCode bool, lock *workspace.RootLock) (text string, effects []string) {
	defer changes.Close()
	cs, err := workspace.ReadChanges(changes, workspace.ReadOptions{})
	if err != nil {
		return fmt.Sprintf("\n%s's changes could not be read (%v); nothing was applied", what, err), nil
	}
	defer cs.Close()
	if len(cs.Entries) == 0 {
		return "", nil
	}
	gopts := workspace.GradeOptions{Expected: expected, RunsCode: runsCode, Since: since,
		Sensitive: func(rel string) bool { return c.hidden(rootName, rel) },
		HostTools: hostTools(c.hostTools)}
	g, err := c.ws.Grade(rootName, cs, gopts)
	if err != nil {
		return fmt.Sprintf("\n%s's changes could not be checked (%v); nothing was applied", what, err), nil
	}
	if g.Grade == workspace.GradeLow {
		return "", nil
	}
	// Ordinary changes apply unasked; in yolo (the owner's choice to be
	// asked only for critical effects) so do high ones. Critical ones, and
	// anything refused or in conflict, never do.
	limit := workspace.GradeMedium
	caller, _ := tool.CallerFrom(ctx)
	if caller.Mode == policy.ModeYolo {
		limit = workspace.GradeHigh
	}
	if g.Grade <= limit && !g.Refused() && len(g.Conflicts) == 0 {
		// The journal names the run, so a crash before its audit record
		// still leaves a record listing these changes (AppliedBy).
		applied, err := c.ws.ApplyChanges(ctx, rootName, cs, since, workspace.ApplyOptions{
			Grade: gopts, Approved: limit, Digest: g.Digest, Lock: lock, Run: caller.Run})
		if err == nil {
			return fmt.Sprintf("\napplied %s (checkpoint %s; the owner can undo it with `homard checkpoint rollback %s`)",
					changeSummary(applied.Graded), applied.CheckpointID, applied.CheckpointID),
				append([]string{"applied as checkpoint " + applied.CheckpointID + ":"}, applied.Graded.Paths()...)
		}
		if ctx.Err() != nil {
			return "\nthe turn was cancelled; nothing was applied", nil
		}
		// A conflict or a grade that rose under the lock: hold it.
		g.Reasons = append(g.Reasons, workspace.Reason{Grade: workspace.GradeHigh, Text: "applying failed: " + err.Error()})
	}
	meta, err := holdChanges(c.holdDir, changes, heldMeta{Root: rootName, Since: since, Command: argv, Expected: expected, RunsCode: runsCode, HostTools: gopts.HostTools})
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s's changes were NOT applied (%s, graded %s):", what, changeSummary(g), g.Grade)
	for _, r := range g.Reasons {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	for _, cf := range g.Conflicts {
		fmt.Fprintf(&b, "\n  conflict: %q changed while %s ran", cf, what)
	}
	if err != nil {
		fmt.Fprintf(&b, "\nthey could not be kept for review (%v) and are discarded", err)
		return b.String(), append([]string{"not applied, discarded (graded " + g.Grade.String() + "):"}, g.Paths()...)
	}
	fmt.Fprintf(&b, "\nthey are held as change set %s; to apply them, call apply_changes with {\"id\": %q}: the owner sees every change and decides", meta.ID, meta.ID)
	return b.String(), append([]string{"not applied, held as " + meta.ID + " (graded " + g.Grade.String() + "):"}, g.Paths()...)
}

// hostTools is the grader's list: homard's defaults and the operator's.
func hostTools(extra []string) []string {
	return append(append([]string{}, workspace.DefaultHostTools...), extra...)
}

// changeSummary: "3 created, 1 modified, 2 deleted".
func changeSummary(g *workspace.Graded) string {
	if g == nil {
		return "no changes"
	}
	return fmt.Sprintf("%d created, %d modified, %d deleted", g.Created, g.Modified, g.Deleted)
}
