package pgstore

import "testing"

func TestTranslate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		// SQLite numbers a bare ? one past the largest so far.
		{`SELECT ?2, ?, ?1, ?`, `SELECT $2, $3, $1, $4`},
		{`ORDER BY x LIMIT ?3`, `ORDER BY x LIMIT $3`},
		// Literals, quoted names and comments keep their question marks.
		{`SELECT '?', 'it''s ?', ? FROM "a?b"`, `SELECT '?', 'it''s ?', $1 FROM "a?b"`},
		{"SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"},
		{`SELECT /* ? */ ?`, `SELECT /* ? */ $1`},
		{`IN (?, ?, ?)`, `IN ($1, $2, $3)`},
		{`'unclosed ?`, `'unclosed ?`},
	} {
		if got := Translate(tc.in); got != tc.want {
			t.Errorf("Translate(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
