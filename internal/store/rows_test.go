package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestToolRunLifecycle(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	var id string
	run := ToolRun{
		SessionID: "s1", Owner: "alice", Tool: "write_file", PlanHash: "abc",
		Plan: []byte(`{"body":{"path":"a.md"}}`), Display: "write a.md", Status: RunRequested,
		Decision: "ask", Rule: "mode.safe", Reason: "safe mode asks", CreatedAt: t0,
	}
	write(t, s, func(tx *Tx) error {
		if err := tx.EnsureSession("s1", "alice", t0); err != nil {
			return err
		}
		var err error
		id, err = tx.InsertToolRun(run)
		return err
	})
	got, err := s.GetToolRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := run
	want.ID, want.UpdatedAt = id, t0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetToolRun = %+v\nwant %+v", got, want)
	}

	update := func(status string, now time.Time) error {
		return s.Write(ctx, func(tx *Tx) error {
			return tx.UpdateToolRun(id, status, "out:"+status, status == RunFailed, now)
		})
	}
	for i, st := range []string{RunApproved, RunRunning, RunFailed} {
		if err := update(st, t0.Add(time.Duration(i+1)*time.Second)); err != nil {
			t.Fatalf("UpdateToolRun(%s): %v", st, err)
		}
	}
	got, _ = s.GetToolRun(ctx, id)
	if got.Status != RunFailed || got.Result != "out:failed" || !got.IsError || !got.UpdatedAt.Equal(t0.Add(3*time.Second)) {
		t.Errorf("after updates: %+v", got)
	}
	if err := update(RunSucceeded, t0); !errors.Is(err, ErrRunFinished) {
		t.Errorf("update of a finished run = %v; want ErrRunFinished", err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.UpdateToolRun("nope", RunRunning, "", false, t0) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("update of unknown run = %v; want ErrNotFound", err)
	}
}

func TestToolRunStatusMovesForwardOnly(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	var id string
	write(t, s, func(tx *Tx) error {
		if err := tx.EnsureSession("s1", "alice", t0); err != nil {
			return err
		}
		var err error
		id, err = tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Status: RunRunning, CreatedAt: t0})
		return err
	})
	for _, st := range []string{RunRequested, RunApproved, RunRunning, "exploded"} {
		err := s.Write(ctx, func(tx *Tx) error { return tx.UpdateToolRun(id, st, "", false, t0) })
		if !errors.Is(err, ErrRunStatus) {
			t.Errorf("running → %s = %v; want ErrRunStatus", st, err)
		}
	}
}

func TestInsertToolRunChecksSessionOwner(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
	err := s.Write(ctx, func(tx *Tx) error {
		_, err := tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "mallory", Status: RunRequested, CreatedAt: t0})
		return err
	})
	if !errors.Is(err, ErrSessionOwner) {
		t.Errorf("InsertToolRun into another owner's session = %v; want ErrSessionOwner", err)
	}
	err = s.Write(ctx, func(tx *Tx) error {
		_, err := tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Status: "weird", CreatedAt: t0})
		return err
	})
	if !errors.Is(err, ErrRunStatus) {
		t.Errorf("InsertToolRun with unknown status = %v; want ErrRunStatus", err)
	}
}

func TestListToolRunsNewestFirst(t *testing.T) {
	s := openTest(t)
	write(t, s, func(tx *Tx) error {
		if err := tx.EnsureSession("s1", "alice", t0); err != nil {
			return err
		}
		for i := range 5 {
			r := ToolRun{SessionID: "s1", Owner: "alice", Status: RunRequested, Tool: fmt.Sprint("t", i),
				CreatedAt: t0.Add(time.Duration(i) * time.Minute)}
			if _, err := tx.InsertToolRun(r); err != nil {
				return err
			}
		}
		return nil
	})
	got, err := s.ListToolRuns(t.Context(), 3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID+":"+r.Tool)
	}
	if want := []string{"run_5:t4", "run_4:t3", "run_3:t2"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ListToolRuns(3) = %v; want %v", ids, want)
	}
}

