package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
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

// loadMigrations reads the migrations of fsys's folder dir, numbered
// without gaps from first.
func loadMigrations(fsys fs.FS, dir string, first int) ([]migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
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
		if v != first+len(ms) {
			return nil, fmt.Errorf("migration %s: want number %d (numbers start at %d, no gaps)", e.Name(), first+len(ms), first)
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(body)})
	}
	return ms, nil
}

func (s *Store) migrate(ctx context.Context) error {
	fsys, dir, first := fs.FS(migrationFiles), "migrations", 1
	if s.eng != nil {
		fsys, dir, first = s.eng.Migrations, ".", s.eng.Baseline
	}
	ms, err := loadMigrations(fsys, dir, first)
	if err != nil {
		return err
	}
	// In a write transaction: on a shared database another process may
	// be creating it at the same moment.
	err = s.Write(ctx, func(tx *Tx) error {
		return tx.script(s.named("schema_migrations", `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	) STRICT`))
	})
	if err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	current, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	last := first - 1 + len(ms)
	if current > last {
		return fmt.Errorf("migrate: schema version %d, this homard knows %d: %w", current, last, ErrSchemaTooNew)
	}
	for _, m := range ms {
		if m.version <= current {
			continue
		}
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
