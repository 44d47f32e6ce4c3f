package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/store"
)

// MaxRecall caps how many units one recall returns.
const MaxRecall = 20

// Recall returns owner's unexpired units matching query, best first, at
// most limit (zero means 5; at most MaxRecall). The file is reconciled
// first, so a hand edit is seen at once.
//
// Query terms are those of Tokens. Units holding every term come first,
// ranked by bm25; when no unit holds them all, units holding any term are
// ranked instead. A query whose only terms are single CJK characters
// (which the bigram index cannot find) is answered by a substring scan.
func (m *Memory) Recall(ctx context.Context, owner, query string, limit int) ([]Unit, error) {
	if err := ValidOwner(owner); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 5
	}
	limit = min(limit, MaxRecall)
	_, units, err := m.reconcile(ctx, owner)
	if err != nil {
		return nil, err
	}
	if units == 0 {
		// Nothing indexed (no memory.md yet, or no units in it): no query.
		// This is every turn of a new home, before its first note.
		return nil, nil
	}
	var terms, singles []string
	seen := map[string]bool{}
	Scan(query, func(t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		if r, n := utf8.DecodeRuneInString(t); n == len(t) && IsCJK(r) {
			singles = append(singles, t)
		} else {
			terms = append(terms, t)
		}
	})
	now := m.o.Now()
	var rows []store.MemoryUnit
	switch {
	case len(terms) > 0:
		rows, err = m.o.Store.SearchMemory(ctx, owner, terms, false, now, limit)
		if err == nil && len(rows) == 0 && len(terms) > 1 {
			rows, err = m.o.Store.SearchMemory(ctx, owner, terms, true, now, limit)
		}
	case len(singles) > 0:
		rows, err = m.o.Store.ScanMemory(ctx, owner, singles, now, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("recall: %w", err)
	}
	out := make([]Unit, len(rows))
	for i, r := range rows {
		out[i] = fromRow(r)
	}
	return out, nil
}

func fromRow(r store.MemoryUnit) Unit {
	return Unit{ID: r.ID, Kind: Kind(r.Kind), Text: r.Text, Source: r.Source,
		Created: r.CreatedAt, Updated: r.UpdatedAt, Expires: r.ExpiresAt}
}

// Reconcile re-indexes owner's memory when memory.md changed since it was
// last indexed, and reports whether it did. The common case costs a stat
// and one indexed query; a changed stat costs a read and a hash, and a
// changed hash a parse and a rebuild of owner's projection.
func (m *Memory) Reconcile(ctx context.Context, owner string) (bool, error) {
	changed, _, err := m.reconcile(ctx, owner)
	return changed, err
}

// reconcile is Reconcile that also returns how many units the projection
// now holds, or -1 when it did not count them.
func (m *Memory) reconcile(ctx context.Context, owner string) (changed bool, units int, err error) {
	p, err := m.Path(owner)
	if err != nil {
		return false, -1, err
	}
	src, err := m.o.Store.MemorySource(ctx, owner)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, -1, err
	}
	known := err == nil
	if known && statMatches(p, src) && !racy(src) {
		return false, src.Units, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f, err := m.load(owner)
	if err != nil {
		return false, -1, err
	}
	if known && f.fp.sha == src.SHA256 && f.fp.size == src.Size {
		// Touched (or racy), not changed: remember the stat and when it
		// was checked.
		err := m.o.Store.Write(ctx, func(tx *store.Tx) error { return tx.SetMemorySource(m.source(owner, f.doc, f.fp)) })
		return false, -1, err
	}
	return true, -1, m.index(ctx, owner, f.doc, f.fp)
}

// racyWindow: a file modified this shortly before it was indexed may have
// been changed again within the file system's timestamp granularity
// without its size changing, so its stat proves nothing (as with git's
// "racy" index entries); it is hashed instead. A hash that still matches
// records a new IndexedAt, so the file stops being racy once the window
// has passed.
const racyWindow = 2 * time.Second

func racy(src store.MemorySource) bool { return src.IndexedAt.Sub(src.ModTime) < racyWindow }

// statMatches reports whether the file at p has the size and modification
// time recorded in src (both "missing" counts as a match).
func statMatches(p string, src store.MemorySource) bool {
	fi, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) {
		return src.Size == -1
	}
	return err == nil && fi.Size() == src.Size && fi.ModTime().Equal(src.ModTime)
}