func seedApproval(t *testing.T, s *Store, a Approval) {
	t.Helper()
	write(t, s, func(tx *Tx) error {
		if err := tx.EnsureSession(a.SessionID, a.Owner, t0); err != nil {
			return err
		}
		return tx.InsertApproval(a)
	})
}

func pending(id string) Approval {
	return Approval{ID: id, Tool: "write_file", PlanHash: "h1", Owner: "alice", SessionID: "s1",
		Display: "write notes/a.md", Plan: []byte(`{"tool":"write_file"}`), Targets: []string{"notes/a.md"},
		Risk: 2, Status: "pending", CreatedAt: t0, ExpiresAt: t0.Add(30 * time.Minute), Template: `{"program":"/usr/bin/mkdir"}`}
}

func TestApprovalRoundTripAndDecide(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	a := pending("ap1")
	seedApproval(t, s, a)
	got, err := s.GetApproval(ctx, "ap1")
	if err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("GetApproval = %+v, %v\nwant %+v", got, err, a)
	}
	decide := func(d ApprovalDecision) bool {
		var ok bool
		write(t, s, func(tx *Tx) error {
			var err error
			ok, err = tx.DecideApproval(d)
			return err
		})
		return ok
	}
	base := ApprovalDecision{ID: "ap1", Approver: "alice", Status: "approved", Scope: "once", Now: t0.Add(time.Minute), ExpiresAt: t0.Add(31 * time.Minute)}
	for name, d := range map[string]ApprovalDecision{
		"foreign approver": func(d ApprovalDecision) ApprovalDecision { d.Approver = "mallory"; return d }(base),
		"after expiry":     func(d ApprovalDecision) ApprovalDecision { d.Now = t0.Add(30 * time.Minute); return d }(base),
		"unknown id":       func(d ApprovalDecision) ApprovalDecision { d.ID = "nope"; return d }(base),
	} {
		if decide(d) {
			t.Errorf("DecideApproval(%s) changed the row", name)
		}
	}
	if !decide(base) {
		t.Fatal("DecideApproval(valid) did not change the row")
	}
	if decide(base) {
		t.Error("DecideApproval applied twice")
	}
	got, _ = s.GetApproval(ctx, "ap1")
	if got.Status != "approved" || got.Scope != "once" || got.DecidedBy != "alice" || !got.DecidedAt.Equal(base.Now) || !got.ExpiresAt.Equal(base.ExpiresAt) {
		t.Errorf("after approval: %+v", got)
	}
}

func TestConsumeApprovalOnce(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	a := pending("ap1")
	a.Status, a.Scope, a.DecidedAt, a.DecidedBy = "approved", "once", t0, "alice"
	seedApproval(t, s, a)
	consume := func(tool, hash, owner, session string, now time.Time) bool {
		var ok bool
		write(t, s, func(tx *Tx) error {
			var err error
			_, ok, err = tx.ConsumeApproval(tool, hash, owner, session, now)
			return err
		})
		return ok
	}
	now := t0.Add(time.Minute)
	for _, c := range [][4]string{
		{"other_tool", "h1", "alice", "s1"},
		{"write_file", "h2", "alice", "s1"},
		{"write_file", "h1", "mallory", "s1"},
		{"write_file", "h1", "alice", "s2"},
	} {
		if consume(c[0], c[1], c[2], c[3], now) {
			t.Errorf("ConsumeApproval%v consumed an approval bound to something else", c)
		}
	}
	if consume("write_file", "h1", "alice", "s1", a.ExpiresAt) {
		t.Error("ConsumeApproval at expiry consumed")
	}
	if !consume("write_file", "h1", "alice", "s1", now) {
		t.Fatal("ConsumeApproval(exact binding) = false")
	}
	if consume("write_file", "h1", "alice", "s1", now) {
		t.Error("second ConsumeApproval = true; want single use")
	}
	got, _ := s.GetApproval(ctx, "ap1")
	if got.Status != "consumed" || !got.ConsumedAt.Equal(now) {
		t.Errorf("after consume: status %s at %v", got.Status, got.ConsumedAt)
	}
}

