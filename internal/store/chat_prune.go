package store

import (
	"fmt"
	"time"
)

// ChatPruned counts the rows PruneChatState deleted.
type ChatPruned struct {
	Outbox, Cards, Pairings int64
	// WrongPairCodes counts records of wrong pairing codes.
	WrongPairCodes int64
}

// PruneChatState deletes chat state no one needs any more, in an order the
// foreign keys allow (a card holds its outbox row):
//   - approval cards made before cards whose approval was decided (the
//     card is no longer open, or its approval is not pending, is pending
//     but expired before the cutoff, or is gone);
//   - outbox rows sent or given up (failed) made before outbox, unless a
//     card still holds them: queued and sending rows are never deleted,
//     a restart must still deliver them;
//   - pairing codes that expired before pairings, and finished ones
//     (confirmed, refused, exhausted) made before pairings; an open or
//     used code inside its lifetime stays;
//   - records of wrong pairing codes sent before pairings (a pairing
//     lives 10 minutes; only the ones sent while it was open count).
//
// The cutoffs are passed in (now minus each keep time), never read here.
func (tx *Tx) PruneChatState(outbox, cards, pairings time.Time) (ChatPruned, error) {
	var p ChatPruned
	var err error
	if p.Cards, err = tx.execCount(`DELETE FROM chat_cards WHERE created_at < ? AND (state <> 'open' OR NOT EXISTS (
		SELECT 1 FROM approvals a WHERE a.id = chat_cards.approval_id AND a.status = 'pending' AND a.expires_at >= ?))`,
		nanos(cards), nanos(cards)); err != nil {
		return p, fmt.Errorf("prune approval cards: %w", err)
	}
	if p.Outbox, err = tx.execCount(`DELETE FROM chat_outbox WHERE created_at < ? AND state IN ('sent', 'failed')
		AND NOT EXISTS (SELECT 1 FROM chat_cards c WHERE c.outbox_id = chat_outbox.id)`, nanos(outbox)); err != nil {
		return p, fmt.Errorf("prune chat outbox: %w", err)
	}
	if p.Pairings, err = tx.execCount(`DELETE FROM chat_pairings WHERE expires_at < ?
		OR (created_at < ? AND state IN ('confirmed', 'refused', 'exhausted'))`, nanos(pairings), nanos(pairings)); err != nil {
		return p, fmt.Errorf("prune pairing codes: %w", err)
	}
	if p.WrongPairCodes, err = tx.execCount(`DELETE FROM chat_pair_wrong WHERE at < ?`, nanos(pairings)); err != nil {
		return p, fmt.Errorf("prune wrong pairing codes: %w", err)
	}
	return p, nil
}

// execCount runs a statement and returns how many rows it changed.
func (tx *Tx) execCount(query string, args ...any) (int64, error) {
	res, err := tx.exec(query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
