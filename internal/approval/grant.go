package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// Grant is a standing permission made by a session or always approval:
// owner may run tool (in Session, or in any session when it is empty) on
// targets covered by Patterns, for Plans up to MaxRisk, until ExpiresAt.
type Grant struct {
	ID         string
	Owner      string
	Session    string // empty for scope always
	Tool       string
	Patterns   []string // empty: only Plans without targets
	MaxRisk    policy.Risk
	Scope      Scope
	ApprovalID string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	RevokedAt  time.Time // zero while not revoked
	// Template makes a command grant: it covers only commands that fit
	// this argv template (policy.Template.Covers), never by Patterns.
	Template *policy.Template
}

// Active reports whether g is unrevoked and unexpired at now.
func (g Grant) Active(now time.Time) bool {
	return g.RevokedAt.IsZero() && now.Before(g.ExpiresAt)
}

// Covers reports whether g's patterns cover a Plan with these targets.
// A grant with patterns covers a Plan only if every target matches one of
// them; it never covers a Plan without targets. A grant without patterns
// (made from a Plan without targets) covers only Plans without targets: it
// never reaches paths the owner was never shown.
//
// Matching is policy.MatchPath with two restrictions: a folder pattern
// "dir/**" covers what is inside dir but not dir itself (a grant to write
// notes/a.md must not cover deleting notes) and only clean relative
// paths ("notes/", "notes//x", "notes/./x" are not), and a target with a
// ".." element is never covered.
func (g Grant) Covers(targets []string) bool {
	if len(g.Patterns) == 0 || len(targets) == 0 {
		return len(g.Patterns) == 0 && len(targets) == 0
	}
	for _, t := range targets {
		if !slices.ContainsFunc(g.Patterns, func(p string) bool { return coversPath(p, t) }) {
			return false
		}
	}
	return true
}

func coversPath(pattern, target string) bool {
	if slices.Contains(strings.Split(target, "/"), "..") {
		return false // policy.MatchPath lets "**" match across ".."
	}
	if dir, ok := strings.CutSuffix(pattern, "/**"); ok {
		// "dir/*/**": at least one element below dir. Only clean paths:
		// in "notes/" or "notes//x" the "*" would match an empty element.
		return cleanRelative(target) && policy.MatchPath(dir+"/*/**", target)
	}
	// An exact pattern is the escaped target it was made from; compare it
	// literally so targets MatchPath will not match (URLs with "//") still
	// cover themselves, and only themselves.
	return pattern == escapeGlob(target) || policy.MatchPath(pattern, target)
}

func (s *Service) grantFor(a store.Approval, scope Scope, now time.Time) store.Grant {
	g := store.Grant{
		ID: newID("gr_"), Owner: a.Owner, Tool: a.Tool, Patterns: Patterns(a.Targets),
		MaxRisk: a.Risk, Scope: string(scope), ApprovalID: a.ID, CreatedAt: now, Template: a.Template,
	}
	if scope == ScopeSession {
		g.SessionID = a.SessionID
		g.ExpiresAt = now.Add(s.sessionTTL)
	} else {
		g.ExpiresAt = now.Add(s.alwaysTTL)
	}
	return g
}

// MatchGrant finds an active grant of owner for tool that applies to
// session, covers every target and covers risk. A critical risk is never
// covered by a grant.
func (s *Service) MatchGrant(ctx context.Context, owner, session, tool string, targets []string, risk policy.Risk) (Grant, bool, error) {
	if risk < policy.RiskLow || risk >= policy.RiskCritical || owner == "" || tool == "" {
		return Grant{}, false, nil
	}
	grants, err := s.activeGrants(ctx, "match grant", owner, session, tool, risk)
	if err != nil {
		return Grant{}, false, err
	}
	for _, g := range grants {
		if g.Template == nil && g.Covers(targets) {
			return g, true, nil
		}
	}
	return Grant{}, false, nil
}

// MatchCommandGrant finds an active command grant of owner for tool that
// applies to session, covers risk and whose template covers call, the
// proposed command's template; inside resolves slot operands on disk
// (policy.Inside; nil covers no slot). A critical risk is never covered;
// a command that runs code only by a session grant of a graded template
// (policy.Template.Covers), and only when it runs graded too: never by an
// always grant. Grants without a template (path grants, and command
// grants made before templates) never cover a command.
//
// A covered call still runs on the overlay, and its change set still
// passes the gate under the mode's limit (changeset.Limit with nothing
// approved above it): a grant decides the call, never its effects.
func (s *Service) MatchCommandGrant(ctx context.Context, owner, session, tool string, call policy.Template, risk policy.Risk, inside policy.Inside) (Grant, bool, error) {
	if risk < policy.RiskLow || risk >= policy.RiskCritical || owner == "" || tool == "" || call.RunsCode && !call.Graded {
		return Grant{}, false, nil
	}
	grants, err := s.activeGrants(ctx, "match command grant", owner, session, tool, risk)
	if err != nil {
		return Grant{}, false, err
	}
	for _, g := range grants {
		if g.Template == nil {
			continue
		}
		if g.Template.RunsCode && (g.Scope != ScopeSession || g.Session == "") {
			continue // code is granted for its session at most (scopeRefused)
		}
		if g.Template.Covers(call, inside) {
			return g, true, nil
		}
	}
	return Grant{}, false, nil
}

