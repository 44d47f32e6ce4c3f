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
	"slices"
	"strings"
	"sync"
	"time"
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
}

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
	t := c.now()
	stamp := t.UnixNano()
	if stamp <= c.last {
		stamp = c.last + 1
	}
	c.last = stamp
	var rnd [4]byte
	rand.Read(rnd[:])
	sum := sha256.Sum256(content)
	cp := Checkpoint{
		ID:     fmt.Sprintf("%016x-%s", uint64(stamp), hex.EncodeToString(rnd[:])),
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
	// Content first: a listed checkpoint always has its content.
	if err := writeAtomic(c.dir, cp.ID+".blob", content); err != nil {
		return "", err
	}
	if err := writeAtomic(c.dir, cp.ID+".json", meta); err != nil {
		os.Remove(filepath.Join(c.dir, cp.ID+".blob"))
		return "", err
	}
	if err := c.prune(); err != nil {
		return "", err
	}
	return cp.ID, nil
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
	slices.SortFunc(out, func(a, b Checkpoint) int { return strings.Compare(b.ID, a.ID) })
	return out, nil
}

// prune keeps the newest checkpoints within the count and byte bounds and
// removes the rest, orphaned contents and leftover temp files. c.mu must
// be held.
func (c *checkpoints) prune() error {
	all, err := c.list()
	if err != nil {
		return err
	}
	keep := make(map[string]bool)
	var total int64
	full := false // once one checkpoint does not fit, every older one goes too
	for i, cp := range all {
		full = full || i >= c.max || i > 0 && total+cp.Size > c.maxBytes
		if !full {
			keep[cp.ID] = true
			total += cp.Size
			continue
		}
		// Metadata first: a checkpoint without content is never listed.
		if err := os.Remove(filepath.Join(c.dir, cp.ID+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("prune checkpoint %s: %w", cp.ID, err)
		}
		os.Remove(filepath.Join(c.dir, cp.ID+".blob"))
	}
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return fmt.Errorf("prune checkpoints: %w", err)
	}
	for _, e := range entries {
		id, isBlob := strings.CutSuffix(e.Name(), ".blob")
		stray := strings.HasPrefix(e.Name(), ".tmp-") || isBlob && !keep[id]
		if stray && e.Type().IsRegular() {
			os.Remove(filepath.Join(c.dir, e.Name()))
		}
	}
	return nil
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

// writeAtomic writes dir/name through a temp file and a rename.
func writeAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
