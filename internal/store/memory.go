package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// MemoryUnit is one row of the memory projection. Terms is the unit's
// text as space-separated search terms, made by the memory package; it is
// written to the full-text index and never read back.
type MemoryUnit struct {
	Owner     string
	ID        string
	Kind      string
	Text      string
	Source    string
	Terms     string
	CreatedAt time.Time
	UpdatedAt time.Time
	ExpiresAt time.Time // zero: never
}

// MemorySource is the fingerprint of an owner's memory file when it was
// last indexed. Size is -1 when the file did not exist.
type MemorySource struct {
	Owner     string
	Size      int64
	ModTime   time.Time
	SHA256    string
	Units     int
	Problems  int
	IndexedAt time.Time
}

const memoryColumns = `u.id, u.kind, u.text, u.source, u.created_at, u.updated_at, u.expires_at`

func scanMemoryUnit(owner string) func(sc interface{ Scan(...any) error }) (MemoryUnit, error) {
	return func(sc interface{ Scan(...any) error }) (MemoryUnit, error) {
		u := MemoryUnit{Owner: owner}
		var created, updated, expires sql.NullInt64
		if err := sc.Scan(&u.ID, &u.Kind, &u.Text, &u.Source, &created, &updated, &expires); err != nil {
			return MemoryUnit{}, err
		}
		u.CreatedAt, u.UpdatedAt, u.ExpiresAt = fromNanos(created), fromNanos(updated), fromNanos(expires)
		return u, nil
	}
}

// ReplaceMemory replaces every unit of owner with units and records src as
// the indexed file's fingerprint, in the caller's transaction: a reader
// sees the old projection or the new one, never a mix.
func (tx *Tx) ReplaceMemory(owner string, units []MemoryUnit, src MemorySource) error {
	// Deleting rows one by one from the index writes a tombstone each;
	// when owner is the only owner (the usual case) clearing the whole
	// index is one cheap command.
	var others int
	if err := tx.queryRow(`SELECT count(*) FROM memory_units WHERE owner <> ?`, owner).Scan(&others); err != nil {
		return fmt.Errorf("replace memory: %w", err)
	}
	if others == 0 {
		if _, err := tx.exec(tx.s.named("memory.clear", `INSERT INTO memory_fts (memory_fts) VALUES ('delete-all')`)); err != nil {
			return fmt.Errorf("clear memory index: %w", err)
		}
		if _, err := tx.exec(`DELETE FROM memory_units`); err != nil {
			return fmt.Errorf("clear memory units: %w", err)
		}
	} else if err := tx.deleteMemory(owner, ""); err != nil {
		return err
	}
	// Units first, then their terms: FTS5 flushes its pending terms to a
	// new segment whenever another statement opens a savepoint, so
	// interleaving the two tables would write one tiny segment per unit
	// (and merge them all again). Both statements come from the writer's
	// prepared cache; parsing the SQL per row would cost more than the insert.
	var next int64
	if err := tx.queryRow(`SELECT coalesce(max(seq), 0) + 1 FROM memory_units`).Scan(&next); err != nil {
		return fmt.Errorf("replace memory: %w", err)
	}
	ins := txStmt{tx, insertMemoryUnit}
	for i, u := range units {
		if err := insertUnit(tx.ctx, ins, next+int64(i), owner, u); err != nil {
			return err
		}
	}
	fts := txStmt{tx, insertMemoryTerms}
	for i, u := range units {
		if _, err := fts.ExecContext(tx.ctx, next+int64(i), u.Terms); err != nil {
			return fmt.Errorf("index memory unit %s: %w", u.ID, err)
		}
	}
	if len(units) >= optimizeAfter {
		// A bulk load leaves many segments; one merged b-tree makes
		// every later query read one segment per term.
		if _, err := tx.exec(tx.s.named("memory.optimize", `INSERT INTO memory_fts (memory_fts) VALUES ('optimize')`)); err != nil {
			return fmt.Errorf("optimize memory index: %w", err)
		}
	}
	return tx.SetMemorySource(src)
}

// optimizeAfter is the number of units from which ReplaceMemory merges the
// full-text index into one segment.
const optimizeAfter = 1000

