package integrity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	st   *store.Store
	path string // where the store lives (storetest.Where): a file or a URL
	now  time.Time
	n    int // records appended
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{path: storetest.Where(t), now: t0}
	var err error
	if e.st, err = store.OpenURL(t.Context(), e.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.st.Close() })
	return e
}

func (e *env) append(t *testing.T, k int) {
	t.Helper()
	for range k {
		e.n++
		err := e.st.Write(t.Context(), func(tx *store.Tx) error {
			_, err := audit.Append(tx, audit.Record{Time: t0.Add(time.Duration(e.n) * time.Second), Owner: "me", Session: "s",
				Trust: policy.TrustOwner, Tool: "write_file", Decision: audit.Ran, Rule: "mode.yolo", Reason: fmt.Sprint("r", e.n)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// sql runs statements on the database behind homard's back: the SQLite
// file, or the PostgreSQL schema (where DROP TRIGGER names its table).
func (e *env) sql(t *testing.T, stmts ...string) {
	t.Helper()
	db := storetest.Raw(t, e.path)
	defer db.Close()
	for _, s := range stmts {
		if storetest.Postgres(e.path) && strings.HasPrefix(s, "DROP TRIGGER ") {
			s += " ON audit"
		}
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func (e *env) check(t *testing.T, full bool) Report {
	t.Helper()
	e.now = e.now.Add(time.Hour)
	rep, err := Check(t.Context(), e.st, Options{Now: func() time.Time { return e.now }, Full: full})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return rep
}

func TestCheckSoundRecords(t *testing.T) {
	e := newEnv(t)
	e.append(t, 3)
	first := e.check(t, false)
	if !first.Full || first.Found != "" || first.Verified != 3 || first.State.VerifiedSeq != 3 || first.State.FullAt.IsZero() {
		t.Fatalf("first Check = %+v; want a full check verifying 3 records, no problem", first)
	}
	e.append(t, 2)
	next := e.check(t, false)
	if next.Full || next.Found != "" || next.Verified != 2 || next.State.VerifiedSeq != 5 {
		t.Fatalf("second Check = %+v; want an incremental check of the 2 new records", next)
	}
	e.now = e.now.Add(DefaultFullEvery)
	if daily := e.check(t, false); !daily.Full || daily.Verified != 5 || daily.Found != "" {
		t.Errorf("Check a day later = %+v; want a full check of 5 records", daily)
	}
	if _, err := Acknowledge(t.Context(), e.st, "me", e.now); !errors.Is(err, ErrNothingToAck) {
		t.Errorf("Acknowledge with nothing held = %v; want ErrNothingToAck", err)
	}
}

// TestCheckFindsDamage: each kind of damage is found by the check that can
// see it, held until acknowledged, and not found again afterwards, while
// later records are verified as before.
func TestCheckFindsDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage []string
		full   bool   // the check that finds it
		want   string // in the problem
	}{
		{"edit in the middle (full check)", []string{"DROP TRIGGER audit_no_update", "UPDATE audit SET reason = 'x' WHERE seq = 2"}, true, "record 2"},
		{"edit of the last verified record", []string{"DROP TRIGGER audit_no_update", "UPDATE audit SET reason = 'x' WHERE seq = 4"}, false, "record 4"},
		{"records deleted from the end", []string{"DROP TRIGGER audit_no_delete", "DELETE FROM audit WHERE seq >= 3"}, false, "deleted from its end"},
		{"record deleted in the middle (full check)", []string{"DROP TRIGGER audit_no_delete", "DELETE FROM audit WHERE seq = 2"}, true, "record 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.append(t, 4)
			e.check(t, true)
			e.sql(t, tc.damage...)
			rep := e.check(t, tc.full)
			if !strings.Contains(rep.Found, tc.want) || rep.State.Problem != rep.Found {
				t.Fatalf("Check after damage = found %q, held %q; want a problem naming %q, held", rep.Found, rep.State.Problem, tc.want)
			}
			if p, _ := e.st.IntegrityProblem(t.Context()); p == "" {
				t.Fatal("the problem is not stored for the arbiter")
			}
			// Still held at the next start.
			if again := e.check(t, false); again.State.Problem == "" {
				t.Fatalf("next Check = %+v; want the problem still held", again)
			}
			st, err := Acknowledge(t.Context(), e.st, "me", e.now)
			if err != nil || st.Problem != "" || st.AckedProblem != rep.Found || st.AckedBy != "me" {
				t.Fatalf("Acknowledge = %+v, %v; want the problem cleared and remembered", st, err)
			}
			for _, full := range []bool{false, true} {
				if after := e.check(t, full); after.Found != "" || after.State.Problem != "" {
					t.Fatalf("Check (full=%v) after the ack = %+v; want nothing held", full, after)
				}
			}
			e.append(t, 2)
			if after := e.check(t, true); after.Found != "" || after.Verified != 2 {
				t.Errorf("full Check of records appended after the ack = %+v; want 2 verified", after)
			}
			// A new break after the ack is found again.
			e.sql(t, "DROP TRIGGER IF EXISTS audit_no_update", fmt.Sprintf("UPDATE audit SET reason = 'y' WHERE seq = %d", after2(e)))
			if again := e.check(t, true); again.State.Problem == "" {
				t.Errorf("Check after a second edit = %+v; want it held again", again)
			}
		})
	}
}

// after2 is the seq of the newest record.
func after2(e *env) int64 {
	seq, _ := e.st.LastAuditSeq(context.Background())
	return seq
}
