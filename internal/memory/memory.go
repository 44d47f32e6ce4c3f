// Package memory is what homard remembers about its owner. The truth is a
// Markdown file per owner, memory/<owner>/memory.md under the data folder,
// that a person can read and edit in any editor; the SQLite FTS5 tables in
// store are a projection of it, rebuilt from the file at any time.
//
// Contract:
//   - Remember writes the file atomically (temp file, fsync, rename; mode
//     0600 in a 0700 folder) before it reports success, then updates the
//     projection. Text holding a secret is refused before anything is
//     written.
//   - Before every recall the file's stat is compared with the fingerprint
//     of the last indexing; a changed file is parsed and re-indexed, so a
//     hand edit is seen by the next recall.
//   - A section of the file that cannot be read is kept in the file as
//     written, left out of the index and reported (Drift, List), never
//     silently dropped.
//   - Owner names become paths only after ValidOwner. Who may call these
//     methods (only the owner, never a guest) is decided by the caller; the
//     tools refuse every other trust level.
//   - Notes proposed from conversations (automatic capture) are candidates
//     in SQLite, not units: Offer buffers one, promotes it to memory.md when
//     a later capture proposes it again, and sends a preference that
//     contradicts a remembered one to review, never over it; the owner
//     accepts or dismisses (candidates.go). A candidate holding a secret is
//     refused before it is stored.
//   - Memory is data: nothing here reaches policy or permissions.
package memory

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/atomicfile"
	"github.com/homard/homard/internal/filelock"
	"github.com/homard/homard/internal/store"
)

// Errors the tools and the CLI turn into messages.
var (
	// ErrSecret: the text holds a secret and was not remembered.
	ErrSecret = errors.New("the text contains a secret; secrets are never remembered (keep them in the vault: homard secret set)")
	// ErrNotFound: no unit has that id.
	ErrNotFound = errors.New("no memory unit has that id")
	// ErrOwner: the owner name cannot be a folder name.
	ErrOwner = errors.New("invalid owner name")
	// ErrText: the text is empty or too long.
	ErrText = errors.New("invalid memory text")
)

// MaxTextBytes caps one unit's text.
const MaxTextBytes = 2000

// Options configure a Memory.
type Options struct {
	// Dir holds one folder per owner (data/memory). Required.
	Dir   string
	Store *store.Store // required
	// Secret reports whether text holds a secret, and its kind. Required:
	// the app passes the arbiter's redactor. One-time codes are checked
	// here in addition (see OneTimeCode).
	Secret func(text string) (kind string, found bool)
	// Now is the clock. Zero means time.Now.
	Now func() time.Time
}

// Memory is the service. It is safe for concurrent use; writes to one
// owner's memory.md are serialised across processes too (an advisory
// lock on memory/<owner>/.lock, where the system has flock). An editor
// does not take that lock: a hand edit saved during a write may be lost
// (the file is never torn).
type Memory struct {
	o   Options
	mu  sync.Mutex // serialises read-modify-write of the files and re-indexing
	cmu sync.Mutex // serialises read-modify-write of candidates; taken before mu, never after
}

// New builds a Memory.
func New(o Options) *Memory {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Memory{o: o}
}

// ValidOwner reports whether owner is usable as a folder name: 1 to 64
// ASCII letters, digits, '.', '_' or '-', not starting with '.'.
func ValidOwner(owner string) error {
	if owner == "" || len(owner) > 64 || owner[0] == '.' {
		return fmt.Errorf("%w %q", ErrOwner, owner)
	}
	for i := 0; i < len(owner); i++ {
		c := owner[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w %q", ErrOwner, owner)
		}
	}
	return nil
}

// Path is owner's memory.md.
func (m *Memory) Path(owner string) (string, error) {
	if err := ValidOwner(owner); err != nil {
		return "", err
	}
	return filepath.Join(m.o.Dir, owner, "memory.md"), nil
}

// Note is what Remember is asked to keep.
type Note struct {
	Text   string
	Kind   Kind          // zero: fact
	TTL    time.Duration // zero: never expires
	Source string        // zero: "owner"
}

