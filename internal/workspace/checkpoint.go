package workspace

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/atomicfile"
)

// Checkpoint describes the saved old content of a file that WriteFile
// replaced.
type Checkpoint struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Root   string    `json:"root"`
	Rel    string    `json:"rel"`
	Target string    `json:"target"` // Path.Target() at save time
	Size   int64     `json:"size"`
	SHA256 string    `json:"sha256"` // hex SHA-256 of the saved content
	// Kind is "" for one file's old content, KindChanges for a command's
	// change set (its journal and the old content of every file it
	// replaced or deleted; SHA256 is then the journal's steps' hash and
	// Size the saved bytes).
	Kind string `json:"kind,omitempty"`
	// Pinned checkpoints are never pruned: a change set's, until the
	// owner accepts it (Unpin) or it is rolled back.
	Pinned bool `json:"pinned,omitempty"`
	// Paths counts the paths a change set touched.
	Paths int `json:"paths,omitempty"`
}

// KindChanges marks the checkpoint of a command's change set.
const KindChanges = "changes"

// checkpoints stores each checkpoint as <id>.json (metadata) and <id>.blob
// (content) in dir. IDs sort in creation order: 16 hex digits of a strictly
// increasing nanosecond stamp, '-', 8 random hex digits.
type checkpoints struct {
	dir      string
	max      int
	maxBytes int64
	now      func() time.Time

	mu   sync.Mutex // guards last and every file in dir
	last int64      // stamp of the newest id made by this process
}

