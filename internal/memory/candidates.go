package memory

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/store"
)

// Candidate statuses. A candidate is a note proposed from a conversation
// (automatic capture), not yet in memory.md.
const (
	// Buffered: seen once; promoted when seen again or accepted.
	Buffered = "buffered"
	// Promoted: written to memory.md (Candidate.UnitID).
	Promoted = "promoted"
	// Review: it contradicts a remembered preference (ConflictsWith);
	// only the owner decides (accept, optionally replacing it, or dismiss).
	Review = "review"
	// Dismissed: the owner said no. Proposed again, it stays dismissed.
	Dismissed = "dismissed"
	// Known: Offer found the same note in memory.md already; nothing was
	// stored. Never a stored status.
	Known = "known"
)

// CandidateTTL is how long a buffered candidate waits to be seen again.
const CandidateTTL = 14 * 24 * time.Hour

// MaxCandidateBytes caps a proposed note: capture is for short notes.
const MaxCandidateBytes = 300

// ErrCandidate: no candidate of the owner has that id, or it is not
// waiting for a decision.
var ErrCandidate = errors.New("no memory candidate waiting with that id")

// Candidate is a proposed note and where it stands.
type Candidate struct {
	ID        string
	Text      string
	Kind      Kind
	FirstSeen time.Time
	LastSeen  time.Time
	Seen      int    // how many turns proposed it
	Source    string // the session and turn that first proposed it
	Status    string
	// ConflictsWith is the unit a Review candidate contradicts.
	ConflictsWith string
	// UnitID is the unit a Promoted candidate became.
	UnitID string
}

// Proposal is a note as the capture step proposes it.
type Proposal struct {
	Text string
	Kind Kind
}

// Offer records that a turn (source, e.g. "session cli turn 3") proposed
// p for owner, and reports what became of it:
//
//   - text that CheckText refuses (a secret, a one-time code) is refused
//     with its error and stored nowhere; the error never quotes the text;
//   - a note memory.md already holds (same normalized text) is Known;
//   - a preference that contradicts a remembered one (Conflict) goes to
//     Review and is never written over it;
//   - otherwise it is Buffered the first time and Promoted (written to
//     memory.md with source) the second time a turn proposes it;
//   - a Dismissed or earlier Promoted candidate is not proposed again
//     (what the owner dismissed or forgot stays so).
func (m *Memory) Offer(ctx context.Context, owner, source string, p Proposal) (Candidate, error) {
	if err := ValidOwner(owner); err != nil {
		return Candidate{}, err
	}
	text, err := m.CheckText(p.Text)
	if err != nil {
		return Candidate{}, err
	}
	if len(text) > MaxCandidateBytes {
		return Candidate{}, fmt.Errorf("%w: a proposed note is at most %d bytes", ErrText, MaxCandidateBytes)
	}
	if p.Kind == "" {
		p.Kind = KindFact
	}
	if _, err := ParseKind(string(p.Kind)); err != nil {
		return Candidate{}, err
	}
	norm := Normalize(text)
	if norm == "" {
		return Candidate{}, fmt.Errorf("%w: nothing but common words", ErrText)
	}
	m.cmu.Lock()
	defer m.cmu.Unlock()
	now := m.o.Now().UTC()
	if err := m.o.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ExpireMemoryCandidates(owner, now.Add(-CandidateTTL))
		return err
	}); err != nil {
		return Candidate{}, err
	}
	known, conflict, err := m.relate(ctx, owner, text, p.Kind, norm)
	if err != nil {
		return Candidate{}, err
	}
	if known != "" {
		return Candidate{Text: text, Kind: p.Kind, Status: Known, UnitID: known}, nil
	}
	row, err := m.o.Store.MemoryCandidateByNorm(ctx, owner, norm)
	switch {
	case errors.Is(err, store.ErrNotFound):
		row = store.MemoryCandidate{ID: newCandidateID(), Owner: owner, Norm: norm, Text: text, Kind: string(p.Kind),
			FirstSeen: now, LastSeen: now, Seen: 1, Source: oneLine(source), Status: Buffered}
		if conflict != "" {
			row.Status, row.ConflictsWith = Review, conflict
		}
		return m.putCandidate(ctx, row)
	case err != nil:
		return Candidate{}, err
	}
	switch row.Status {
	case Dismissed, Promoted:
		return fromCandidateRow(row), nil
	}
	row.Seen++
	row.LastSeen = now
	if row.Status == Buffered && conflict != "" {
		row.Status, row.ConflictsWith = Review, conflict
	}
	if row.Status == Buffered && row.Seen >= 2 {
		return m.promote(ctx, owner, row, "")
	}
	return m.putCandidate(ctx, row)
}

// promote writes row to memory.md (replacing unit replace, when set, in
// the same write) and marks it Promoted.
func (m *Memory) promote(ctx context.Context, owner string, row store.MemoryCandidate, replace string) (Candidate, error) {
	u, err := m.add(ctx, owner, Note{Text: row.Text, Kind: Kind(row.Kind), Source: row.Source}, replace)
	if err != nil {
		return Candidate{}, err
	}
	row.Status, row.UnitID = Promoted, u.ID
	return m.putCandidate(ctx, row)
}

func (m *Memory) putCandidate(ctx context.Context, row store.MemoryCandidate) (Candidate, error) {
	if err := m.o.Store.Write(ctx, func(tx *store.Tx) error { return tx.PutMemoryCandidate(row) }); err != nil {
		return Candidate{}, err
	}
	return fromCandidateRow(row), nil
}

