package store

import (
	"path/filepath"
	"slices"
	"sort"
	"testing"
)

// TestCopyCoversEveryTable: every table of the schema is either copied by
// Copy or named as left out, so a new migration's table cannot be lost
// in a move between databases.
func TestCopyCoversEveryTable(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "homard.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.reader.QueryContext(t.Context(), `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memory_fts_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	known := append(slices.Clone(copyOrder), copySkip...)
	sort.Strings(tables)
	sort.Strings(known)
	if !slices.Equal(tables, known) {
		t.Errorf("tables %v\nCopy knows %v", tables, known)
	}
}

// seedForCopy writes a little of everything Copy must carry: a session
// with a turn, an approval, an audit record, a tool run and an artifact
// whose text is not valid UTF-8.
func seedForCopy(t *testing.T, s *Store) {
	t.Helper()
	seedApproval(t, s, pending("ap_1"))
	write(t, s, func(tx *Tx) error {
		if _, err := tx.AppendTurn("s1", "alice", []MessageRow{{Role: "user", Content: "hello"}}, Usage{}, "", t0); err != nil {
			return err
		}
		if err := tx.InsertAudit(AuditRow{Seq: 1, Time: t0, Owner: "alice", Session: "s1", Trust: "owner", Tool: "read_file",
			Decision: "allow", Args: "{}", PrevHash: "0", Hash: "h1"}); err != nil {
			return err
		}
		if _, err := tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Tool: "read_file", Status: RunRequested, CreatedAt: t0}); err != nil {
			return err
		}
		return tx.InsertArtifact(Artifact{ID: "art_1", Owner: "alice", Session: "s1", Tool: "read_file", CreatedAt: t0, Text: "bytes \xff kept"})
	})
}

// TestCopyRefusesATargetWithData: Copy fills a new store, never merges.
func TestCopyRefusesATargetWithData(t *testing.T) {
	src, dst := openTest(t), openTest(t)
	seedForCopy(t, src)
	seedApproval(t, dst, pending("ap_other"))
	if _, err := Copy(t.Context(), dst, src); err == nil {
		t.Fatal("Copy into a store with a session succeeded")
	}
	if a, err := dst.ListApprovals(t.Context(), "", "pending", t0, 10); err != nil || len(a) != 1 || a[0].ID != "ap_other" {
		t.Errorf("the target after the refusal: %+v, %v; want its own approval only", a, err)
	}
}
