package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Test-only access to raw SQL. It is compiled only into this package's
// tests, so production code has no way to bypass the methods above.

func (s *Store) execWriter(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.wconn.ExecContext(ctx, q, args...)
}

func (s *Store) execReader(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.reader.ExecContext(ctx, q, args...)
}

// pragma reads a pragma on the writer or on a reader connection.
func (s *Store) pragma(ctx context.Context, onWriter bool, name string) (string, error) {
	var v string
	var err error
	if onWriter {
		s.wmu.Lock()
		err = s.wconn.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v)
		s.wmu.Unlock()
	} else {
		err = s.reader.QueryRowContext(ctx, "PRAGMA "+name).Scan(&v)
	}
	if err != nil {
		return "", fmt.Errorf("pragma %s: %w", name, err)
	}
	return v, nil
}
