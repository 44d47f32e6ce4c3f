package store

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fillerStore opens a store at path with a table and an index of about
// 1.5 MB, so that a quick check reads several hundred pages.
func fillerStore(t testing.TB, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	for _, q := range []string{
		`CREATE TABLE filler (id INTEGER PRIMARY KEY, v BLOB)`,
		`CREATE INDEX filler_v ON filler (v)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
			INSERT INTO filler (id, v) SELECT i, randomblob(200) FROM n`,
	} {
		if _, err := s.execWriter(t.Context(), q); err != nil {
			s.Close()
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	return s
}

// readerCacheSize is PRAGMA cache_size of the reader pool's connection,
// with the pool pinned to one connection so that it is the one
// QuickCheck used.
func readerCacheSize(t *testing.T, s *Store) int64 {
	t.Helper()
	var n int64
	if err := s.reader.QueryRowContext(t.Context(), "PRAGMA cache_size").Scan(&n); err != nil {
		t.Fatalf("PRAGMA cache_size: %v", err)
	}
	return n
}

// TestQuickCheck: a sound database passes and the connection gets its own
// page cache size back (the check reads through a small one so that an
// idle serve does not keep the whole file in memory); a damaged page is
// still found through the small cache.
func TestQuickCheck(t *testing.T) {
	t.Run("sound, cache size restored", func(t *testing.T) {
		s := fillerStore(t, filepath.Join(t.TempDir(), "homard.db"))
		defer s.Close()
		s.reader.SetMaxOpenConns(1)
		before := readerCacheSize(t, s)
		if before == quickCheckCacheKiB {
			t.Fatalf("the pool's cache_size is already %d; the test cannot tell a restore", before)
		}
		if err := s.QuickCheck(t.Context()); err != nil {
			t.Fatalf("QuickCheck of a sound database = %v; want nil", err)
		}
		if after := readerCacheSize(t, s); after != before {
			t.Errorf("cache_size after QuickCheck = %d; want the connection's own %d back", after, before)
		}
	})
	t.Run("damaged page found", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "homard.db")
		s := fillerStore(t, path)
		if err := s.Close(); err != nil { // checkpoints the WAL into the file
			t.Fatalf("Close: %v", err)
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		// A page of the filler table or its index, created last: near the
		// end of the file, far from the schema on page 1.
		garbage := make([]byte, 4096)
		for i := range garbage {
			garbage[i] = 0xA5
		}
		if _, err := f.WriteAt(garbage, fi.Size()-16*4096); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		s, err = Open(t.Context(), path)
		if err != nil {
			t.Fatalf("Open of a file with one damaged data page: %v", err)
		}
		defer s.Close()
		if err := s.QuickCheck(t.Context()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("QuickCheck after damage = %v; want ErrCorrupt", err)
		}
	})
}

// BenchmarkQuickCheck measures the check through its small page cache on a
// database of about 1.5 MB (the file stays in the OS page cache).
func BenchmarkQuickCheck(b *testing.B) {
	s := fillerStore(b, filepath.Join(b.TempDir(), "homard.db"))
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.QuickCheck(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}