// CheckText normalises a note's text (one line, trimmed) and refuses it
// when it is empty, too long, or holds a secret. The error never quotes
// the text.
func (m *Memory) CheckText(text string) (string, error) {
	text = oneLine(text)
	if text == "" {
		return "", fmt.Errorf("%w: the text is empty", ErrText)
	}
	if len(text) > MaxTextBytes || !utf8.ValidString(text) {
		return "", fmt.Errorf("%w: the text must be valid UTF-8 of at most %d bytes", ErrText, MaxTextBytes)
	}
	if kind, found := m.secret(text); found {
		return "", fmt.Errorf("%w (%s)", ErrSecret, kind)
	}
	return text, nil
}

func (m *Memory) secret(text string) (string, bool) {
	if OneTimeCode(text) {
		return "one-time-code", true
	}
	if m.o.Secret == nil {
		return "no secret check configured", true // fail closed
	}
	return m.o.Secret(text)
}

// Remember adds a unit to owner's memory.md and to the index.
func (m *Memory) Remember(ctx context.Context, owner string, n Note) (Unit, error) {
	return m.add(ctx, owner, n, "")
}

// add is Remember; replace, when set, names a unit removed in the same
// write, which must exist.
func (m *Memory) add(ctx context.Context, owner string, n Note, replace string) (Unit, error) {
	text, err := m.CheckText(n.Text)
	if err != nil {
		return Unit{}, err
	}
	if n.Kind == "" {
		n.Kind = KindFact
	}
	if _, err := ParseKind(string(n.Kind)); err != nil {
		return Unit{}, err
	}
	if n.Source == "" {
		n.Source = "owner"
	}
	if n.TTL < 0 {
		return Unit{}, fmt.Errorf("%w: a negative time to live", ErrText)
	}
	f, done, err := m.edit(owner)
	if err != nil {
		return Unit{}, err
	}
	defer done()
	if replace != "" {
		kept := f.doc.sections[:0:0]
		for _, s := range f.doc.sections {
			if s.unit == nil || s.unit.ID != replace {
				kept = append(kept, s)
			}
		}
		if len(kept) == len(f.doc.sections) {
			return Unit{}, fmt.Errorf("replace %s: %w", replace, ErrNotFound)
		}
		f.doc.sections = kept
	}
	now := m.o.Now().UTC().Truncate(time.Second)
	u := Unit{ID: newID(), Kind: n.Kind, Text: text, Source: oneLine(n.Source), Created: now, Updated: now}
	if n.TTL > 0 {
		u.Expires = now.Add(n.TTL)
	}
	f.doc.sections = append(f.doc.sections, section{unit: &u})
	put := func(tx *store.Tx) error {
		if replace != "" {
			if err := tx.DeleteMemoryUnit(owner, replace); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return tx.PutMemoryUnit(owner, row(owner, u))
	}
	if err := m.save(ctx, owner, f, put); err != nil {
		return Unit{}, err
	}
	return u, nil
}

// Forget removes the unit id from owner's memory.md and from the index.
// A section with that id that could not be parsed is removed too.
func (m *Memory) Forget(ctx context.Context, owner, id string) (Unit, error) {
	f, done, err := m.edit(owner)
	if err != nil {
		return Unit{}, err
	}
	defer done()
	var gone *Unit
	kept := f.doc.sections[:0:0]
	for _, s := range f.doc.sections {
		switch {
		case s.unit != nil && s.unit.ID == id:
			gone = s.unit
		case s.problem != nil && s.problem.ID == id:
			if gone == nil {
				gone = &Unit{ID: id}
			}
		default:
			kept = append(kept, s)
		}
	}
	if gone == nil {
		return Unit{}, fmt.Errorf("forget %s: %w", id, ErrNotFound)
	}
	f.doc.sections = kept
	del := func(tx *store.Tx) error {
		if err := tx.DeleteMemoryUnit(owner, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		return nil
	}
	return *gone, m.save(ctx, owner, f, del)
}

// lock takes the cross-process lock on owner's folder; m.mu must be held.
func (m *Memory) lock(owner string) (func(), error) {
	p, err := m.Path(owner)
	if err != nil {
		return nil, err
	}
	// The lock file orders a CLI command's edit and the daemon's.
	return filelock.Lock(filepath.Join(filepath.Dir(p), ".lock"))
}

// edit takes m.mu and the cross-process lock on owner's folder and loads
// owner's file, to change it; done releases both locks.
func (m *Memory) edit(owner string) (f *file, done func(), err error) {
	m.mu.Lock()
	unlock, err := m.lock(owner)
	if err != nil {
		m.mu.Unlock()
		return nil, nil, err
	}
	if f, err = m.load(owner); err != nil {
		unlock()
		m.mu.Unlock()
		return nil, nil, err
	}
	return f, func() { unlock(); m.mu.Unlock() }, nil
}

// file is one owner's memory.md as read from disk.
type file struct {
	path string
	doc  *document
	fp   fingerprint
}

type fingerprint struct {
	size  int64 // -1: no file
	mtime time.Time
	sha   string
}

// load reads and parses owner's file (missing: empty).
func (m *Memory) load(owner string) (*file, error) {
	p, err := m.Path(owner)
	if err != nil {
		return nil, err
	}
	data, fp, err := readFile(p)
	if err != nil {
		return nil, err
	}
	return &file{path: p, doc: parse(string(data), fp.mtime), fp: fp}, nil
}

func readFile(p string) ([]byte, fingerprint, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fingerprint{size: -1}, nil
	}
	if err != nil {
		return nil, fingerprint{}, fmt.Errorf("read memory: %w", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fingerprint{}, fmt.Errorf("read memory: %w", err)
	}
	sum := sha256.Sum256(data)
	// The stat is taken after the read: if the file changes in between,
	// the next check sees a stat that differs and reads it again.
	return data, fingerprint{size: fi.Size(), mtime: fi.ModTime(), sha: hex.EncodeToString(sum[:])}, nil
}

// save writes f's document atomically, then brings the projection up to
// date: with change alone when the index matched the file f was read from
// (one unit added or removed), else by re-indexing every unit.
func (m *Memory) save(ctx context.Context, owner string, f *file, change func(*store.Tx) error) error {
	src, err := m.o.Store.MemorySource(ctx, owner)
	inSync := err == nil && src.SHA256 == f.fp.sha && src.Size == f.fp.size
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	for _, s := range f.doc.sections {
		if s.unit != nil {
			s.unit.NoID = false // written with its id from now on
		}
	}
	data := f.doc.format()
	if err := writeAtomic(f.path, data); err != nil {
		return err
	}
	fi, err := os.Stat(f.path)
	if err != nil {
		return fmt.Errorf("write memory: %w", err)
	}
	sum := sha256.Sum256(data)
	fp := fingerprint{size: fi.Size(), mtime: fi.ModTime(), sha: hex.EncodeToString(sum[:])}
	if !inSync {
		return m.index(ctx, owner, f.doc, fp)
	}
	err = m.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := change(tx); err != nil {
			return err
		}
		return tx.SetMemorySource(m.source(owner, f.doc, fp))
	})
	if err != nil {
		return fmt.Errorf("index memory: %w", err)
	}
	return nil
}