const (
	insertMemoryUnit = `INSERT INTO memory_units (seq, owner, id, kind, text, source, created_at, updated_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	insertMemoryTerms = `INSERT INTO memory_fts (rowid, terms) VALUES (?, ?)`
)

type execer interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
}

func insertUnit(ctx context.Context, ins execer, seq int64, owner string, u MemoryUnit) error {
	_, err := ins.ExecContext(ctx, seq, owner, u.ID, u.Kind, u.Text, u.Source,
		nanos(u.CreatedAt), nanos(u.UpdatedAt), nanos(u.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert memory unit %s: %w", u.ID, err)
	}
	return nil
}

// PutMemoryUnit inserts one unit of owner, replacing the unit with the
// same id if there is one.
func (tx *Tx) PutMemoryUnit(owner string, u MemoryUnit) error {
	if err := tx.deleteMemory(owner, u.ID); err != nil {
		return err
	}
	var seq int64
	if err := tx.queryRow(`SELECT coalesce(max(seq), 0) + 1 FROM memory_units`).Scan(&seq); err != nil {
		return fmt.Errorf("insert memory unit %s: %w", u.ID, err)
	}
	if err := insertUnit(tx.ctx, txStmt{tx, insertMemoryUnit}, seq, owner, u); err != nil {
		return err
	}
	if _, err := tx.exec(insertMemoryTerms, seq, u.Terms); err != nil {
		return fmt.Errorf("index memory unit %s: %w", u.ID, err)
	}
	return nil
}

// txStmt runs one statement through the transaction's statement cache.
type txStmt struct {
	tx    *Tx
	query string
}

func (s txStmt) ExecContext(_ context.Context, args ...any) (sql.Result, error) {
	return s.tx.exec(s.query, args...)
}

// DeleteMemoryUnit removes one unit of owner; an unknown id is ErrNotFound.
func (tx *Tx) DeleteMemoryUnit(owner, id string) error {
	var n int
	if err := tx.queryRow(`SELECT count(*) FROM memory_units WHERE owner = ? AND id = ?`, owner, id).Scan(&n); err != nil {
		return fmt.Errorf("delete memory unit %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete memory unit %s: %w", id, ErrNotFound)
	}
	return tx.deleteMemory(owner, id)
}

// deleteMemory removes one unit of owner, or all of them when id is "".
func (tx *Tx) deleteMemory(owner, id string) error {
	where, args := `owner = ?`, []any{owner}
	if id != "" {
		where, args = `owner = ? AND id = ?`, []any{owner, id}
	}
	if _, err := tx.exec(`DELETE FROM memory_fts WHERE rowid IN (SELECT seq FROM memory_units WHERE `+where+`)`, args...); err != nil {
		return fmt.Errorf("delete memory index: %w", err)
	}
	if _, err := tx.exec(`DELETE FROM memory_units WHERE `+where, args...); err != nil {
		return fmt.Errorf("delete memory units: %w", err)
	}
	return nil
}

// SetMemorySource records the fingerprint of the file just indexed.
func (tx *Tx) SetMemorySource(src MemorySource) error {
	mtime := src.ModTime.UnixNano()
	if src.ModTime.IsZero() {
		mtime = 0
	}
	_, err := tx.exec(`INSERT INTO memory_sources (owner, size, mtime, sha256, units, problems, indexed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (owner) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, sha256 = excluded.sha256,
			units = excluded.units, problems = excluded.problems, indexed_at = excluded.indexed_at`,
		src.Owner, src.Size, mtime, src.SHA256, src.Units, src.Problems, nanos(src.IndexedAt))
	if err != nil {
		return fmt.Errorf("record memory source of %s: %w", src.Owner, err)
	}
	return nil
}

// MemorySource returns the fingerprint recorded for owner, or ErrNotFound
// when owner's memory was never indexed.
func (s *Store) MemorySource(ctx context.Context, owner string) (MemorySource, error) {
	src := MemorySource{Owner: owner}
	var mtime int64
	var indexed sql.NullInt64
	st, err := s.readStmt(ctx, `SELECT size, mtime, sha256, units, problems, indexed_at FROM memory_sources WHERE owner = ?`)
	if err != nil {
		return MemorySource{}, fmt.Errorf("memory source of %s: %w", owner, err)
	}
	err = st.QueryRowContext(ctx, owner).Scan(&src.Size, &mtime, &src.SHA256, &src.Units, &src.Problems, &indexed)
	if err = rowErr(err, "memory source of", owner); err != nil {
		return MemorySource{}, err
	}
	if mtime != 0 {
		src.ModTime = time.Unix(0, mtime).UTC()
	}
	src.IndexedAt = fromNanos(indexed)
	return src, nil
}

// SearchMemory returns owner's units unexpired at now whose terms hold
// every one of terms (with anyTerm, at least one), best first by the
// index's rank (bm25 in SQLite), at most limit (1 to 100). A term is only
// text: the index's query syntax in it has no effect.
//
// The index holds every owner's units. The best candidates are ranked
// inside the index first (joining each match to its unit before ranking
// costs twice as much), then looked up and filtered by owner and expiry.
// Only when filtering leaves fewer than limit and there were more
// candidates does the query run again, joined, over every match.
func (s *Store) SearchMemory(ctx context.Context, owner string, terms []string, anyTerm bool, now time.Time, limit int) ([]MemoryUnit, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	match := matchExpr(terms, anyTerm)
	if s.eng != nil {
		match = s.eng.Match(terms, anyTerm)
	}
	// The match is the first parameter of both queries: the engine's rank
	// may name it again as ?1.
	matches, rank := s.named("memory.match", `memory_fts MATCH ?`), s.named("memory.rank", `memory_fts.rank`)
	limit = clampLimit(limit, 10, 100)
	candidates := limit*4 + 16
	st, err := s.readStmt(ctx, `SELECT rowid FROM memory_fts WHERE `+matches+` ORDER BY `+rank+` LIMIT ?`)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	rows, err := st.QueryContext(ctx, match, candidates)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	seqs, err := collect(rows, func(sc interface{ Scan(...any) error }) (int64, error) {
		var n int64
		return n, sc.Scan(&n)
	}, "search memory")
	if err != nil || len(seqs) == 0 {
		return nil, err
	}
	// Look the candidates up best first, limit at a time: usually the
	// first batch is all owner's and unexpired, and the rest is never
	// read. A batch always has limit placeholders (unused ones 0, never a
	// seq), so its statement is prepared once per limit.
	lookup, err := s.readStmt(ctx, `SELECT u.seq, `+memoryColumns+` FROM memory_units u
		WHERE +u.owner = ? AND (u.expires_at IS NULL OR u.expires_at > ?)
			AND u.seq IN (?`+strings.Repeat(", ?", limit-1)+`)`)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	var out []MemoryUnit
	scan := scanMemoryUnit(owner)
	args := make([]any, 2+limit)
	for start := 0; start < len(seqs) && len(out) < limit; start += limit {
		batch := seqs[start:min(start+limit, len(seqs))]
		args[0], args[1] = owner, nanos(now)
		for i := range limit {
			args[2+i] = int64(0)
			if i < len(batch) {
				args[2+i] = batch[i]
			}
		}
		rows, err := lookup.QueryContext(ctx, args...)
		if err != nil {
			return nil, fmt.Errorf("search memory: %w", err)
		}
		bySeq := map[int64]MemoryUnit{}
		_, err = collect(rows, func(sc interface{ Scan(...any) error }) (struct{}, error) {
			var seq int64
			u, err := scan(scanFirst{sc, &seq})
			bySeq[seq] = u
			return struct{}{}, err
		}, "search memory")
		if err != nil {
			return nil, err
		}
		for _, q := range batch {
			if u, ok := bySeq[q]; ok && len(out) < limit {
				out = append(out, u)
			}
		}
	}
	if len(out) == limit || len(seqs) < candidates {
		return out, nil
	}
	// Other owners' or expired units crowded the candidates out.
	rows, err = s.reader.QueryContext(ctx, `SELECT `+memoryColumns+`
		FROM memory_fts JOIN memory_units u ON u.seq = memory_fts.rowid
		WHERE `+matches+` AND +u.owner = ? AND (u.expires_at IS NULL OR u.expires_at > ?)
		ORDER BY `+rank+`, u.seq DESC LIMIT ?`, match, owner, nanos(now), limit)
	if err != nil {
		return nil, fmt.Errorf("search memory: %w", err)
	}
	return collect(rows, scanMemoryUnit(owner), "search memory")
}

// matchExpr joins terms as FTS5 strings: all of them, or with anyTerm any
// of them. A term is quoted, so FTS5 syntax in a query is only text.
func matchExpr(terms []string, anyTerm bool) string {
	sep := " "
	if anyTerm {
		sep = " OR "
	}
	q := make([]string, len(terms))
	for i, t := range terms {
		q[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(q, sep)
}

// scanFirst scans a row with one more leading column into first.
type scanFirst struct {
	sc    interface{ Scan(...any) error }
	first any
}

func (x scanFirst) Scan(dest ...any) error { return x.sc.Scan(append([]any{x.first}, dest...)...) }

// ScanMemory returns owner's units unexpired at now whose text contains
// every needle, last indexed first (memory.md's order, newest at the
// end), at most limit (1 to 100). It reads units until it has limit of
// them, every unit when fewer match: it is for queries the index cannot
// answer (one CJK character).
func (s *Store) ScanMemory(ctx context.Context, owner string, needles []string, now time.Time, limit int) ([]MemoryUnit, error) {
	var where strings.Builder
	args := []any{owner, nanos(now)}
	for _, n := range needles {
		where.WriteString(` AND instr(u.text, ?) > 0`)
		args = append(args, n)
	}
	args = append(args, clampLimit(limit, 10, 100))
	rows, err := s.reader.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memory_units u
		WHERE +u.owner = ? AND (u.expires_at IS NULL OR u.expires_at > ?)`+where.String()+`
		ORDER BY u.seq DESC LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("scan memory: %w", err)
	}
	return collect(rows, scanMemoryUnit(owner), "scan memory")
}

// MemoryUnits returns every unit of owner in the projection, expired ones
// included, in id order.
func (s *Store) MemoryUnits(ctx context.Context, owner string) ([]MemoryUnit, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memory_units u
		WHERE u.owner = ? ORDER BY u.id`, owner)
	if err != nil {
		return nil, fmt.Errorf("list memory: %w", err)
	}
	return collect(rows, scanMemoryUnit(owner), "list memory")
}

// CountMemoryUnits returns how many units of owner the projection holds.
func (s *Store) CountMemoryUnits(ctx context.Context, owner string) (int, error) {
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT count(*) FROM memory_units WHERE owner = ?`, owner).Scan(&n); err != nil {
		return 0, fmt.Errorf("count memory: %w", err)
	}
	return n, nil
}