// activeGrants returns owner's grants for tool, active now, that apply to
// session and may cover risk (below critical). The store filtered on all
// but the patterns; each is checked again here so a query mistake cannot
// widen a grant. op names the match in errors.
func (s *Service) activeGrants(ctx context.Context, op, owner, session, tool string, risk policy.Risk) ([]Grant, error) {
	now := s.now()
	rows, err := s.st.ActiveGrants(ctx, owner, session, tool, int(risk), now)
	if err != nil {
		return nil, fmt.Errorf("%s for %s: %w", op, tool, err)
	}
	var out []Grant
	for _, r := range rows {
		g := grantFromRow(r)
		if g.Owner != owner || g.Tool != tool || !g.Active(now) ||
			(g.Session != "" && g.Session != session) ||
			g.MaxRisk < risk || g.MaxRisk >= policy.RiskCritical {
			continue
		}
		out = append(out, g)
	}
	return out, nil
}

// Grants lists every grant of owner, newest first, revoked and expired
// ones included (see Grant.Active).
func (s *Service) Grants(ctx context.Context, owner string) ([]Grant, error) {
	rows, err := s.st.ListGrants(ctx, owner)
	if err != nil {
		return nil, err
	}
	out := make([]Grant, 0, len(rows))
	for _, r := range rows {
		out = append(out, grantFromRow(r))
	}
	return out, nil
}

// RevokeGrant ends a grant now. Revoking twice is not an error.
func (s *Service) RevokeGrant(ctx context.Context, id string) error {
	err := s.st.Write(ctx, func(tx *store.Tx) error { return tx.RevokeGrant(id, s.now()) })
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("revoke grant %s: %w", id, ErrNotFound)
	}
	return err
}

func grantFromRow(r store.Grant) Grant {
	var tmpl *policy.Template
	if r.Template != "" {
		// An unreadable template makes a grant that covers nothing: a
		// template that is not nil but has no program is not grantable.
		t, err := decodeTemplate(r.Template)
		if err != nil {
			t = policy.Template{RunsCode: true}
		}
		tmpl = &t
	}
	return Grant{Template: tmpl,
		ID: r.ID, Owner: r.Owner, Session: r.SessionID, Tool: r.Tool, Patterns: r.Patterns,
		MaxRisk: policy.Risk(r.MaxRisk), Scope: Scope(r.Scope), ApprovalID: r.ApprovalID,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt, RevokedAt: r.RevokedAt,
	}
}

// Patterns turns a Plan's targets into the patterns of a scoped grant:
// a target in a folder widens to everything under that folder
// ("notes/a.md" → "notes/**", "name:notes/a.md" → "name:notes/**"); a
// target at the root stays exact ("a.md" → "a.md"), so a grant never
// covers the whole root. A target that is not a clean relative slash path
// (a URL, "../x", "/abs", "a//b") also stays exact. Glob metacharacters in
// targets are escaped, so a file named "*.md" grants only itself. The
// result is sorted and without duplicates; no targets gives nil.
func Patterns(targets []string) []string {
	if len(targets) == 0 {
		return nil
	}
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		i := strings.LastIndexByte(t, '/')
		if i <= 0 || !cleanRelative(t) {
			out = append(out, escapeGlob(t))
			continue
		}
		out = append(out, escapeGlob(t[:i])+"/**")
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func cleanRelative(p string) bool {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p {
		return false
	}
	return !slices.Contains(strings.Split(p, "/"), "..")
}

// escapeGlob makes every character of s literal for path.Match, element
// by element (policy.MatchPath splits on "/" first).
func escapeGlob(s string) string {
	// Bytes, not runes: the metacharacters are ASCII, and ranging over
	// runes would turn invalid UTF-8 into U+FFFD, a different name.
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// encodeTemplate stores a template as JSON ("" for none).
func encodeTemplate(t *policy.Template) (string, error) {
	if t == nil {
		return "", nil
	}
	b, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encode command template: %w", err)
	}
	return string(b), nil
}

func decodeTemplate(s string) (policy.Template, error) {
	var t policy.Template
	if s == "" {
		return t, nil
	}
	if err := json.Unmarshal([]byte(s), &t); err != nil {
		return policy.Template{}, fmt.Errorf("decode command template: %w", err)
	}
	return t, nil
}

// Covers says, for the owner reading a card, what a session or always
// answer to a would let run without asking: the argv template of a
// command (for one that runs code, session only, with policy.CoverNote
// saying what the gate still holds), else the path patterns Patterns makes of its targets (a write
// of docs/notes.md covers docs/**), else calls without a path. A critical
// plan is never covered by a grant (MatchGrant), and the gate still grades
// every write a grant covers: a grant never lifts a change above its
// class. Display only: the grant made is grantFor's.
func (a Approval) Covers() string {
	if a.Template != nil {
		return "commands like " + a.Template.Cover()
	}
	return CoverText(Patterns(a.Targets), "")
}

// CoverText is a grant's patterns or template as one line: the template
// when there is one, else the patterns, else "calls without a path".
func CoverText(patterns []string, template string) string {
	switch {
	case template != "":
		return template
	case len(patterns) > 0:
		return strings.Join(patterns, " ")
	}
	return "calls without a path"
}