// Rebuild re-indexes owner's memory from memory.md whether or not it
// changed. Running it twice gives the same projection.
func (m *Memory) Rebuild(ctx context.Context, owner string) (Status, error) {
	m.mu.Lock()
	f, err := m.load(owner)
	if err == nil {
		err = m.index(ctx, owner, f.doc, f.fp)
	}
	m.mu.Unlock()
	if err != nil {
		return Status{}, err
	}
	return m.Status(ctx, owner)
}

// List returns every unit of owner's memory.md (expired ones included) and
// the sections that could not be read, in file order. It reconciles the
// index first.
func (m *Memory) List(ctx context.Context, owner string) ([]Unit, []Problem, error) {
	if _, err := m.Reconcile(ctx, owner); err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	f, err := m.load(owner)
	m.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	return f.doc.units(), f.doc.problems(), nil
}

// Status compares owner's memory.md with the projection.
type Status struct {
	Path     string
	Units    int       // readable units in the file
	Problems []Problem // unreadable sections, kept in the file
	Indexed  int       // units in the projection
	// Drift explains how the projection differs from the file; empty when
	// it matches. Recall and List reconcile drift by themselves.
	Drift string
}

// Status reads owner's file and the projection without changing either.
func (m *Memory) Status(ctx context.Context, owner string) (Status, error) {
	m.mu.Lock()
	f, err := m.load(owner)
	m.mu.Unlock()
	if err != nil {
		return Status{}, err
	}
	st := Status{Path: f.path, Units: len(f.doc.units()), Problems: f.doc.problems()}
	if st.Indexed, err = m.o.Store.CountMemoryUnits(ctx, owner); err != nil {
		return Status{}, err
	}
	src, err := m.o.Store.MemorySource(ctx, owner)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if st.Units > 0 || len(st.Problems) > 0 {
			st.Drift = "memory.md was never indexed"
		}
	case err != nil:
		return Status{}, err
	case src.SHA256 != f.fp.sha || src.Size != f.fp.size:
		st.Drift = "memory.md changed since it was last indexed"
	case st.Indexed != st.Units:
		st.Drift = fmt.Sprintf("the index holds %d units, memory.md %d", st.Indexed, st.Units)
	}
	return st, nil
}

// Unit returns the unit id as memory.md has it now, without touching the
// index (Prepare uses it to show what forget would remove).
func (m *Memory) Unit(owner, id string) (Unit, error) {
	m.mu.Lock()
	f, err := m.load(owner)
	m.mu.Unlock()
	if err != nil {
		return Unit{}, err
	}
	for _, u := range f.doc.units() {
		if u.ID == id {
			return u, nil
		}
	}
	for _, p := range f.doc.problems() {
		if p.ID == id {
			return Unit{ID: id, Text: "(unreadable section at line " + fmt.Sprint(p.Line) + ": " + p.Reason + ")"}, nil
		}
	}
	return Unit{}, fmt.Errorf("%w: %s", ErrNotFound, id)
}

// questionWords are left out of a message before it is used as a recall
// query, with the stopwords: "what tea do I like?" asks about tea.
var questionWords = map[string]bool{
	"what": true, "which": true, "who": true, "whom": true, "where": true, "when": true, "why": true, "how": true,
	"do": true, "does": true, "did": true, "can": true, "could": true, "would": true, "should": true, "will": true,
	"you": true, "your": true, "please": true, "know": true, "tell": true, "it": true, "this": true, "for": true,
	"in": true, "on": true, "at": true, "with": true, "about": true, "again": true, "remember": true,
}

// Relevant returns owner's units most relevant to message (the owner's
// message of a turn), at most limit: Recall over the message's words
// without common and question words. A message of only such words
// recalls nothing.
func (m *Memory) Relevant(ctx context.Context, owner, message string, limit int) ([]Unit, error) {
	var q []string
	Scan(message, func(t string) {
		if !stopwords[t] && !questionWords[t] {
			q = append(q, t)
		}
	})
	if len(q) == 0 {
		return nil, nil
	}
	return m.Recall(ctx, owner, strings.Join(q, " "), limit)
}