// Candidates lists owner's candidates waiting for a decision (Buffered
// and Review), oldest first; expired buffered ones are deleted first.
func (m *Memory) Candidates(ctx context.Context, owner string) ([]Candidate, error) {
	if err := ValidOwner(owner); err != nil {
		return nil, err
	}
	cutoff := m.o.Now().UTC().Add(-CandidateTTL)
	if err := m.o.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.ExpireMemoryCandidates(owner, cutoff)
		return err
	}); err != nil {
		return nil, err
	}
	rows, err := m.o.Store.MemoryCandidates(ctx, owner, Review, Buffered)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, len(rows))
	for i, r := range rows {
		out[i] = fromCandidateRow(r)
	}
	return out, nil
}

// Accept promotes owner's waiting candidate id to memory.md. replace, when
// set, is a unit forgotten in the same write (the old preference a Review
// candidate contradicts); it must exist.
func (m *Memory) Accept(ctx context.Context, owner, id, replace string) (Candidate, error) {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	row, err := m.waiting(ctx, owner, id)
	if err != nil {
		return Candidate{}, err
	}
	row.LastSeen = m.o.Now().UTC()
	return m.promote(ctx, owner, row, replace)
}

// Dismiss marks owner's waiting candidate id Dismissed: it is not
// proposed again.
func (m *Memory) Dismiss(ctx context.Context, owner, id string) (Candidate, error) {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	row, err := m.waiting(ctx, owner, id)
	if err != nil {
		return Candidate{}, err
	}
	row.Status, row.LastSeen = Dismissed, m.o.Now().UTC()
	return m.putCandidate(ctx, row)
}

func (m *Memory) waiting(ctx context.Context, owner, id string) (store.MemoryCandidate, error) {
	if err := ValidOwner(owner); err != nil {
		return store.MemoryCandidate{}, err
	}
	row, err := m.o.Store.MemoryCandidate(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && row.Status != Buffered && row.Status != Review {
		return store.MemoryCandidate{}, fmt.Errorf("%w: %s", ErrCandidate, id)
	}
	return row, err
}

// relate compares a proposed note with owner's memory: known is the id of
// a unit with the same normalized text; conflict, for a preference, the
// id of a remembered preference it may contradict (see Conflicts).
func (m *Memory) relate(ctx context.Context, owner, text string, kind Kind, norm string) (known, conflict string, err error) {
	subject := Subject(norm)
	if len(subject) == 0 {
		return "", "", nil
	}
	hits, err := m.Recall(ctx, owner, strings.Join(subject, " "), MaxRecall)
	if err != nil {
		return "", "", err
	}
	for _, u := range hits {
		un := Normalize(u.Text)
		if un == norm {
			return u.ID, "", nil
		}
		if conflict == "" && kind == KindPreference && u.Kind == KindPreference && Conflicts(norm, un) {
			conflict = u.ID
		}
	}
	return "", conflict, nil
}

// Conflicts is the contradiction heuristic for two preferences, given
// their normalized texts: they differ, and they share a subject word
// (Subject: what is left after preference verbs and negations are
// removed), as "prefers oolong tea" and "no longer likes tea, prefers
// coffee" share "tea". It errs on the side of asking: two compatible
// preferences about the same thing go to review too, which costs the
// owner one command, where a wrong overwrite would lose a memory.
func Conflicts(normA, normB string) bool {
	if normA == normB {
		return false
	}
	b := Subject(normB)
	for _, w := range Subject(normA) {
		if slices.Contains(b, w) {
			return true
		}
	}
	return false
}

// stopwords are left out of normalized text: the same note phrased "I
// prefer oolong tea" or "The owner prefers oolong tea" is the same note.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "i": true, "me": true, "my": true, "mine": true, "m": true, "s": true,
	"owner": true, "user": true, "is": true, "am": true, "are": true, "be": true, "that": true, "to": true,
	"of": true, "and": true, "really": true, "very": true, "also": true, "he": true, "she": true, "they": true,
	"his": true, "her": true, "their": true,
}

// opinion words are not a subject: two preferences about tea conflict,
// two sentences with "prefer" in them need not.
var opinion = map[string]bool{
	"prefer": true, "like": true, "love": true, "enjoy": true, "want": true, "hate": true, "dislike": true,
	"favorite": true, "favourite": true, "no": true, "not": true, "never": true, "longer": true, "instead": true,
	"don": true, "t": true, "doesn": true, "anymore": true, "any": true, "more": true, "over": true, "rather": true,
	"than": true, "now": true, "always": true, "usually": true, "drink": true, "eat": true, "use": true, "with": true,
	"without": true, "in": true, "on": true, "for": true, "at": true,
}

// Normalize is the form in which two proposed notes are "the same": the
// Tokens of text without common words (stopwords), a plural or third
// person "s" cut from words of four letters or more ("prefers" →
// "prefer"), space-joined.
func Normalize(text string) string {
	var b strings.Builder
	Scan(text, func(t string) {
		if stopwords[t] {
			return
		}
		if len(t) >= 4 && strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") {
			t = t[:len(t)-1]
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	})
	return b.String()
}

// Subject is the words of a normalized text that say what it is about:
// opinion and negation words and function words are left out.
func Subject(norm string) []string {
	var out []string
	for _, w := range strings.Fields(norm) {
		if !opinion[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func fromCandidateRow(r store.MemoryCandidate) Candidate {
	return Candidate{ID: r.ID, Text: r.Text, Kind: Kind(r.Kind), FirstSeen: r.FirstSeen, LastSeen: r.LastSeen,
		Seen: r.Seen, Source: r.Source, Status: r.Status, ConflictsWith: r.ConflictsWith, UnitID: r.UnitID}
}

func newCandidateID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return "c_" + hex.EncodeToString(b[:])
}
