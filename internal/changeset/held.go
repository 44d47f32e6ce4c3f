package changeset

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
	"strings"
	"time"

	"github.com/homard/homard/internal/workspace"
)

// Held describes a change set that was not applied: it waits in
// Options.HoldDir for apply_changes.
type Held struct {
	ID    string    `json:"id"`
	Root  string    `json:"root"`
	Since time.Time `json:"since"` // when the writer started
	// Writer is what made the changes (a command's argv, a file tool and
	// its path). The JSON name predates file tools' change sets.
	Writer []string `json:"command"`
	SHA256 string   `json:"sha256"` // of the tar stream
	// Grade options the set was graded with, so apply_changes grades the
	// same way.
	Expected  []string  `json:"expected"`
	RunsCode  bool      `json:"runs_code"`
	HostTools []string  `json:"host_tools"`
	Created   time.Time `json:"created"`
}

// ValidID reports whether id has the shape of a held set's id: "cs_" and
// 16 lowercase hex digits.
func ValidID(id string) bool {
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

// Hold copies the change-set stream into the hold folder as <id>.tar with
// its metadata beside it (written last, so a crash leaves no half-held set
// that apply_changes would offer).
func (g *Gate) Hold(changes io.ReadSeeker, meta Held) (Held, error) {
	dir := g.o.HoldDir
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

// Load opens a held change set, checks its stream against the hash
// recorded when it was held and parses it. Close the change set when done.
func (g *Gate) Load(id string) (Held, *workspace.ChangeSet, error) {
	var meta Held
	if !ValidID(id) {
		return meta, nil, fmt.Errorf("%q is not a change-set id (cs_ and 16 hex digits)", id)
	}
	dir := g.o.HoldDir
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
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return meta, nil, err
	}
	if hex.EncodeToString(h.Sum(nil)) != meta.SHA256 {
		return meta, nil, fmt.Errorf("held change set %s changed since it was held; it will not be applied", id)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return meta, nil, err
	}
	cs, err := workspace.ReadChanges(f, workspace.ReadOptions{})
	if err != nil {
		return meta, nil, fmt.Errorf("held change set %s cannot be read: %w", id, err)
	}
	return meta, cs, nil
}

// GradeHeld grades a held change set against the root as it is now, the
// way it was graded when it was held.
func (g *Gate) GradeHeld(meta Held, cs *workspace.ChangeSet) (*workspace.Graded, workspace.GradeOptions, error) {
	o := g.gradeOptions(meta.Root, meta.Since, meta.Expected, meta.RunsCode, meta.HostTools)
	gr, err := g.ws.Grade(meta.Root, cs, o)
	return gr, o, err
}

// ApplyHeld applies the held change set id, approved by the owner as
// critical, if its stream still hashes to sha and its changes to digest;
// refused changes are left out (Applied.Skipped). The set is dropped once
// applied.
func (g *Gate) ApplyHeld(ctx context.Context, id, sha, root, digest, run string) (workspace.Applied, error) {
	meta, cs, err := g.Load(id)
	if err != nil {
		return workspace.Applied{}, err
	}
	defer cs.Close()
	if meta.SHA256 != sha || meta.Root != root {
		return workspace.Applied{}, fmt.Errorf("change set %s is not the one approved; propose apply_changes again", id)
	}
	_, o, err := g.GradeHeld(meta, cs)
	if err != nil {
		return workspace.Applied{}, fmt.Errorf("change set %s cannot be checked: %w", id, err)
	}
	applied, err := g.ws.ApplyChanges(ctx, meta.Root, cs, meta.Since, workspace.ApplyOptions{
		Grade: o, Approved: workspace.GradeCritical, Digest: digest, Run: run})
	if err != nil {
		return applied, err
	}
	g.Drop(id)
	return applied, nil
}

// Drop removes a held change set.
func (g *Gate) Drop(id string) {
	if ValidID(id) {
		os.Remove(filepath.Join(g.o.HoldDir, id+".json"))
		os.Remove(filepath.Join(g.o.HoldDir, id+".tar"))
	}
}
