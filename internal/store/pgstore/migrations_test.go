package pgstore

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestMigrationsKeepPace: every SQLite migration after the baseline has a
// PostgreSQL one of the same number and name, and the baseline is the
// SQLite schema's version when the engine arrived — so a migration
// written for SQLite alone fails here, not on an operator's database.
func TestMigrationsKeepPace(t *testing.T) {
	names := func(dir string) []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".sql") {
				out = append(out, e.Name())
			}
		}
		sort.Strings(out)
		return out
	}
	sqlite, pg := names(filepath.Join("..", "migrations")), names("migrations")
	if len(pg) == 0 || pg[0] != "0033_baseline.sql" {
		t.Fatalf("PostgreSQL migrations = %v; want 0033_baseline.sql first", pg)
	}
	if len(sqlite) < 33 {
		t.Fatalf("SQLite migrations: %d files; want at least 33", len(sqlite))
	}
	want := sqlite[33:]
	if got := pg[1:]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("PostgreSQL migrations after the baseline = %v; want the SQLite ones after 0033: %v", got, want)
	}
}
