package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// copyOrder is every table Copy moves, parents before the tables whose
// foreign keys name them. copySkip are the tables it leaves: the memory
// index is a projection of memory.md, rebuilt at the next start when
// memory_sources says nothing was indexed; schema_migrations is each
// store's own, and so is held_locks (the locks of the processes on that
// store, alive or dead: none of them runs on the copy).
// TestCopyCoversEveryTable holds the two lists to the schema.
var (
	copyOrder = []string{
		"sessions", "approvals", "grants", "audit", "turns", "messages", "artifacts", "session_summaries",
		"api_tokens", "memory_candidates", "tool_runs", "integrity",
		"chat_inbox", "chat_outbox", "chat_owners", "chat_pairings", "chat_sessions", "chat_cards", "chat_chats",
		"chat_channels", "tasks", "task_runs", "skill_trust", "capture_queue", "capture_usage", "mcp_trust",
		"chat_pair_wrong", "taint_texts", "totp", "totp_used", "totp_wrong", "recipients", "chat_settings",
		"memory_reviews", "memory_review_slots", "store_owner",
	}
	copySkip = []string{"schema_migrations", "held_locks", "memory_units", "memory_fts", "memory_sources"}
)

// CopyReport is what Copy moved: each table's rows, in copyOrder.
type CopyReport struct {
	Tables []CopiedTable
}

// CopiedTable is one table's row count, read back from both stores.
type CopiedTable struct {
	Name     string
	From, To int64
}

// ErrTargetNotEmpty is returned by Copy when the target already holds a
// session or an audit record: Copy fills a new store, never merges.
var ErrTargetNotEmpty = errors.New("the target store already holds data")

// Copy moves every row of src into dst — a SQLite home into a PostgreSQL
// database or back (`homard store migrate`) — in one transaction of dst:
// all of it or nothing. Both must be at the same schema version and dst
// empty. Rows keep their ids and, where queries order by SQLite's rowid,
// their order. The memory index is not copied (copySkip). After the
// copy each table's rows are counted on both sides; a difference is an
// error and the transaction is rolled back. Nothing may write to src
// meanwhile (the caller checks that no homard runs on it).
func Copy(ctx context.Context, dst, src *Store) (CopyReport, error) {
	var rep CopyReport
	vs, err := src.SchemaVersion(ctx)
	if err != nil {
		return rep, err
	}
	vd, err := dst.SchemaVersion(ctx)
	if err != nil {
		return rep, err
	}
	if vs != vd {
		return rep, fmt.Errorf("copy store: the source is at schema version %d, the target at %d; open both with the same homard first", vs, vd)
	}
	err = dst.Write(ctx, func(tx *Tx) error {
		var n int64
		if err := tx.queryRow(`SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM audit)`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return ErrTargetNotEmpty
		}
		// The one row a new store's migrations write.
		if _, err := tx.exec(`DELETE FROM integrity`); err != nil {
			return err
		}
		for _, table := range copyOrder {
			c, err := copyTable(ctx, tx, src, table)
			if err != nil {
				return fmt.Errorf("copy %s: %w", table, err)
			}
			rep.Tables = append(rep.Tables, c)
		}
		if dst.eng != nil {
			// Ids were copied as they were: the identity columns' next
			// values follow the largest.
			if err := resetIdentities(tx); err != nil {
				return err
			}
		}
		for i, c := range rep.Tables {
			if err := tx.queryRow(`SELECT count(*) FROM ` + c.Name).Scan(&rep.Tables[i].To); err != nil {
				return err
			}
			if rep.Tables[i].To != c.From {
				return fmt.Errorf("copy %s: %d rows in the source, %d in the target", c.Name, c.From, rep.Tables[i].To)
			}
		}
		return nil
	})
	return rep, err
}

// copyTable inserts src's rows of table into tx's store, the columns both
// have, converting text and bytes where the two schemas type a column
// differently (artifacts.text is bytes in PostgreSQL).
func copyTable(ctx context.Context, tx *Tx, src *Store, table string) (CopiedTable, error) {
	out := CopiedTable{Name: table}
	srcCols, err := src.columnTypes(ctx, table)
	if err != nil {
		return out, err
	}
	dstCols, err := tx.s.columnTypes(ctx, table)
	if err != nil {
		return out, err
	}
	var cols []string
	for _, c := range srcCols {
		if _, ok := dstCols.kind(c.name); ok && c.name != "rowid" {
			cols = append(cols, c.name)
		}
	}
	order := "rowid"
	if src.eng != nil {
		order = "1"
		if _, ok := srcCols.kind("rowid"); ok {
			order = "rowid"
		}
	}
	rows, err := src.reader.QueryContext(ctx, `SELECT `+strings.Join(cols, ", ")+` FROM `+table+` ORDER BY `+order)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	insert := `INSERT INTO ` + table + ` (` + strings.Join(cols, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return out, err
		}
		for i, c := range cols {
			k, _ := dstCols.kind(c)
			switch v := vals[i].(type) {
			case string:
				if k == kindBytes {
					vals[i] = []byte(v)
				}
			case []byte:
				if k == kindText {
					vals[i] = string(v)
				}
			}
		}
		if _, err := tx.exec(insert, vals...); err != nil {
			return out, err
		}
		out.From++
	}
	return out, rows.Err()
}

// Column kinds, as Copy needs them.
const (
	kindOther = iota
	kindText
	kindBytes
)

type column struct {
	name string
	kind int
}

type columns []column

func (cs columns) kind(name string) (int, bool) {
	for _, c := range cs {
		if c.name == name {
			return c.kind, true
		}
	}
	return 0, false
}

// columnTypes lists table's columns in order with their kinds.
func (s *Store) columnTypes(ctx context.Context, table string) (columns, error) {
	rows, err := s.reader.QueryContext(ctx, s.named("columns", `SELECT name, lower(type) FROM pragma_table_info(?) ORDER BY cid`), table)
	if err != nil {
		return nil, err
	}
	var out columns
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return nil, err
		}
		k := kindOther
		switch typ {
		case "text":
			k = kindText
		case "blob", "bytea":
			k = kindBytes
		}
		out = append(out, column{name, k})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no table %s", table)
	}
	return out, nil
}

// resetIdentities moves each identity column's next value past the
// largest copied id (an engine's store).
func resetIdentities(tx *Tx) error {
	rows, err := tx.s.wconn.QueryContext(tx.ctx, tx.s.named("identities", `SELECT '', '' WHERE 0`))
	if err != nil {
		return err
	}
	var pairs [][2]string
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			rows.Close()
			return err
		}
		pairs = append(pairs, [2]string{t, c})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	for _, p := range pairs {
		// Names from the database's own catalog, not input.
		var ignored sql.NullInt64
		q := `SELECT setval(pg_get_serial_sequence('` + p[0] + `', '` + p[1] + `'), coalesce(max(` + p[1] + `), 0) + 1, false) FROM ` + p[0]
		if err := tx.queryRow(q).Scan(&ignored); err != nil {
			return fmt.Errorf("reset %s.%s: %w", p[0], p[1], err)
		}
	}
	return nil
}
