package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A change set's checkpoint <id> is three things in the checkpoint dir:
//   - <id>.changes/ holding the old content of every file the change set
//     replaces or deletes (one file per step, named by its index) and a
//     .lock held while it is applied;
//   - <id>.journal, every step with the old and the new state, and the
//     state of the whole (applying, applied, undone);
//   - <id>.json, the Checkpoint metadata that lists it (Kind "changes",
//     pinned).
// They are written in that order, each with fsync, before the first
// change to the root; the journal is marked applied after the last.

const (
	changesDirSuffix = ".changes"
	journalSuffix    = ".journal"
)

// Journal states.
const (
	stateApplying = "applying"
	stateApplied  = "applied"
	stateUndone   = "undone"
)

// journal is the record of one change set's application.
type journal struct {
	ID    string    `json:"id"`
	Root  string    `json:"root"`
	Run   string    `json:"run,omitempty"` // ApplyOptions.Run
	Time  time.Time `json:"time"`
	State string    `json:"state"`
	Steps []step    `json:"steps"`
}

// step is one change with what is needed to undo it.
type step struct {
	Op     string `json:"op"` // create, modify, delete
	Rel    string `json:"rel"`
	Kind   string `json:"kind"` // file, folder, symlink
	Mode   uint32 `json:"mode,omitempty"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"` // new content
	Target string `json:"target,omitempty"` // new symlink target
	// The old state, for modify and delete.
	OldKind   string `json:"old_kind,omitempty"`
	OldMode   uint32 `json:"old_mode,omitempty"`
	OldSize   int64  `json:"old_size,omitempty"`
	OldSHA256 string `json:"old_sha256,omitempty"`
	OldTarget string `json:"old_target,omitempty"`
	// Saved names the file in <id>.changes holding the old content.
	Saved string `json:"saved,omitempty"`
	// Tmp is the temp name used next to Rel while applying or undoing.
	Tmp string `json:"tmp,omitempty"`
}

// stepsDigest is the hash a rollback of the change set must be given.
func stepsDigest(steps []step) string {
	b, _ := json.Marshal(steps)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// kindName and kindOf convert EntryKind for the journal.
func kindName(k EntryKind) string {
	switch k {
	case EntryDir:
		return "folder"
	case EntrySymlink:
		return "symlink"
	}
	return "file"
}

func (c *checkpoints) journalPath(id string) string { return filepath.Join(c.dir, id+journalSuffix) }
func (c *checkpoints) setDir(id string) string      { return filepath.Join(c.dir, id+changesDirSuffix) }

// writeJournal replaces the journal durably.
func (c *checkpoints) writeJournal(j *journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return writeAtomic(c.dir, j.ID+journalSuffix, b)
}

// readJournal reads a change set's journal.
func (c *checkpoints) readJournal(id string) (*journal, error) {
	b, err := os.ReadFile(c.journalPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("change set %q: %w", id, ErrCheckpointNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("change set %q: %w", id, err)
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil || j.ID != id {
		return nil, fmt.Errorf("change set %q: %w", id, ErrCheckpointCorrupt)
	}
	return &j, nil
}

// saveOld copies the old content of the regular file rel (which must
// still be what st describes) into the change set's folder as name, and
// returns its hash.
func saveOld(dirfd int, rel string, st *realStat, dir, name string) (string, error) {
	src, err := openFileBeneath(dirfd, rel)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	// Not synced one by one: prepare makes the whole set durable with one
	// syncfs before the journal is written.
	_, err = io.Copy(io.MultiWriter(dst, h), src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("save old content of %s: %w", rel, err)
	}
	if now, err := statBeneath(dirfd, rel); err != nil || !st.same(now) {
		return "", fmt.Errorf("%s: %w", rel, ErrConflict)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// syncFS makes every file and entry on dir's filesystem durable: one
// syncfs(2) for a whole phase (the saved old contents; the applied files)
// instead of one fsync per file, which cost ~1 ms a file here.
func syncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := syncfs(fd); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// syncFSAt is syncFS for the filesystem of dirfd, which may be an O_PATH
// descriptor (syncfs needs a real one, so the folder is reopened).
func syncFSAt(dirfd int) error {
	fd, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return syncfs(fd)
}

func closeFd(fd int) { unix.Close(fd) }

// tmpName is the temp name of step i of change set id, next to its path.
func tmpName(id string, i int) string { return ".homard-" + id + "-" + strconv.Itoa(i) + ".tmp" }

// String describes a step as Change.String does (`create file "a" (3
// bytes, mode 0644)`), for the audit.
func (s step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %q", s.Op, s.Kind, s.Rel)
	switch {
	case s.Kind == "symlink" && s.Op != "delete":
		fmt.Fprintf(&b, " -> %q", s.Target)
	case s.Kind == "file" && s.Op != "delete":
		fmt.Fprintf(&b, " (%d bytes, mode %04o)", s.Size, s.Mode)
	case s.Kind == "folder" && s.Op == "modify":
		fmt.Fprintf(&b, " (mode %04o)", s.Mode)
	}
	return b.String()
}

// AppliedBy lists what the change sets applied for tool run run
// (ApplyOptions.Run) changed, in the words of run_command's effects: for
// each, "applied as checkpoint <id>:" and one line per path. Only journals
// written at or after since are read (a run's id names one run of one
// database). A change set a crash left half-applied is not listed:
// RecoverChanges rolls it back. The arbiter calls it for the audit record
// of a run interrupted after its changes were applied but before its own
// record was written.
func (w *Workspace) AppliedBy(run string, since time.Time) ([]string, error) {
	if run == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(w.cps.dir)
	if err != nil {
		return nil, fmt.Errorf("changes applied by %s: %w", run, err)
	}
	var out []string
	for _, e := range entries { // by name: oldest first
		id, ok := strings.CutSuffix(e.Name(), journalSuffix)
		if !ok || !e.Type().IsRegular() || !checkpointID.MatchString(id) {
			continue
		}
		j, err := w.cps.readJournal(id)
		if errors.Is(err, ErrCheckpointNotFound) {
			continue // removed since the listing
		}
		if err != nil {
			return out, fmt.Errorf("changes applied by %s: %w", run, err)
		}
		if j.Run != run || j.Time.Before(since) || j.State == stateApplying {
			continue
		}
		head := "applied as checkpoint " + j.ID + ":"
		if j.State == stateUndone {
			head = "applied as checkpoint " + j.ID + " (rolled back since):"
		}
		out = append(out, head)
		for _, s := range j.Steps {
			out = append(out, s.String())
		}
	}
	return out, nil
}