func TestListApprovalsEffectiveStatus(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	live, lapsed := pending("live"), pending("lapsed")
	lapsed.ExpiresAt = t0.Add(time.Minute)
	lapsed.CreatedAt = t0.Add(-time.Minute)
	seedApproval(t, s, live)
	seedApproval(t, s, lapsed)
	now := t0.Add(5 * time.Minute)
	for status, want := range map[string][]string{
		"":         {"live", "lapsed"},
		"pending":  {"live"},
		"expired":  {"lapsed"},
		"approved": nil,
	} {
		got, err := s.ListApprovals(ctx, "", status, now, 0)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range got {
			ids = append(ids, a.ID)
		}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("ListApprovals(%q) = %v; want %v", status, ids, want)
		}
	}
}

func TestGrants(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	seedApproval(t, s, pending("ap1"))
	g := func(id, session string, risk int, expires time.Time) Grant {
		scope := "always"
		if session != "" {
			scope = "session"
		}
		return Grant{ID: id, Owner: "alice", SessionID: session, Tool: "write_file", Patterns: []string{"notes/**"},
			MaxRisk: risk, Scope: scope, ApprovalID: "ap1", CreatedAt: t0, ExpiresAt: expires, Template: `{"entry":"` + id + `"}`}
	}
	later := t0.Add(time.Hour)
	grants := []Grant{g("g-s1", "s1", 2, later), g("g-any", "", 3, later), g("g-old", "", 3, t0), g("g-low", "", 1, later), g("g-rev", "", 3, later)}
	write(t, s, func(tx *Tx) error {
		if err := tx.EnsureSession("s2", "alice", t0); err != nil {
			return err
		}
		for _, gr := range grants {
			if err := tx.InsertGrant(gr); err != nil {
				return err
			}
		}
		return tx.RevokeGrant("g-rev", t0)
	})
	ids := func(session string, risk int) []string {
		got, err := s.ActiveGrants(ctx, "alice", session, "write_file", risk, t0.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, gr := range got {
			out = append(out, gr.ID)
		}
		return out
	}
	for _, tc := range []struct {
		session string
		risk    int
		want    []string
	}{
		{"s1", 2, []string{"g-s1", "g-any"}},
		{"s2", 2, []string{"g-any"}},
		{"s1", 3, []string{"g-any"}},
		{"s1", 1, []string{"g-s1", "g-any", "g-low"}},
	} {
		if got := ids(tc.session, tc.risk); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ActiveGrants(%s, risk %d) = %v; want %v", tc.session, tc.risk, got, tc.want)
		}
	}
	got, err := s.GetGrant(ctx, "g-s1")
	if want := grants[0]; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("GetGrant = %+v, %v\nwant %+v", got, err, want)
	}
	all, _ := s.ListGrants(ctx, "alice")
	if len(all) != len(grants) {
		t.Errorf("ListGrants = %d grants; want %d", len(all), len(grants))
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.RevokeGrant("nope", t0) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("RevokeGrant(unknown) = %v; want ErrNotFound", err)
	}
	// scope and session must agree (schema CHECK).
	bad := g("g-bad", "", 1, later)
	bad.Scope = "session"
	if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertGrant(bad) }); err == nil {
		t.Error("InsertGrant(session scope without a session) = nil; want a CHECK error")
	}
}

