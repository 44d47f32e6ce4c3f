package approval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// Approval suggestions (`homard approval suggest`): the owner approved the
// same tool on the same folder or host again and again; homard proposes
// the grant that would have covered them — as narrow as the approvals
// were (approval.Patterns: a file's folder, a fetch's exact origin), no
// riskier than the riskiest of them, expiring — and applies nothing until
// the owner accepts one.
const (
	// SuggestWindow is how far back the evidence goes.
	SuggestWindow = 7 * 24 * time.Hour
	// SuggestMin is how many approvals of one kind make a suggestion.
	SuggestMin = 3
	// SuggestTTL is how long an accepted suggestion's grant lasts.
	SuggestTTL = 30 * 24 * time.Hour
)

// ErrNoSuggestion: AcceptSuggestion got a reference to no current
// suggestion.
var ErrNoSuggestion = errors.New("no such suggestion")

// Suggestion is a grant homard proposes from the owner's own approvals.
type Suggestion struct {
	// ID is stable while the suggestion stands: "sg_" and a hash of the
	// tool and the patterns.
	ID       string
	Tool     string
	Patterns []string
	MaxRisk  policy.Risk
	// Count is how many approvals within SuggestWindow it stands for;
	// Last is the newest of them (the grant's provenance).
	Count int
	Last  string
}

// Suggest lists owner's suggestions, the most approved first. Never
// suggested: a critical call (a grant never covers one), a command (its
// grants are argv templates, given per card), a call without targets
// (a grant would cover the whole tool), and what an active always grant
// already covers.
func (s *Service) Suggest(ctx context.Context, owner string) ([]Suggestion, error) {
	now := s.now()
	rows, err := s.st.ApprovedSince(ctx, owner, now.Add(-SuggestWindow))
	if err != nil {
		return nil, err
	}
	grants, err := s.Grants(ctx, owner)
	if err != nil {
		return nil, err
	}
	groups := map[string]*Suggestion{}
	var order []string
	for _, r := range rows { // newest first
		if r.Risk >= int(policy.RiskCritical) || r.Template != "" || len(r.Targets) == 0 {
			continue
		}
		pats := Patterns(r.Targets)
		key := r.Tool + "\x00" + strings.Join(pats, "\x00")
		g, ok := groups[key]
		if !ok {
			sum := sha256.Sum256([]byte(key))
			g = &Suggestion{ID: "sg_" + hex.EncodeToString(sum[:5]), Tool: r.Tool, Patterns: pats, Last: r.ID}
			groups[key] = g
			order = append(order, key)
		}
		g.Count++
		g.MaxRisk = max(g.MaxRisk, policy.Risk(r.Risk))
	}
	var out []Suggestion
	for _, key := range order {
		g := groups[key]
		if g.Count >= SuggestMin && !covered(grants, *g, now) {
			out = append(out, *g)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out, nil
}

// covered reports whether an active always grant already gives what g
// would.
func covered(grants []Grant, g Suggestion, now time.Time) bool {
	return slices.ContainsFunc(grants, func(x Grant) bool {
		return x.Active(now) && x.Scope == ScopeAlways && x.Tool == g.Tool && x.Template == nil &&
			x.MaxRisk >= g.MaxRisk && !slices.ContainsFunc(g.Patterns, func(p string) bool { return !slices.Contains(x.Patterns, p) })
	})
}

// AcceptSuggestion turns one of owner's current suggestions — ref is its
// ID or its number in Suggest's list, from 1 — into an always grant that
// expires after SuggestTTL, and returns it. ErrNoSuggestion when ref
// names none (the evidence may have aged out since it was listed).
func (s *Service) AcceptSuggestion(ctx context.Context, owner, ref string) (Grant, error) {
	list, err := s.Suggest(ctx, owner)
	if err != nil {
		return Grant{}, err
	}
	i := slices.IndexFunc(list, func(g Suggestion) bool { return g.ID == ref })
	if n, err := strconv.Atoi(ref); err == nil && n >= 1 && n <= len(list) {
		i = n - 1
	}
	if i < 0 {
		return Grant{}, fmt.Errorf("%w %q: list them with `homard approval suggest`", ErrNoSuggestion, ref)
	}
	g, now := list[i], s.now()
	row := store.Grant{ID: newID("gr_"), Owner: owner, Tool: g.Tool, Patterns: g.Patterns, MaxRisk: int(g.MaxRisk),
		Scope: string(ScopeAlways), ApprovalID: g.Last, CreatedAt: now, ExpiresAt: now.Add(SuggestTTL)}
	if err := s.st.Write(ctx, func(tx *store.Tx) error { return tx.InsertGrant(row) }); err != nil {
		return Grant{}, fmt.Errorf("accept suggestion %s: %w", g.ID, err)
	}
	return grantFromRow(row), nil
}