var checkpointID = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{8}$`)

// Checkpoints lists the saved checkpoints, newest first.
func (w *Workspace) Checkpoints() ([]Checkpoint, error) {
	w.cps.mu.Lock()
	defer w.cps.mu.Unlock()
	return w.cps.list()
}

func (c *checkpoints) save(p Path, content []byte) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id, t := c.newID()
	sum := sha256.Sum256(content)
	cp := Checkpoint{
		ID:     id,
		Time:   t,
		Root:   p.Root,
		Rel:    p.Rel,
		Target: p.Target(),
		Size:   int64(len(content)),
		SHA256: hex.EncodeToString(sum[:]),
	}
	meta, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return "", err
	}
	if err := func() error {
		unlock, _ := c.storeLock(false)
		defer unlock()
		// Content first: a listed checkpoint always has its content.
		if err := writeAtomic(c.dir, cp.ID+".blob", content); err != nil {
			return err
		}
		if err := writeAtomic(c.dir, cp.ID+".json", meta); err != nil {
			os.Remove(filepath.Join(c.dir, cp.ID+".blob"))
			return err
		}
		return nil
	}(); err != nil {
		return "", err
	}
	if err := c.prune(); err != nil {
		return "", err
	}
	return cp.ID, nil
}

// newID makes a checkpoint id stamped now. c.mu must be held.
func (c *checkpoints) newID() (string, time.Time) {
	t := c.now()
	stamp := t.UnixNano()
	if stamp <= c.last {
		stamp = c.last + 1
	}
	c.last = stamp
	var rnd [4]byte
	rand.Read(rnd[:])
	return fmt.Sprintf("%016x-%s", uint64(stamp), hex.EncodeToString(rnd[:])), t
}

// list reads every metadata file, newest first. c.mu must be held.
func (c *checkpoints) list() ([]Checkpoint, error) {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var out []Checkpoint
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !checkpointID.MatchString(id) {
			continue
		}
		cp, err := c.load(id)
		if err != nil {
			continue // pruned meanwhile or unreadable: not offered
		}
		out = append(out, cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// prune keeps the newest checkpoints within the count and byte bounds and
// removes the rest. Pinned checkpoints are always kept (and count towards
// the bounds). Leftovers — temp files, contents without metadata, change-set
// folders without a journal — are removed only when no other process is
// writing to the store (the store lock, taken shared by every writer, is
// free), so an in-flight write of another process is never deleted. c.mu
// must be held.
// PinFor is how long an applied change set's checkpoint is kept whatever
// the count and byte caps (see prune).
const PinFor = 7 * 24 * time.Hour

func (c *checkpoints) prune() error {
	all, err := c.list()
	if err != nil {
		return err
	}
	keep := make(map[string]bool)
	var total int64
	kept := 0
	full := false // once one checkpoint does not fit, every older one goes too
	for _, cp := range all {
		// A command's change set stays pinned (never pruned) for
		// PinFor after it was applied, so it can be rolled back even when
		// many smaller checkpoints follow it; then it is an ordinary
		// checkpoint again.
		if cp.Pinned && time.Since(cp.Time) < PinFor {
			keep[cp.ID] = true
			total += cp.Size
			kept++
			continue
		}
		full = full || kept >= c.max || kept > 0 && total+cp.Size > c.maxBytes
		if !full {
			keep[cp.ID] = true
			total += cp.Size
			kept++
			continue
		}
		if err := c.remove(cp); err != nil {
			return err
		}
	}
	unlock, ok := c.storeLock(true)
	if !ok {
		return nil // another process is writing: leave leftovers for later
	}
	defer unlock()
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("prune checkpoints: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		id, isBlob := strings.CutSuffix(name, ".blob")
		stray := strings.HasPrefix(name, ".tmp-") || isBlob && !keep[id]
		if stray && e.Type().IsRegular() {
			os.Remove(filepath.Join(c.dir, name))
		}
		if id, isSet := strings.CutSuffix(name, changesDirSuffix); isSet && e.IsDir() && checkpointID.MatchString(id) {
			if _, err := os.Lstat(filepath.Join(c.dir, id+journalSuffix)); errors.Is(err, os.ErrNotExist) {
				os.RemoveAll(filepath.Join(c.dir, name))
			}
		}
	}
	return nil
}

// remove deletes a checkpoint: metadata first, so a checkpoint without
// content is never listed.
func (c *checkpoints) remove(cp Checkpoint) error {
	if err := os.Remove(filepath.Join(c.dir, cp.ID+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove checkpoint %s: %w", cp.ID, err)
	}
	if cp.Kind == KindChanges {
		os.Remove(filepath.Join(c.dir, cp.ID+journalSuffix))
		return os.RemoveAll(filepath.Join(c.dir, cp.ID+changesDirSuffix))
	}
	os.Remove(filepath.Join(c.dir, cp.ID+".blob"))
	return nil
}

// CheckpointRoom says how many bytes of old content the checkpoint store
// can take now without pruning anything (free), and at most after
// pruning every checkpoint that is not pinned (freeAfterPruning).
func (w *Workspace) CheckpointRoom() (free, freeAfterPruning int64, err error) {
	w.cps.mu.Lock()
	defer w.cps.mu.Unlock()
	all, err := w.cps.list()
	if err != nil {
		return 0, 0, err
	}
	var total, pinned int64
	for _, cp := range all {
		total += cp.Size
		if cp.Pinned {
			pinned += cp.Size
		}
	}
	return max(w.cps.maxBytes-total, 0), max(w.cps.maxBytes-pinned, 0), nil
}

// load reads one checkpoint's metadata.
func (c *checkpoints) load(id string) (Checkpoint, error) {
	if !checkpointID.MatchString(id) {
		return Checkpoint{}, fmt.Errorf("checkpoint %q: %w", id, ErrCheckpointNotFound)
	}
	raw, err := os.ReadFile(filepath.Join(c.dir, id+".json"))
	if errors.Is(err, os.ErrNotExist) {
		return Checkpoint{}, fmt.Errorf("checkpoint %q: %w", id, ErrCheckpointNotFound)
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %q: %w", id, err)
	}
	var cp Checkpoint
	if err := json.Unmarshal(raw, &cp); err != nil || cp.ID != id {
		return Checkpoint{}, fmt.Errorf("checkpoint %q: %w", id, ErrCheckpointCorrupt)
	}
	return cp, nil
}

// loadSaved reads checkpoint id's metadata and, unless it is a change
// set's (KindChanges, whose content is in its journal), its saved content,
// both under c.mu.
func (c *checkpoints) loadSaved(id string) (cp Checkpoint, saved []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, err = c.load(id)
	if err == nil && cp.Kind != KindChanges {
		saved, err = c.content(cp)
	}
	return cp, saved, err
}

// content reads a checkpoint's saved content and verifies its hash.
func (c *checkpoints) content(cp Checkpoint) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(c.dir, cp.ID+".blob"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint %q: %w", cp.ID, ErrCheckpointNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %q: %w", cp.ID, err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != cp.SHA256 {
		return nil, fmt.Errorf("checkpoint %q: %w", cp.ID, ErrCheckpointCorrupt)
	}
	return data, nil
}

// writeAtomic writes dir/name through a temp file, a rename and a sync of
// dir (atomicfile.Write).
func writeAtomic(dir, name string, data []byte) error {
	if err := atomicfile.Write(filepath.Join(dir, name), data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
