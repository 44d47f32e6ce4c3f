package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Approval is a stored approval row. Status is the stored status; the
// approval package derives "expired" from ExpiresAt when it reads one.
type Approval struct {
	ID         string
	Tool       string
	PlanHash   string
	Owner      string
	SessionID  string
	Display    string
	Plan       []byte // canonical JSON
	Targets    []string
	Risk       int
	Status     string // pending, approved, denied, consumed or expired
	Scope      string // empty until decided; once, session or always
	CreatedAt  time.Time
	ExpiresAt  time.Time
	DecidedAt  time.Time // zero until decided
	DecidedBy  string
	ConsumedAt time.Time // zero until consumed
	// Rule and Reason are the policy decision that asked for approval.
	Rule   string
	Reason string
	// Template is a command approval's grant template as JSON (see
	// migration 0011); empty for other tools.
	Template string
	// Preview is what the card shows below Display (migration 0015):
	// display only, never part of PlanHash.
	Preview string
	// Reach is the call's blast class as a policy.Reach (migration
	// 0028); 0 on rows stored before it.
	Reach int
}

// ApprovalDecision is a conditional state change for DecideApproval.
type ApprovalDecision struct {
	ID        string
	Approver  string    // must equal the approval's owner
	Status    string    // approved or denied
	Scope     string    // for approved: once, session or always
	Now       time.Time // the approval must not have expired at Now
	ExpiresAt time.Time // the new expiry
}

const approvalColumns = `id, tool, plan_hash, owner, session_id, display, plan, targets, risk, status,
	scope, created_at, expires_at, decided_at, decided_by, consumed_at, rule, reason, template, preview, reach`

func scanApproval(sc interface{ Scan(...any) error }) (Approval, error) {
	var a Approval
	var plan, targets string
	var created, expires, decided, consumed sql.NullInt64
	err := sc.Scan(&a.ID, &a.Tool, &a.PlanHash, &a.Owner, &a.SessionID, &a.Display, &plan, &targets,
		&a.Risk, &a.Status, &a.Scope, &created, &expires, &decided, &a.DecidedBy, &consumed, &a.Rule, &a.Reason, &a.Template, &a.Preview, &a.Reach)
	if err != nil {
		return Approval{}, err
	}
	a.Plan = []byte(plan)
	if a.Targets, err = decodeStrings(targets); err != nil {
		return Approval{}, fmt.Errorf("approval %s targets: %w", a.ID, err)
	}
	a.CreatedAt, a.ExpiresAt = fromNanos(created), fromNanos(expires)
	a.DecidedAt, a.ConsumedAt = fromNanos(decided), fromNanos(consumed)
	return a, nil
}

// InsertApproval stores a new approval. Its session must exist and belong
// to a.Owner.
func (tx *Tx) InsertApproval(a Approval) error {
	var owner string
	err := tx.queryRow(`SELECT owner FROM sessions WHERE id = ?`, a.SessionID).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("insert approval %s: session %s: %w", a.ID, a.SessionID, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("insert approval %s: %w", a.ID, err)
	}
	if owner != a.Owner {
		return fmt.Errorf("insert approval %s: %w", a.ID, ErrSessionOwner)
	}
	_, err = tx.exec(`INSERT INTO approvals (`+approvalColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Tool, a.PlanHash, a.Owner, a.SessionID, a.Display, string(a.Plan), encodeStrings(a.Targets),
		a.Risk, a.Status, a.Scope, nanos(a.CreatedAt), nanos(a.ExpiresAt), nanos(a.DecidedAt),
		a.DecidedBy, nanos(a.ConsumedAt), a.Rule, a.Reason, a.Template, a.Preview, a.Reach)
	if err != nil {
		return fmt.Errorf("insert approval %s: %w", a.ID, err)
	}
	return nil
}

// GetApproval reads one approval inside the transaction, or ErrNotFound.
func (tx *Tx) GetApproval(id string) (Approval, error) {
	a, err := scanApproval(tx.queryRow(`SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	return one(a, err, "get approval", id)
}

// PendingApproval returns the oldest pending approval with exactly this
// binding that has not expired at now, or ErrNotFound.
func (tx *Tx) PendingApproval(tool, planHash, owner, session string, now time.Time) (Approval, error) {
	a, err := scanApproval(tx.queryRow(`SELECT `+approvalColumns+` FROM approvals
		WHERE tool = ? AND plan_hash = ? AND owner = ? AND session_id = ? AND status = 'pending' AND expires_at > ?
		ORDER BY created_at, rowid LIMIT 1`, tool, planHash, owner, session, nanos(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("find pending approval: %w", ErrNotFound)
	}
	if err != nil {
		return Approval{}, fmt.Errorf("find pending approval: %w", err)
	}
	return a, nil
}

// DecideApproval applies d only if the approval is still pending, has not
// expired at d.Now and is owned by d.Approver, in one conditional UPDATE.
// It reports whether the row changed.
func (tx *Tx) DecideApproval(d ApprovalDecision) (bool, error) {
	res, err := tx.exec(`UPDATE approvals SET status = ?, scope = ?, decided_at = ?, decided_by = ?, expires_at = ?
		WHERE id = ? AND status = 'pending' AND expires_at > ? AND owner = ?`,
		d.Status, d.Scope, nanos(d.Now), d.Approver, nanos(d.ExpiresAt), d.ID, nanos(d.Now), d.Approver)
	if err != nil {
		return false, fmt.Errorf("decide approval %s: %w", d.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("decide approval %s: %w", d.ID, err)
	}
	if n == 1 {
		return true, tx.notify(TopicApprovals, "")
	}
	return false, nil
}

// ConsumeApproval flips one approved approval with exactly this binding,
// unexpired at now, to consumed and returns it. The flip is one
// conditional UPDATE ... RETURNING, so two consumers cannot both get it.
func (tx *Tx) ConsumeApproval(tool, planHash, owner, session string, now time.Time) (Approval, bool, error) {
	a, err := scanApproval(tx.queryRow(`UPDATE approvals SET status = 'consumed', consumed_at = ?
		WHERE status = 'approved' AND expires_at > ? AND id = (
			SELECT id FROM approvals
			WHERE tool = ? AND plan_hash = ? AND owner = ? AND session_id = ? AND status = 'approved' AND expires_at > ?
			ORDER BY decided_at, rowid LIMIT 1)
		RETURNING `+approvalColumns,
		nanos(now), nanos(now), tool, planHash, owner, session, nanos(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, fmt.Errorf("consume approval: %w", err)
	}
	return a, true, nil
}

// GetApproval returns one approval or ErrNotFound.
func (s *Store) GetApproval(ctx context.Context, id string) (Approval, error) {
	a, err := scanApproval(s.readRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = ?`, id))
	return one(a, err, "get approval", id)
}

