package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Test-only access to raw SQL. It is compiled only into this package's
// tests, so production code has no way to bypass the methods above.

func (s *Store) execWriter(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.writer.ExecContext(ctx, q, args...)
}

func (s *Store) execReader(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.reader.ExecContext(ctx, q, args...)
}

// pragma reads a pragma on the writer or on a reader connection.
func (s *Store) pragma(ctx context.Context, onWriter bool, name string) (string, error) {
	db := s.reader
	if onWriter {
		db = s.writer
	}
	var v string
	if err := db.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v); err != nil {
		return "", fmt.Errorf("pragma %s: %w", name, err)
	}
	return v, nil
}
