package memory

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/store"
)

// The weekly review (internal/memreview) proposes Changes to memory.md;
// this file holds what is pure about them and the one write that applies
// an approved one:
//
//   - ParseChanges reads the review model's answer strictly, line by line;
//   - CheckChanges keeps the changes that name only units the model was
//     shown, whose texts pass CheckText, and that touch no unit an
//     earlier change touches; it binds each to the texts it was made
//     from (Bound) and counts what it dropped;
//   - Duplicates is the review's deterministic pass: units with the same
//     normalized text, found without a model;
//   - Apply edits only the units a change names, in place, and refuses
//     with ErrStale when their texts are no longer the ones it was made
//     from (a hand edit since the review).

// Change actions.
const (
	// Merge folds duplicates into the first unit named (its new text is
	// Text); the others are removed.
	Merge = "merge"
	// Delete removes a stale or contradicted unit.
	Delete = "delete"
	// Replace gives a unit a new text (a contradiction resolved).
	Replace = "replace"
)

// MaxChanges caps the changes one review answer may propose.
const MaxChanges = 20

// MaxReasonBytes caps a change's reason.
const MaxReasonBytes = 300

// ErrStale: memory.md changed since the review proposed the change.
var ErrStale = errors.New("memory.md changed since this review was made (edited by hand or by another change); run `homard memory review --now` for a new review")

// Change is one proposal of a review.
type Change struct {
	Action string   // Merge, Delete or Replace
	IDs    []string // Merge: two or more; Delete and Replace: one
	Text   string   // Merge and Replace: the unit's new text
	Reason string
	// Bound is the hash of the texts of IDs when the change was made
	// (Bind); Apply refuses a change whose units no longer have them.
	Bound string
}

// ParseChanges reads the review model's answer: one JSON object per line,
// exactly one of
//
//	{"action": "merge", "ids": ["m_…", "m_…"], "text": "…", "reason": "…"}
//	{"action": "delete", "id": "m_…", "reason": "…"}
//	{"action": "replace", "id": "m_…", "text": "…", "reason": "…"}
//
// Anything else on a line (prose, a code fence, unknown or missing
// fields, trailing data) makes the line count for nothing, as malformed;
// the answer is never interpreted beyond that. At most MaxChanges lines
// are read as changes.
func ParseChanges(answer string) (out []Change, malformed int) {
	for line := range strings.Lines(answer) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		if len(out)+malformed >= MaxChanges {
			malformed++
			continue
		}
		c, ok := parseChange(line)
		if !ok {
			malformed++
			continue
		}
		out = append(out, c)
	}
	return out, malformed
}

