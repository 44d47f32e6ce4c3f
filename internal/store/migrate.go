package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// Migrations are numbered files migrations/NNNN_name.sql, numbered from 1
// without gaps. Each runs once, in order, inside its own transaction, and
// its number is recorded in schema_migrations in that same transaction, so
// a failed migration leaves no trace and is retried on the next Open. A
// migration is never edited once released: add a new file instead.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries { // ReadDir sorts by name
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: want a name like 0001_init.sql", e.Name())
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("migration %s: want number %d (numbers start at 1, no gaps)", e.Name(), len(ms)+1)
		}
		body, err := fs.ReadFile(migrationFiles, "migrations/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	return ms, nil
}

func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	s.wmu.Lock()
	_, err = s.wconn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`)
	s.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	current, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if current > len(ms) {
		return fmt.Errorf("migrate: schema version %d, this homard knows %d: %w", current, len(ms), ErrSchemaTooNew)
	}
	for _, m := range ms[current:] {
		err := s.Write(ctx, func(tx *Tx) error {
			// Another process may have applied it since we looked.
			var n int
			if err := tx.queryRow(`SELECT count(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if err := tx.script(m.sql); err != nil {
				return err
			}
			_, err := tx.exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UnixNano())
			return err
		})
		if err != nil {
			return fmt.Errorf("apply migration %s: %w", m.name, err)
		}
	}
	return nil
}

// SchemaVersion is the number of the last applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.reader.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
