// Package audit keeps homard's append-only, hash-chained audit log: one
// Record per tool-call proposal, denials included (DESIGN.md §2.11).
//
// Each record's Hash is the SHA-256 of its PrevHash and every other field
// (see Sum for the exact encoding), and PrevHash is the previous record's
// Hash (64 zeros for the first). Seq counts from 1 without gaps. Editing,
// inserting, reordering or deleting a record therefore breaks the chain at
// that record or the one after it, and Verify names the first break.
// Deleting records from the end leaves a valid shorter chain; VerifyFrom
// detects that given the last record verified before (package integrity
// keeps it).
//
// Export writes records as JSON Lines that VerifyFile checks on their own,
// on any machine: the same chain check, over a file instead of the
// database (file.go). Sum has no key, so a chain alone can be rewritten
// from any record on with every later hash recomputed; an anchor (`homard
// audit anchor`) kept elsewhere shows that, and a file or log cut short.
//
// Callers pass text that is already redacted: the audit never sees
// secrets. Append runs inside the caller's store transaction, so a record
// and the state change it describes commit together.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// GenesisHash is the PrevHash of the first record.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"

// Decision is what happened to the proposal.
type Decision string

// Decisions.
const (
	Ran     Decision = "ran"     // the tool ran (successfully or not)
	Pending Decision = "pending" // waiting for the owner's approval
	Denied  Decision = "denied"  // refused by a hard limit, policy or the owner
	Errored Decision = "error"   // could not be decided or run (bad arguments, unknown tool)
)

// Record is one audit entry.
type Record struct {
	Seq        int64        `json:"seq"` // set by Append
	Time       time.Time    `json:"time"`
	Owner      string       `json:"owner"`
	Session    string       `json:"session"`
	Trust      policy.Trust `json:"trust"`
	Tool       string       `json:"tool"`
	Decision   Decision     `json:"decision"`
	Rule       string       `json:"rule"`
	Reason     string       `json:"reason"`
	Args       string       `json:"args"` // redacted by the caller
	PlanHash   string       `json:"plan_hash,omitempty"`
	RunID      string       `json:"run_id,omitempty"`
	ApprovalID string       `json:"approval_id,omitempty"`
	// Effects lists what the call changed, one line per path (a command's
	// applied or held change set); empty for most records.
	Effects  string `json:"effects,omitempty"`
	PrevHash string `json:"prev_hash"` // set by Append
	Hash     string `json:"hash"`      // set by Append
}

// Append adds r at the end of the chain inside tx: it reads the last
// record in the same transaction (which holds the write lock), sets Seq,
// PrevHash and Hash, stores r and returns it. r.Time must be set; it is
// stored in UTC with nanosecond precision.
func Append(tx *store.Tx, r Record) (Record, error) {
	switch r.Decision {
	case Ran, Pending, Denied, Errored:
	default:
		return Record{}, fmt.Errorf("append audit record: unknown decision %q (want ran, pending, denied or error)", r.Decision)
	}
	if r.Time.IsZero() || !time.Unix(0, r.Time.UnixNano()).Equal(r.Time) {
		return Record{}, fmt.Errorf("append audit record: time %v is unset or outside years 1678-2262", r.Time)
	}
	r.Time = r.Time.UTC().Round(0)
	seq, last, err := tx.LastAudit()
	if err != nil {
		return Record{}, fmt.Errorf("append audit record: %w", err)
	}
	r.Seq, r.PrevHash = seq+1, last
	if seq == 0 {
		r.PrevHash = GenesisHash
	}
	r.Hash = Sum(r)
	if err := tx.InsertAudit(toRow(r)); err != nil {
		return Record{}, fmt.Errorf("append audit record: %w", err)
	}
	return r, nil
}

