package changeset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// A sandboxed run must not read a root's sensitive files, so before each
// one the gate lists them (Hide) for the sandbox to mask. Listing them
// walks the root; a root grows (a model can create entries by the
// hundred thousand), so the walk is incremental: each folder's listing is
// kept with the folder's identity and change times, and a folder whose
// entries did not change since (its mtime and ctime move whenever an entry
// is added, removed or renamed in it) is not read again — only stat'ed.
// A huge root costs one stat per folder, never a refusal, up to
// maxHideFolders folders.

// maxHideFolders bounds the folders one Hide visits; past it the run is
// refused (fail closed) rather than run with a sensitive file readable.
const maxHideFolders = 2_000_000

// freshness: a folder changed this recently is not cached, since a change
// in the same clock tick would leave its times as they were.
const freshness = 100 * time.Millisecond

// hideCache keeps each root's folder listings between runs.
type hideCache struct {
	mu    sync.Mutex // guards roots and last
	roots map[string]map[string]*folder
	last  map[string]HideStats
}

// folder is what Hide keeps of one folder: its identity, and what of its
// entries matters (subfolders to visit, entries to hide).
type folder struct {
	id      folderID
	subdirs []string // names
	hidden  []string // names
	entries int
}

// HideStats is what the last Hide of a root cost, for doctor.
type HideStats struct {
	Folders, Entries, Hidden int
	Read                     int // folders read again (the rest came from the cache)
	Took                     time.Duration
}

// Hide lists the absolute paths under the root's real path (rootPath) that
// a sandboxed run must not read: the root's off-limits paths (homard's own
// files and the roots nested in it), which the walk does not enter, and
// what Hidden reports. The walk does not follow symlinks; a symlink's
// target is listed under its own name.
func (g *Gate) Hide(root, rootPath string) ([]string, error) {
	start := time.Now()
	off := g.ws.OffLimits(root)
	out := slices.Clone(off)
	g.hide.mu.Lock()
	defer g.hide.mu.Unlock()
	if g.hide.roots == nil {
		g.hide.roots, g.hide.last = map[string]map[string]*folder{}, map[string]HideStats{}
	}
	old := g.hide.roots[root]
	now := map[string]*folder{}
	var st HideStats
	queue := []string{"."}
	for len(queue) > 0 {
		rel := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if st.Folders++; st.Folders > maxHideFolders {
			return nil, fmt.Errorf("look for sensitive files: the workspace has more than %d folders; use a smaller workspace root", maxHideFolders)
		}
		abs := filepath.Join(rootPath, filepath.FromSlash(rel))
		id, ok := identify(abs)
		if !ok {
			if rel == "." {
				return nil, fmt.Errorf("look for sensitive files: cannot read the root %s", rootPath)
			}
			continue // gone or unreadable since its parent was listed
		}
		f := old[rel]
		if f == nil || f.id != id || time.Since(id.changed()) < freshness {
			var err error
			if f, err = g.readFolder(root, rootPath, rel, off, id); err != nil {
				return nil, err
			}
			st.Read++
		}
		now[rel] = f
		st.Entries += f.entries
		for _, n := range f.hidden {
			out = append(out, filepath.Join(abs, n))
		}
		for _, n := range f.subdirs {
			queue = append(queue, path.Join(rel, n))
		}
	}
	st.Hidden, st.Took = len(out)-len(off), time.Since(start)
	g.hide.roots[root], g.hide.last[root] = now, st
	return out, nil
}

// readFolder lists one folder: the subfolders to visit and the entries to
// hide (a hidden folder is hidden whole and not entered).
func (g *Gate) readFolder(root, rootPath, rel string, off []string, id folderID) (*folder, error) {
	abs := filepath.Join(rootPath, filepath.FromSlash(rel))
	entries, err := os.ReadDir(abs)
	if err != nil {
		if rel != "." && (errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist)) {
			return &folder{id: id}, nil
		}
		return nil, fmt.Errorf("look for sensitive files: %w", err)
	}
	f := &folder{id: id, entries: len(entries)}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			continue
		}
		child := path.Join(rel, e.Name())
		if slices.Contains(off, filepath.Join(abs, e.Name())) {
			continue
		}
		if g.Hidden(root, child) {
			f.hidden = append(f.hidden, e.Name())
			continue
		}
		if e.IsDir() {
			f.subdirs = append(f.subdirs, e.Name())
		}
	}
	return f, nil
}

// HideCost is what the last Hide of root cost; ok is false when no run
// has listed it yet.
func (g *Gate) HideCost(root string) (HideStats, bool) {
	g.hide.mu.Lock()
	defer g.hide.mu.Unlock()
	st, ok := g.hide.last[root]
	return st, ok
}