func (m *Memory) source(owner string, doc *document, fp fingerprint) store.MemorySource {
	var units, problems int
	for _, s := range doc.sections {
		if s.unit != nil {
			units++
		} else {
			problems++
		}
	}
	// IndexedAt is compared with the file's mtime (see racy), so it is
	// the system clock, not Options.Now.
	return store.MemorySource{Owner: owner, Size: fp.size, ModTime: fp.mtime, SHA256: fp.sha,
		Units: units, Problems: problems, IndexedAt: time.Now()}
}

// row is u's projection row, with its search terms.
func row(owner string, u Unit) store.MemoryUnit {
	var terms strings.Builder
	Scan(u.Text, func(t string) {
		if terms.Len() > 0 {
			terms.WriteByte(' ')
		}
		terms.WriteString(t)
	})
	return store.MemoryUnit{Owner: owner, ID: u.ID, Kind: string(u.Kind), Text: u.Text, Source: u.Source,
		Terms: terms.String(), CreatedAt: u.Created, UpdatedAt: u.Updated, ExpiresAt: u.Expires}
}

// writeAtomic replaces path with data (atomicfile.Write): the folder is
// created 0700 and the file is 0600.
func writeAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("write memory: %w", err)
	}
	return nil
}

// index replaces owner's projection with doc's units.
func (m *Memory) index(ctx context.Context, owner string, doc *document, fp fingerprint) error {
	units := doc.units()
	rows := make([]store.MemoryUnit, len(units))
	for i, u := range units {
		rows[i] = row(owner, u)
	}
	src := m.source(owner, doc, fp)
	err := m.o.Store.Write(ctx, func(tx *store.Tx) error { return tx.ReplaceMemory(owner, rows, src) })
	if err != nil {
		return fmt.Errorf("index memory: %w", err)
	}
	return nil
}

func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return idPrefix + hex.EncodeToString(b[:])
}
