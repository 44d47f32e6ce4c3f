package skill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/homard/homard/internal/store"
)

// Trust states of an installed skill.
const (
	StateTrusted   = "trusted"
	StateChanged   = "changed: needs trust"   // trusted once; its tree changed since
	StateUntrusted = "untrusted: needs trust" // never trusted (copied in by hand)
	StateBroken    = "broken"                 // its folder or manifest is refused; see Problem
)

// Folder is where skills live: skills/ in homard's data folder, which
// the file tools refuse to the model and no workspace contains.
func Folder(dataDir string) string { return filepath.Join(dataDir, "skills") }

// Library is the installed skills of one homard home and their trust.
type Library struct {
	dir string
	st  *store.Store
	now func() time.Time
}

// NewLibrary returns the library kept in dir (Folder of the data folder),
// with trust pinned in st. now nil means time.Now.
func NewLibrary(dir string, st *store.Store, now func() time.Time) *Library {
	if now == nil {
		now = time.Now
	}
	return &Library{dir: dir, st: st, now: now}
}

// Candidate is a skill read for review: what Install writes.
type Candidate struct {
	Manifest Manifest
	Tree     Tree
	Flags    []Flag
}

// Inspect reads the skill folder src for review: the tree within its
// caps, its manifest and its red flags. Nothing is written.
func Inspect(src string) (Candidate, error) {
	t, err := ReadTree(src)
	if err != nil {
		return Candidate{}, err
	}
	m, err := Parse("", t.files())
	if err != nil {
		return Candidate{}, err
	}
	return Candidate{Manifest: m, Tree: t, Flags: Scan(t)}, nil
}

// Install copies a reviewed candidate into the library (never a link to
// its source) and pins its hash as trusted. The installed tree is read
// back and must have the reviewed hash.
func (l *Library) Install(ctx context.Context, c Candidate) error {
	name := c.Manifest.Name
	if !nameRe().MatchString(name) {
		return fmt.Errorf("install skill: %w: bad name %q", ErrManifest, name)
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("install skill: %w", err)
	}
	dest := filepath.Join(l.dir, name)
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("install skill %s: %w", name, ErrExists)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(l.dir, ".add-"+name+"-"+hex.EncodeToString(rnd[:]))
	if err := c.Tree.write(tmp); err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	got, err := ReadTree(tmp)
	if err == nil && got.Hash != c.Tree.Hash {
		err = fmt.Errorf("install skill %s: the copy's hash %s is not the reviewed %s", name, got.Hash, c.Tree.Hash)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("install skill %s: %w", name, err)
	}
	return l.pin(ctx, name, c.Tree.Hash)
}

func (l *Library) pin(ctx context.Context, name, hash string) error {
	return l.st.Write(ctx, func(tx *store.Tx) error {
		return tx.PutSkillTrust(store.SkillTrust{Name: name, Hash: hash, TrustedAt: l.now()})
	})
}

// Status is an installed skill as found on disk, with its trust.
type Status struct {
	Name     string
	State    string // one of the State constants
	Problem  string // why it is broken; "" otherwise
	Hash     string // the tree's hash now ("" when broken before hashing)
	Trusted  string // the hash the owner accepted ("" if never)
	Manifest Manifest
	Tree     Tree
}

// Status reads one installed skill and compares it with its pin.
func (l *Library) Status(ctx context.Context, name string) (Status, error) {
	if !nameRe().MatchString(name) {
		return Status{}, fmt.Errorf("skill %q: %w", name, ErrNoSkill)
	}
	dir := filepath.Join(l.dir, name)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return Status{}, fmt.Errorf("skill %s: %w", name, ErrNoSkill)
	}
	s := Status{Name: name}
	pin, err := l.st.SkillTrust(ctx, name)
	switch {
	case err == nil:
		s.Trusted = pin.Hash
	case !errors.Is(err, store.ErrNotFound):
		return Status{}, err
	}
	t, err := ReadTree(dir)
	if err == nil {
		s.Tree, s.Hash = t, t.Hash
		s.Manifest, err = Parse(name, t.files())
	}
	switch {
	case errors.Is(err, ErrTree) || errors.Is(err, ErrManifest):
		s.State, s.Problem = StateBroken, err.Error()
	case err != nil:
		return Status{}, err
	case s.Trusted == "":
		s.State = StateUntrusted
	case s.Trusted != s.Hash:
		s.State = StateChanged
	default:
		s.State = StateTrusted
	}
	return s, nil
}

// List returns every installed skill, by name. Entries whose names are
// not skill names (a half-done add) are skipped.
func (l *Library) List(ctx context.Context) ([]Status, error) {
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	var out []Status
	for _, e := range entries { // ReadDir sorts by name
		if !nameRe().MatchString(e.Name()) {
			continue
		}
		s, err := l.Status(ctx, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Trust pins the skill's current tree, which must still have hash (the
// one the owner was shown) and parse.
func (l *Library) Trust(ctx context.Context, name, hash string) error {
	s, err := l.Status(ctx, name)
	if err != nil {
		return err
	}
	if s.State == StateBroken {
		return fmt.Errorf("trust skill %s: %s", name, s.Problem)
	}
	if s.Hash != hash {
		return fmt.Errorf("trust skill %s: its files changed while you reviewed them (hash %s, shown %s); run the command again", name, short(s.Hash), short(hash))
	}
	return l.pin(ctx, name, hash)
}

// Remove deletes an installed skill and its pin.
func (l *Library) Remove(ctx context.Context, name string) error {
	if _, err := l.Status(ctx, name); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(l.dir, name)); err != nil {
		return fmt.Errorf("remove skill %s: %w", name, err)
	}
	return l.st.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSkillTrust(name) })
}

// Skill is a trusted skill, ready to read or run.
type Skill struct {
	Manifest
	Hash string
	Dir  string // the installed folder
}

// Trusted returns the named skill if its tree is the one the owner
// trusted; ErrNoSkill or ErrUntrusted (wrapped with its state) otherwise.
func (l *Library) Trusted(ctx context.Context, name string) (Skill, error) {
	s, err := l.Status(ctx, name)
	if err != nil {
		return Skill{}, err
	}
	if s.State != StateTrusted {
		return Skill{}, fmt.Errorf("skill %s is %s: %w", name, s.State, ErrUntrusted)
	}
	return Skill{Manifest: s.Manifest, Hash: s.Hash, Dir: filepath.Join(l.dir, name)}, nil
}

// Entry is one line of the skill menu the model sees.
type Entry struct {
	Name        string
	Description string
}

// Menu returns the trusted skills' one-line descriptions, by name; a
// skill that is changed, untrusted or broken is left out.
func (l *Library) Menu(ctx context.Context) ([]Entry, error) {
	list, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, s := range list {
		if s.State == StateTrusted {
			out = append(out, Entry{Name: s.Name, Description: s.Manifest.Description})
		}
	}
	return out, nil
}

// MenuText renders entries for a tool description or system prompt, one
// "- name: description" line each; "" when there are none.
func MenuText(entries []Entry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "- %s: %s\n", e.Name, e.Description)
	}
	return b.String()
}

// short is the first 12 hex digits of a hash, for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