// Sum returns the hash r should carry: lowercase hex SHA-256 over the
// following fields, in this order, each written as its length in bytes
// (8-byte big-endian unsigned) followed by its bytes:
//
//	"homard-audit-v1", PrevHash, Seq (decimal), Time (RFC 3339 with
//	nanoseconds, UTC, as Go's time.RFC3339Nano), Owner, Session, Trust,
//	Tool, Decision, Rule, Reason, Args, PlanHash, RunID, ApprovalID
//
// followed, only when Effects is not empty, by "effects" and Effects (so
// every record without effects hashes exactly as before the field existed).
//
// Length prefixes make the encoding injective for any bytes (no escaping,
// no ambiguity between "ab"+"c" and "a"+"bc"), and it is simple to
// reimplement in an offline verifier. Hash itself is not covered.
func Sum(r Record) string {
	fields := [...]string{
		"homard-audit-v1", r.PrevHash, strconv.FormatInt(r.Seq, 10), r.Time.UTC().Format(time.RFC3339Nano),
		r.Owner, r.Session, string(r.Trust), r.Tool, string(r.Decision), r.Rule, r.Reason, r.Args,
		r.PlanHash, r.RunID, r.ApprovalID, "effects", r.Effects,
	}
	n := len(fields)
	if r.Effects == "" {
		n -= 2
	}
	// One buffer hashed once: writing each field to the hash converts it
	// to a []byte, an allocation per field on the arbiter's hot path.
	size := 0
	for _, f := range fields[:n] {
		size += 8 + len(f)
	}
	buf := make([]byte, 0, size)
	for _, f := range fields[:n] {
		buf = binary.BigEndian.AppendUint64(buf, uint64(len(f)))
		buf = append(buf, f...)
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// ErrBroken matches every *BrokenError with errors.Is.
var ErrBroken = errors.New("audit chain broken")

// BrokenError names the first record at which the chain does not verify.
type BrokenError struct {
	Seq    int64
	Reason string
}

func (e *BrokenError) Error() string {
	return fmt.Sprintf("audit chain broken at record %d: %s; the audit log was changed after it was written, keep a copy and investigate", e.Seq, e.Reason)
}

// Is makes errors.Is(err, ErrBroken) true.
func (e *BrokenError) Is(target error) bool { return target == ErrBroken }

// Verify recomputes the whole chain from one consistent snapshot. It
// returns the number of records that verified and, at the first problem, a
// *BrokenError (a seq gap, a PrevHash that does not link to the previous
// record, or a Hash that does not match the content).
func Verify(ctx context.Context, st *store.Store) (int, error) {
	_, n, err := VerifyFrom(ctx, st, Anchor{})
	return n, err
}

// Anchor is a record the chain is known to reach: its Seq and Hash. The
// zero Anchor is the genesis, before the first record.
type Anchor struct {
	Seq  int64
	Hash string
	// Accepted: the owner accepted the chain up to this record as it is
	// (a break at or before it was acknowledged), so only its Hash is
	// compared, not its content with its hash.
	Accepted bool
}

// VerifyFrom checks the chain from a, from one consistent snapshot: the
// record at a.Seq must still exist with hash a.Hash and match its content,
// and every later record must link on as Verify requires. It returns the
// newest record reached (the head when nothing is broken) and the number of
// records that verified after a. A chain that now ends before a.Seq lost
// records from its end; that is a *BrokenError too, which Verify alone
// cannot see. Checking from the last verified record costs only the
// records appended since.
func VerifyFrom(ctx context.Context, st *store.Store, a Anchor) (Anchor, int, error) {
	head, n, err := verify(a, func(yield func(store.AuditRow) error) error { return st.AuditFrom(ctx, a.Seq, yield) })
	if err == nil && head.Seq < a.Seq {
		err = &BrokenError{a.Seq, fmt.Sprintf("the log ends at record %d although record %d was verified before; records were deleted from its end", head.Seq, a.Seq)}
		head = Anchor{}
	}
	return head, n, err
}

// verify checks the rows src yields in order, starting at a (see
// VerifyFrom). It is separate so tests can feed it stored rows altered in
// flight.
func verify(a Anchor, src func(yield func(store.AuditRow) error) error) (Anchor, int, error) {
	count := 0
	l := link{want: a.Seq + 1, prev: a.Hash}
	if a.Seq == 0 {
		l.prev = GenesisHash
	}
	head := Anchor{}
	err := src(func(row store.AuditRow) error {
		r := fromRow(row)
		if a.Seq > 0 && r.Seq == a.Seq {
			// The anchor itself: unchanged since it verified.
			if r.Hash != a.Hash || !a.Accepted && Sum(r) != r.Hash {
				return &BrokenError{r.Seq, "it changed after it was verified"}
			}
			head = Anchor{Seq: r.Seq, Hash: r.Hash}
			return nil
		}
		if a.Seq > 0 && head.Seq == 0 {
			return &BrokenError{a.Seq, "this verified record is missing"}
		}
		if why := l.next(r); why != "" {
			return &BrokenError{r.Seq, why}
		}
		count++
		head = Anchor{Seq: r.Seq, Hash: r.Hash}
		return nil
	})
	if err != nil {
		if be := (*BrokenError)(nil); errors.As(err, &be) {
			return head, count, err
		}
		return head, count, fmt.Errorf("verify audit: %w", err)
	}
	if a.Seq > 0 && head.Seq == 0 {
		// Nothing at or after the anchor: the caller reports the loss.
		return Anchor{}, 0, nil
	}
	return head, count, nil
}

// link is the one chain check, shared by the database (verify) and an
// export file (VerifyFile): it holds what the next record must be.
type link struct {
	want int64  // its Seq
	prev string // its PrevHash: the Hash of the record before it
}

// next checks r against what the record before it left and moves on past
// r. It returns why r breaks the chain, or "".
func (l *link) next(r Record) string {
	switch {
	case r.Seq != l.want:
		return fmt.Sprintf("expected record %d here; a record is missing or out of order", l.want)
	case r.PrevHash != l.prev && l.want == 1:
		return "the first record does not start from the genesis hash"
	case r.PrevHash != l.prev:
		return fmt.Sprintf("its previous hash does not match record %d", l.want-1)
	case Sum(r) != r.Hash:
		return "its content does not match its hash"
	}
	l.want, l.prev = l.want+1, r.Hash
	return ""
}

// List returns records with Seq > afterSeq in order, at most limit (≤ 0
// means 100, never more than 1000).
func List(ctx context.Context, st *store.Store, afterSeq int64, limit int) ([]Record, error) {
	rows, err := st.ListAudit(ctx, afterSeq, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(rows))
	for i, row := range rows {
		out[i] = fromRow(row)
	}
	return out, nil
}

func toRow(r Record) store.AuditRow {
	return store.AuditRow{
		Seq: r.Seq, Time: r.Time, Owner: r.Owner, Session: r.Session, Trust: string(r.Trust), Tool: r.Tool,
		Decision: string(r.Decision), Rule: r.Rule, Reason: r.Reason, Args: r.Args, PlanHash: r.PlanHash,
		RunID: r.RunID, ApprovalID: r.ApprovalID, PrevHash: r.PrevHash, Hash: r.Hash, Effects: r.Effects,
	}
}

func fromRow(r store.AuditRow) Record {
	return Record{
		Seq: r.Seq, Time: r.Time, Owner: r.Owner, Session: r.Session, Trust: policy.Trust(r.Trust), Tool: r.Tool,
		Decision: Decision(r.Decision), Rule: r.Rule, Reason: r.Reason, Args: r.Args, PlanHash: r.PlanHash,
		RunID: r.RunID, ApprovalID: r.ApprovalID, PrevHash: r.PrevHash, Hash: r.Hash, Effects: r.Effects,
	}
}
