package owner

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
)

// AuditTail returns the last n audit records in order.
func (o *Actions) AuditTail(ctx context.Context, n int) ([]audit.Record, error) {
	last, err := o.d.Store.LastAuditSeq(ctx)
	if err != nil {
		return nil, err
	}
	return audit.List(ctx, o.d.Store, max(0, last-int64(n)), n)
}

// AuditAfter returns up to limit records after seq.
func (o *Actions) AuditAfter(ctx context.Context, seq int64, limit int) ([]audit.Record, error) {
	return audit.List(ctx, o.d.Store, seq, limit)
}

// AuditVerify checks the whole hash chain and returns how many records
// it checked.
func (o *Actions) AuditVerify(ctx context.Context) (int, error) {
	return audit.Verify(ctx, o.d.Store)
}

// AuditExport writes to w, as an export file (audit.Export), the records
// from the first one at or after since (all when since is zero) to the
// last, and says what it wrote.
func (o *Actions) AuditExport(ctx context.Context, w io.Writer, since time.Time) (audit.FileReport, error) {
	return audit.Export(ctx, o.d.Store, w, since)
}

// AuditAnchor verifies the whole chain and returns its head, the record to
// keep elsewhere so a later export can be checked against it. A broken
// chain has no head worth keeping: its *audit.BrokenError is returned. An
// empty log has none either: the zero Anchor.
func (o *Actions) AuditAnchor(ctx context.Context) (audit.Anchor, error) {
	head, _, err := audit.VerifyFrom(ctx, o.d.Store, audit.Anchor{})
	if err != nil {
		return audit.Anchor{}, err
	}
	return head, nil
}

// auditScanPages caps how many pages one filtered Audit call reads before
// it returns what it found and where to go on.
const auditScanPages = 20

// AuditPage returns a page of records, filtered: after q.After, oldest
// first; or, with q.Newest, before q.Before (0: from the last), newest
// first.
func (o *Actions) AuditPage(ctx context.Context, q channel.AuditQuery) (channel.AuditPage, error) {
	limit := q.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	if q.Newest {
		return o.auditNewest(ctx, q, limit)
	}
	page := channel.AuditPage{Records: []channel.AuditRecord{}, Next: q.After}
	for range auditScanPages {
		recs, err := audit.List(ctx, o.d.Store, page.Next, 1000)
		if err != nil {
			return channel.AuditPage{}, err
		}
		for _, x := range recs {
			page.Next = x.Seq
			if (q.Tool != "" && x.Tool != q.Tool) || (q.Decision != "" && string(x.Decision) != q.Decision) {
				continue
			}
			page.Records = append(page.Records, ShownAudit(x))
			if len(page.Records) == limit {
				return page, nil
			}
		}
		if len(recs) < 1000 {
			break
		}
	}
	return page, nil
}

// auditNewest reads backwards from q.Before (0: past the last record)
// in windows of 1000, newest first.
func (o *Actions) auditNewest(ctx context.Context, q channel.AuditQuery, limit int) (channel.AuditPage, error) {
	cursor := q.Before
	if cursor <= 0 {
		last, err := o.d.Store.LastAuditSeq(ctx)
		if err != nil {
			return channel.AuditPage{}, err
		}
		cursor = last + 1
	}
	page := channel.AuditPage{Records: []channel.AuditRecord{}}
	for range auditScanPages {
		from := max(0, cursor-1-1000) // the window is (from, cursor)
		if cursor <= 1 {
			break
		}
		recs, err := audit.List(ctx, o.d.Store, from, int(cursor-1-from))
		if err != nil {
			return channel.AuditPage{}, err
		}
		for i := len(recs) - 1; i >= 0; i-- {
			x := recs[i]
			if x.Seq >= cursor {
				continue
			}
			cursor = x.Seq
			if (q.Tool != "" && x.Tool != q.Tool) || (q.Decision != "" && string(x.Decision) != q.Decision) {
				continue
			}
			page.Records = append(page.Records, ShownAudit(x))
			if len(page.Records) == limit {
				page.Next = cursor
				return page, nil
			}
		}
		cursor = min(cursor, from+1)
	}
	if cursor > 1 {
		page.Next = cursor // the scan cap ended it: older records are left
	}
	return page, nil
}

// ShownAudit is an audit record as front ends show it.
func ShownAudit(x audit.Record) channel.AuditRecord {
	return channel.AuditRecord{
		Seq: x.Seq, Time: x.Time, Owner: x.Owner, Session: x.Session, Trust: string(x.Trust), Tool: x.Tool,
		Decision: string(x.Decision), Rule: x.Rule, Reason: x.Reason, Args: x.Args, PlanHash: x.PlanHash,
		RunID: x.RunID, ApprovalID: x.ApprovalID, Effects: x.Effects, PrevHash: x.PrevHash, Hash: x.Hash,
	}
}

// Actor is the audit session of what the owner did by hand.
const Actor = "owner"

// Audit records an action the owner took outside a turn (a memory edit,
// a rollback): tool names the action, rule and reason say why it ran,
// args and effects what it did — all redacted.
func (o *Actions) Audit(ctx context.Context, tool, rule, reason string, args map[string]string, effects []string) error {
	b, _ := json.Marshal(args)
	return o.d.Store.Write(ctx, func(tx *store.Tx) error {
		_, err := audit.Append(tx, audit.Record{
			Time: o.d.Now(), Owner: o.d.Owner, Session: Actor, Trust: policy.TrustOwner,
			Tool: tool, Decision: audit.Ran, Rule: rule, Reason: o.d.Redact(reason),
			Args: o.d.Redact(string(b)), Effects: o.d.Redact(strings.Join(effects, "\n")),
		})
		return err
	})
}