func parseChange(line string) (Change, bool) {
	var p struct {
		Action *string   `json:"action"`
		ID     *string   `json:"id"`
		IDs    *[]string `json:"ids"`
		Text   *string   `json:"text"`
		Reason *string   `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if dec.Decode(&p) != nil || p.Action == nil {
		return Change{}, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Change{}, false
	}
	c := Change{Action: *p.Action}
	if p.Reason != nil {
		c.Reason = oneLine(*p.Reason)
	}
	if p.Text != nil {
		c.Text = oneLine(*p.Text)
	}
	switch c.Action {
	case Merge:
		if p.IDs == nil || p.ID != nil || p.Text == nil {
			return Change{}, false
		}
		c.IDs = *p.IDs
	case Delete:
		if p.ID == nil || p.IDs != nil || p.Text != nil {
			return Change{}, false
		}
		c.IDs = []string{*p.ID}
	case Replace:
		if p.ID == nil || p.IDs != nil || p.Text == nil {
			return Change{}, false
		}
		c.IDs = []string{*p.ID}
	default:
		return Change{}, false
	}
	return c, true
}

// Bind is the hash of the texts of the units ids names, in that order,
// among units ("" when one is missing).
func Bind(units []Unit, ids []string) string {
	h := sha256.New()
	for _, id := range ids {
		i := slices.IndexFunc(units, func(u Unit) bool { return u.ID == id })
		if i < 0 {
			return ""
		}
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", id, len(units[i].Text), units[i].Text)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CheckChanges keeps the changes that may be shown to the owner: every id
// names a unit of shown (the units the model was shown), a merge names at
// least two distinct ones, a delete or replace one; a new text passes
// CheckText and differs from the unit's; the reason is valid UTF-8 of at
// most MaxReasonBytes; and no unit is touched by an earlier change kept
// (taken, when set, holds units already touched). Each kept change is
// bound to shown's texts. dropped counts the changes that failed a check;
// a change that only overlaps an earlier one is left out without being
// counted.
func (m *Memory) CheckChanges(shown []Unit, changes []Change, taken map[string]bool) (kept []Change, dropped int) {
	if taken == nil {
		taken = map[string]bool{}
	}
	byID := map[string]Unit{}
	for _, u := range shown {
		byID[u.ID] = u
	}
	for _, c := range changes {
		ok, overlap := m.checkChange(byID, c, taken)
		switch {
		case overlap:
		case !ok:
			dropped++
		default:
			for _, id := range c.IDs {
				taken[id] = true
			}
			c.Bound = Bind(shown, c.IDs)
			kept = append(kept, c)
		}
	}
	return kept, dropped
}

func (m *Memory) checkChange(byID map[string]Unit, c Change, taken map[string]bool) (ok, overlap bool) {
	want := 1
	if c.Action == Merge {
		want = 2
	}
	if len(c.IDs) < want || (c.Action != Merge && len(c.IDs) != 1) || len(c.IDs) > MaxChanges {
		return false, false
	}
	if len(c.Reason) > MaxReasonBytes || !utf8.ValidString(c.Reason) {
		return false, false
	}
	seen := map[string]bool{}
	for _, id := range c.IDs {
		if _, shown := byID[id]; !shown || seen[id] {
			return false, false
		}
		seen[id] = true
	}
	for _, id := range c.IDs {
		if taken[id] {
			return false, true
		}
	}
	if c.Action == Delete {
		return c.Text == "", false
	}
	text, err := m.CheckText(c.Text)
	if err != nil || text != c.Text {
		return false, false
	}
	return c.Action == Merge || byID[c.IDs[0]].Text != text, false
}

// Duplicates proposes a merge for every group of units with the same
// normalized text (Normalize), keeping the text of the group's first unit
// in the file; it needs no model.
func Duplicates(units []Unit) []Change {
	var out []Change
	at := map[string]int{} // normalized text → its change in out (-1: none yet)
	first := map[string]Unit{}
	for _, u := range units {
		n := Normalize(u.Text)
		f, seen := first[n]
		switch {
		case n == "":
		case !seen:
			first[n], at[n] = u, -1
		case at[n] < 0:
			at[n] = len(out)
			out = append(out, Change{Action: Merge, IDs: []string{f.ID, u.ID}, Text: f.Text, Reason: "the same note written more than once"})
		default:
			out[at[n]].IDs = append(out[at[n]].IDs, u.ID)
		}
	}
	return out
}

// Apply makes the approved change c to owner's memory.md: a merge gives
// the first unit named c.Text and removes the others, a delete removes
// its unit, a replace gives its unit c.Text; every other section of the
// file is written back as it was. It refuses with ErrStale, changing
// nothing, when the units c names are not all in the file with the texts
// c was bound to.
func (m *Memory) Apply(ctx context.Context, owner string, c Change) error {
	if c.Action != Delete {
		text, err := m.CheckText(c.Text)
		if err != nil {
			return err
		}
		c.Text = text
	}
	f, done, err := m.edit(owner)
	if err != nil {
		return err
	}
	defer done()
	units := f.doc.units()
	if len(c.IDs) == 0 || c.Bound == "" || Bind(units, c.IDs) != c.Bound {
		return ErrStale
	}
	now := m.o.Now().UTC().Truncate(time.Second)
	var kept *Unit
	remove := map[string]bool{}
	for i, id := range c.IDs {
		if i > 0 || c.Action == Delete {
			remove[id] = true
		}
	}
	sections := f.doc.sections[:0:0]
	for _, s := range f.doc.sections {
		if s.unit != nil && remove[s.unit.ID] {
			continue
		}
		if s.unit != nil && s.unit.ID == c.IDs[0] {
			u := *s.unit
			u.Text, u.Updated = c.Text, now
			kept, s.unit = &u, &u
		}
		sections = append(sections, s)
	}
	f.doc.sections = sections
	change := func(tx *store.Tx) error {
		for id := range remove {
			if err := tx.DeleteMemoryUnit(owner, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if kept != nil {
			return tx.PutMemoryUnit(owner, row(owner, *kept))
		}
		return nil
	}
	return m.save(ctx, owner, f, change)
}