// ListApprovals returns owner's approvals ("" for every owner's) newest
// first, at most limit (≤ 0 means 100, never more than 1000). A non-empty
// status filters on the status as seen at now: a pending or approved
// approval whose expiry has passed counts as "expired", not as what is
// stored.
func (s *Store) ListApprovals(ctx context.Context, owner, status string, now time.Time, limit int) ([]Approval, error) {
	return readAll(ctx, s, "list approvals", scanApproval, `SELECT `+approvalColumns+` FROM approvals
		WHERE (?4 = '' OR owner = ?4)
		AND (?1 = '' OR ?1 = CASE WHEN status IN ('pending', 'approved') AND expires_at <= ?2 THEN 'expired' ELSE status END)
		ORDER BY created_at DESC, rowid DESC LIMIT ?3`, status, nanos(now), clampLimit(limit, 100, 1000), owner)
}

// ApprovedSince returns owner's approvals the owner approved (any scope)
// at or after since, newest first, at most 1000: the evidence for
// approval suggestions.
func (s *Store) ApprovedSince(ctx context.Context, owner string, since time.Time) ([]Approval, error) {
	return readAll(ctx, s, "list approvals given", scanApproval, `SELECT `+approvalColumns+` FROM approvals
		WHERE owner = ? AND scope <> '' AND decided_at >= ? ORDER BY decided_at DESC, rowid DESC LIMIT 1000`, owner, nanos(since))
}

func encodeStrings(s []string) string {
	if len(s) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(s) // a []string always encodes
	return string(b)
}

func decodeStrings(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// CountPending returns how many approvals of owner in session are pending
// and unexpired at now.
func (tx *Tx) CountPending(owner, session string, now time.Time) (int, error) {
	var n int
	err := tx.queryRow(`SELECT count(*) FROM approvals
		WHERE owner = ? AND session_id = ? AND status = 'pending' AND expires_at > ?`, owner, session, nanos(now)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count pending approvals: %w", err)
	}
	return n, nil
}

// LapseApprovals expires the approved, unexpired approvals with exactly
// this binding that were created before changed, and returns the newest
// of them (ok false if none). They can then never be consumed.
func (tx *Tx) LapseApprovals(tool, planHash, owner, session string, changed, now time.Time) (Approval, bool, error) {
	if tx.done {
		return Approval{}, false, errTxDone
	}
	rows, err := tx.s.wconn.QueryContext(tx.ctx, `UPDATE approvals SET status = 'expired'
		WHERE tool = ? AND plan_hash = ? AND owner = ? AND session_id = ? AND status = 'approved'
			AND expires_at > ? AND created_at < ?
		RETURNING `+approvalColumns, tool, planHash, owner, session, nanos(now), nanos(changed))
	if err != nil {
		return Approval{}, false, fmt.Errorf("lapse approvals: %w", err)
	}
	lapsed, err := collect(rows, scanApproval, "lapse approvals")
	if err != nil || len(lapsed) == 0 {
		return Approval{}, false, err
	}
	newest := lapsed[0]
	for _, a := range lapsed[1:] {
		if a.CreatedAt.After(newest.CreatedAt) {
			newest = a
		}
	}
	return newest, true, nil
}

// LapsePending expires the approval id if it is still pending, unexpired
// at now and was created at or after since (an older one was asked by an
// earlier turn too, and that turn's owner may still answer it). It
// reports whether the row changed. The approval can then never be
// approved or consumed.
func (tx *Tx) LapsePending(id string, since, now time.Time) (bool, error) {
	res, err := tx.exec(`UPDATE approvals SET status = 'expired'
		WHERE id = ? AND status = 'pending' AND expires_at > ? AND created_at >= ?`, id, nanos(now), nanos(since))
	if err != nil {
		return false, fmt.Errorf("lapse approval %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("lapse approval %s: %w", id, err)
	}
	if n == 1 {
		return true, tx.notify(TopicApprovals, "")
	}
	return false, nil
}