func TestAuditAppendOnly(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	write(t, s, func(tx *Tx) error {
		seq, hash, err := tx.LastAudit()
		if err != nil || seq != 0 || hash != "" {
			t.Errorf("LastAudit on empty = %d, %q, %v; want 0, \"\", nil", seq, hash, err)
		}
		for i := int64(1); i <= 3; i++ {
			if err := tx.InsertAudit(AuditRow{Seq: i, Time: t0, Hash: fmt.Sprint("h", i)}); err != nil {
				return err
			}
		}
		seq, hash, err = tx.LastAudit()
		if err != nil || seq != 3 || hash != "h3" {
			t.Errorf("LastAudit = %d, %q, %v; want 3, h3, nil", seq, hash, err)
		}
		return nil
	})
	if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertAudit(AuditRow{Seq: 2, Time: t0}) }); err == nil {
		t.Error("InsertAudit with a used seq = nil; want an error")
	}
	for _, q := range []string{`UPDATE audit SET reason = 'x' WHERE seq = 2`, `DELETE FROM audit WHERE seq = 2`} {
		_, err := s.execWriter(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s = %v; want the append-only trigger's error", q, err)
		}
	}
	var seqs []int64
	stop := errors.New("stop")
	err := s.AllAudit(ctx, func(r AuditRow) error {
		seqs = append(seqs, r.Seq)
		if r.Seq == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !reflect.DeepEqual(seqs, []int64{1, 2}) {
		t.Errorf("AllAudit stopping at 2 = %v, %v; want stop after [1 2]", seqs, err)
	}
	rows, err := s.ListAudit(ctx, 1, 1)
	if err != nil || len(rows) != 1 || rows[0].Seq != 2 || !rows[0].Time.Equal(t0) {
		t.Errorf("ListAudit(after 1, limit 1) = %+v, %v; want seq 2", rows, err)
	}
}

// TestToolRunIDsAcrossMigration8 builds a database as homard left it before
// migration 0008 (random TEXT run ids), opens it, and checks that the old
// runs keep their ids and that new runs are numbered after them.
func TestToolRunIDsAcrossMigration8(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "homard.db")
	db, err := openDB(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := loadMigrations(migrationFiles, "migrations", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,
		name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:7] {
		if _, err := db.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, 1)`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	// Two runs with ids as arbiter.newID made them; the second is all
	// digits, which must not be mistaken for a numbered run.
	legacy := []string{"run_0a1b2c3d4e5f6a7b", "run_1234567890123456"}
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (id, owner, created_at) VALUES ('s1', 'alice', 1)`); err != nil {
		t.Fatal(err)
	}
	for i, id := range legacy {
		if _, err := db.ExecContext(ctx, `INSERT INTO tool_runs (id, session_id, owner, tool, plan_hash, plan, display,
			status, decision, rule, reason, created_at, updated_at)
			VALUES (?, 's1', 'alice', ?, 'h', '{}', '', 'running', 'ran', '', '', 1, 1)`, id, fmt.Sprint("old", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open (migration 0008): %v", err)
	}
	defer s.Close()
	for i, id := range legacy {
		r, err := s.GetToolRun(ctx, id)
		if err != nil || r.ID != id || r.Tool != fmt.Sprint("old", i) {
			t.Fatalf("GetToolRun(%s) after 0008 = %+v, %v", id, r, err)
		}
	}
	var fresh string
	write(t, s, func(tx *Tx) error {
		if err := tx.UpdateToolRun(legacy[1], RunSucceeded, "done", false, t0); err != nil {
			return err
		}
		var err error
		fresh, err = tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Tool: "new", Status: RunRunning, CreatedAt: t0})
		return err
	})
	if fresh != "run_3" {
		t.Errorf("first run after two old ones = %q; want run_3", fresh)
	}
	if r, _ := s.GetToolRun(ctx, legacy[1]); r.Status != RunSucceeded || r.Result != "done" {
		t.Errorf("old run after UpdateToolRun = %+v", r)
	}
	if r, _ := s.GetToolRun(ctx, legacy[0]); r.Status != RunRunning {
		t.Errorf("UpdateToolRun of one old run changed another: %+v", r)
	}
	runs, err := s.ListToolRuns(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	if want := []string{"run_3", legacy[1], legacy[0]}; !reflect.DeepEqual(ids, want) {
		t.Errorf("ListToolRuns = %v; want %v", ids, want)
	}
	for _, id := range []string{"run_0", "run_03", "run_", "run_4", "3", "run_99999999999999999999"} {
		if _, err := s.GetToolRun(ctx, id); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetToolRun(%q) = %v; want ErrNotFound", id, err)
		}
	}
}
