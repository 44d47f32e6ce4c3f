package store

import (
	"context"
	"database/sql"
	"fmt"
)

// PlainDB opens a pool on the store's database and schema whose
// connections take SQL in the database's own dialect, untranslated: for a
// library that brings its own queries (river's job tables, on PostgreSQL),
// which the store's pools would rewrite (they number ? parameters). ok is
// false for a store whose engine has none (SQLite: the built-in scheduler
// needs none). Each call opens a pool, and Close closes them all: whoever
// uses one must be done before the store is closed. Nothing the store
// guarantees (the write lock, the run locks) holds for what is done on it.
func (s *Store) PlainDB(ctx context.Context) (db *sql.DB, ok bool, err error) {
	if s.eng == nil || s.eng.Plain == nil {
		return nil, false, nil
	}
	s.readMu.Lock()
	closed := s.closed
	s.readMu.Unlock()
	if !closed {
		db, err = s.eng.Plain(ctx, s.reader)
		if err != nil {
			return nil, true, fmt.Errorf("open a plain %s pool: %w", s.eng.Name, err)
		}
		// Close closes it with the listeners; a Close in between wins.
		s.readMu.Lock()
		defer s.readMu.Unlock()
		if closed = s.closed; !closed {
			s.listeners = append(s.listeners, func() { db.Close() })
			return db, true, nil
		}
		db.Close()
	}
	return nil, true, fmt.Errorf("open a plain %s pool: %w", s.eng.Name, ErrClosed)
}
