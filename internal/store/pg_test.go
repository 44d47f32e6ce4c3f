//go:build postgres

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/homard/homard/internal/store/pgstore"
)

// With HOMARD_TEST_POSTGRES (scripts/pg-test sets it), openTest opens a
// store in a new schema of that database, dropped after the test. (The
// store's own tests cannot use package storetest, which imports store.)
func init() {
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		return
	}
	openOther = func(t *testing.T) *Store {
		t.Helper()
		url, drop, err := pgstore.NewSchema(t.Context(), base)
		if err != nil {
			t.Fatalf("new schema: %v", err)
		}
		s, err := OpenURL(t.Context(), url)
		if err != nil {
			t.Fatalf("OpenURL: %v", err)
		}
		t.Cleanup(func() {
			s.Close()
			if err := drop(); err != nil {
				t.Errorf("drop schema: %v", err)
			}
		})
		return s
	}
}

// TestSchemasMatch: the PostgreSQL schema has every table and column the
// SQLite one has (besides the rowid columns it adds, and FTS5's own
// tables), so a query written against one finds its columns in the other.
func TestSchemasMatch(t *testing.T) {
	if openOther == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("HOMARD_TEST_POSTGRES is not set: CI runs this suite through scripts/pg-test")
		}
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	ctx := t.Context()
	lite, err := Open(ctx, t.TempDir()+"/homard.db")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	pg := openTest(t)
	columns := func(s *Store, q string) map[string]bool {
		rows, err := s.reader.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for rows.Next() {
			var table, col string
			if err := rows.Scan(&table, &col); err != nil {
				t.Fatal(err)
			}
			out[table+"."+col] = true
		}
		rows.Close()
		return out
	}
	liteCols := columns(lite, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' AND m.name NOT LIKE 'memory_fts%' AND m.name NOT LIKE 'sqlite_%'`)
	pgCols := columns(pg, `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`)
	for c := range liteCols {
		if !pgCols[c] {
			t.Errorf("PostgreSQL has no column %s", c)
		}
	}
	for c := range pgCols {
		if !liteCols[c] && !strings.HasSuffix(c, ".rowid") && !strings.HasPrefix(c, "memory_fts.") {
			t.Errorf("PostgreSQL has a column %s that SQLite has not", c)
		}
	}
	if len(liteCols) < 100 {
		t.Errorf("SQLite schema: %d columns; the query read too little", len(liteCols))
	}
}

// TestWriterSurvivesACancelledStatement: a write whose context ends while
// its statement runs ends the PostgreSQL session under the writer; the
// next write takes a new one instead of failing for the store's life.
func TestWriterSurvivesACancelledStatement(t *testing.T) {
	if openOther == nil {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	s := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	err := s.Write(ctx, func(tx *Tx) error {
		go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		_, err := tx.exec(`SELECT pg_sleep(5)`)
		return err
	})
	if err == nil {
		t.Fatal("a write cancelled in the middle of a statement succeeded")
	}
	// The twin: the next write, with a live context, succeeds.
	write(t, s, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) })
}

// TestTryLockAcrossReplicas: two stores on one database (two replicas)
// exclude each other on a name; its twins: another name locks, and when
// the holder's session dies (a replica killed mid-turn) the name is free.
func TestTryLockAcrossReplicas(t *testing.T) {
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	url, drop, err := pgstore.NewSchema(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer drop()
	a, err := OpenURL(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenURL(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !a.Shared() {
		t.Fatal("a PostgreSQL store says it is not shared")
	}
	unlock, ok, err := a.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("a.TryLock = %v, %v", ok, err)
	}
	if _, ok, err := b.TryLock("session:s1"); err != nil || ok {
		t.Fatalf("b.TryLock of a's name = %v, %v; want refused", ok, err)
	}
	if u, ok, err := b.TryLock("session:s2"); err != nil || !ok {
		t.Fatalf("b.TryLock of another name = %v, %v", ok, err)
	} else {
		u()
	}
	unlock()
	u2, ok, err := b.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("b.TryLock after a's unlock = %v, %v", ok, err)
	}
	u2()
	// a takes it again and its process dies: the server ends a's
	// sessions, and the name is free for b.
	if _, ok, err := a.TryLock("session:s1"); err != nil || !ok {
		t.Fatalf("a.TryLock again = %v, %v", ok, err)
	}
	var pid int
	if err := b.readRow(t.Context(), `SELECT pid FROM held_locks WHERE name = 'name:session:s1'`).Scan(&pid); err != nil {
		t.Fatalf("find a's lock holder: %v", err)
	}
	if _, err := b.reader.ExecContext(t.Context(), `SELECT pg_terminate_backend(?)`, pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		u, ok, err := b.TryLock("session:s1")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			u()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the name stayed locked after its holder's session ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// schemaURL is the URL of a new PostgreSQL schema, dropped when the test
// ends.
func schemaURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	url, drop, err := pgstore.NewSchema(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	return url
}

// twoReplicas opens two stores on one new PostgreSQL schema, as two
// `homard serve` processes on one database.
func twoReplicas(t *testing.T) (*Store, *Store) {
	t.Helper()
	url := schemaURL(t)
	var out [2]*Store
	for i := range out {
		s, err := OpenURL(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out[0], out[1]
}

// TestInboxDedupAcrossReplicas: the same chat delivery received by two
// replicas at once (both polling, or a webhook retried to the other) is
// kept once; distinct deliveries are all kept.
func TestInboxDedupAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	const deliveries = 40
	var mu sync.Mutex
	inserted := map[string]int{}
	var wg sync.WaitGroup
	for _, s := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range deliveries {
				id := fmt.Sprint("d", i)
				var ok bool
				err := s.Write(context.Background(), func(tx *Tx) (err error) {
					ok, err = tx.InsertInbox(InboxRow{Platform: "telegram", Bot: "1", DeliveryID: id, Kind: "message", ChatID: "c", SenderID: "u", Payload: "{}", ReceivedAt: t0})
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					inserted[id]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(inserted) != deliveries {
		t.Errorf("%d deliveries kept; want all %d", len(inserted), deliveries)
	}
	for id, n := range inserted {
		if n != 1 {
			t.Errorf("delivery %s inserted %d times; want once", id, n)
		}
	}
}

// TestSlotClaimedOnceAcrossReplicas: two replicas' schedulers claiming the
// same slot of a task at once: one run. Its twin: the next slot is
// claimed too, once.
func TestSlotClaimedOnceAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	addTask(t, a, "task_1", t0)
	approve(t, a, "task_1")
	for _, slot := range []string{"2026-03-01T12:00", "2026-03-01T13:00"} {
		var claims atomic.Int32
		var wg sync.WaitGroup
		for _, s := range []*Store{a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.Write(context.Background(), func(tx *Tx) error {
					_, ok, err := tx.ClaimSlot("task_1", slot, t0, t0)
					if ok {
						claims.Add(1)
					}
					return err
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if n := claims.Load(); n != 1 {
			t.Errorf("slot %s claimed %d times across two replicas; want once", slot, n)
		}
	}
}

// TestLocksKeptPerSchema: two deployments in one database (two schemas)
// never take each other's locks — the same name and run key lock in both
// — while two replicas of one schema do (TestTryLockAcrossReplicas).
func TestLocksKeptPerSchema(t *testing.T) {
	if openOther == nil {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	a, b := openTest(t), openTest(t)
	ua, ok, err := a.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("a.TryLock = %v, %v", ok, err)
	}
	defer ua()
	ub, ok, err := b.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("another schema's TryLock of the same name = %v, %v; want granted", ok, err)
	}
	defer ub()
	if err := a.runs.hold(7); err != nil {
		t.Fatal(err)
	}
	if err := b.runs.hold(7); err != nil {
		t.Errorf("another schema's run lock 7: %v; want granted", err)
	}
}

// TestCopyToPostgresAndBack: a SQLite home moved into PostgreSQL and back
// into a new SQLite file keeps every row — counts on both sides each way,
// and the rows read back as they were (the artifact's invalid UTF-8
// included); ids go on after the copied ones.
func TestCopyToPostgresAndBack(t *testing.T) {
	if openOther == nil {
		if os.Getenv("CI") != "" {
			t.Fatal("HOMARD_TEST_POSTGRES is not set: CI runs this suite through scripts/pg-test")
		}
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	ctx := t.Context()
	lite, err := Open(ctx, filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	seedForCopy(t, lite)
	pg := openTest(t)
	rep, err := Copy(ctx, pg, lite)
	if err != nil {
		t.Fatalf("Copy to PostgreSQL: %v", err)
	}
	var total int64
	for _, c := range rep.Tables {
		total += c.To
	}
	if total < 8 {
		t.Errorf("copied %d rows in all: %+v", total, rep.Tables)
	}
	back, err := Open(ctx, filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if _, err := Copy(ctx, back, pg); err != nil {
		t.Fatalf("Copy back to SQLite: %v", err)
	}
	for _, s := range []*Store{pg, back} {
		a, err := s.ListApprovals(ctx, "", "pending", t0, 10)
		if err != nil || len(a) != 1 || a[0].ID != "ap_1" || string(a[0].Plan) != `{"tool":"write_file"}` {
			t.Errorf("%s: approvals %+v, %v", s.Engine(), a, err)
		}
		art, err := s.Artifact(ctx, "art_1")
		if err != nil || art.Text != "bytes \xff kept" {
			t.Errorf("%s: artifact %q, %v", s.Engine(), art.Text, err)
		}
		// A new tool run takes the next id after the copied one.
		var id string
		write(t, s, func(tx *Tx) (err error) {
			id, err = tx.InsertToolRun(ToolRun{SessionID: "s1", Owner: "alice", Tool: "read_file", Status: RunRequested, CreatedAt: t0})
			return err
		})
		if id != "run_2" {
			t.Errorf("%s: the next tool run is %s; want run_2", s.Engine(), id)
		}
	}
}

// TestListenAcrossReplicas: a decision recorded by one replica is
// announced to a listener on another as it commits, naming no approval
// (another deployment's role may LISTEN to any channel); a decision in
// another deployment (another schema of the database) is not announced
// here.
func TestListenAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	other := openTest(t) // another deployment in the same database
	got := make(chan string, 4)
	if ok, err := a.Listen(TopicApprovals, func(id string) { got <- id }); err != nil || !ok {
		t.Fatalf("Listen = %v, %v", ok, err)
	}
	decide := func(s *Store, id string) {
		seedApproval(t, s, pending(id))
		write(t, s, func(tx *Tx) error {
			ok, err := tx.DecideApproval(ApprovalDecision{ID: id, Status: "approved", Scope: "once", Now: t0, Approver: "alice", ExpiresAt: t0.Add(time.Hour)})
			if err == nil && !ok {
				err = fmt.Errorf("approval %s not decided", id)
			}
			return err
		})
	}
	decide(other, "ap_elsewhere")
	decide(b, "ap_here")
	select {
	case p := <-got:
		if p != "" {
			t.Errorf("announcement %q; want an empty payload, no approval id", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no announcement of a decision recorded by the other replica")
	}
	select {
	case p := <-got:
		t.Errorf("a second announcement %q: another deployment's decision reached this one", p)
	case <-time.After(time.Second):
	}
}

// TestCloseWhileListening: a store that listens closes. The listener
// holds a reader connection on which the store's read statements were
// prepared; closing those statements before the listener was stopped
// waited for that connection for ever (a replica's shutdown hung, and so
// did the first CI run of internal/app on PostgreSQL).
func TestCloseWhileListening(t *testing.T) {
	s, err := OpenURL(t.Context(), schemaURL(t))
	if err != nil {
		t.Fatal(err)
	}
	// Reads one after another reuse one idle reader connection, which
	// the listener then takes.
	for range 3 {
		if _, err := s.ListApprovals(t.Context(), "", "", t0, 10); err != nil {
			t.Fatal(err)
		}
	}
	heard := make(chan string, 1)
	if ok, err := s.Listen(TopicApprovals, func(id string) { heard <- id }); err != nil || !ok {
		t.Fatalf("Listen = %v, %v", ok, err)
	}
	// The twin: the listener still hears while the store is open.
	seedApproval(t, s, pending("ap_1"))
	write(t, s, func(tx *Tx) error {
		_, err := tx.DecideApproval(ApprovalDecision{ID: "ap_1", Status: "approved", Scope: "once", Now: t0, Approver: "alice", ExpiresAt: t0.Add(time.Hour)})
		return err
	})
	select {
	case <-heard:
	case <-time.After(10 * time.Second):
		t.Fatal("the listener heard no decision")
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return within 30 s while a listener was open")
	}
	if ok, err := s.Listen(TopicApprovals, func(string) {}); err == nil || ok {
		t.Errorf("Listen after Close = %v, %v; want an error", ok, err)
	}
}

// TestOwnersInSchemasOfTheirOwn (issue 27 point 2): the barrier between
// owners that PostgreSQL itself enforces. Each owner's homard connects as
// a role of its own to a schema that role owns (docs/CONFIG.md, "Several
// owners"); bob's role pointed at alice's schema cannot open it, nor read
// her approvals with plain SQL. The twin: each opens and uses their own,
// and neither sees the other's rows.
func TestOwnersInSchemasOfTheirOwn(t *testing.T) {
	roles, urlOf := ownerRoles(t, "alice", "bob")
	ctx := t.Context()
	aliceRole, bobRole := roles[0], roles[1]
	alice, err := OpenURL(ctx, urlOf(aliceRole))
	if err != nil {
		t.Fatalf("alice opening her own schema: %v", err)
	}
	defer alice.Close()
	seedApproval(t, alice, pending("ap_alice"))

	// bob's role, pointed at alice's schema: the database refuses.
	u, _ := neturl.Parse(urlOf(bobRole))
	q := u.Query()
	q.Set("search_path", aliceRole)
	u.RawQuery = q.Encode()
	if s, err := OpenURL(ctx, u.String()); err == nil {
		list, lerr := s.ListApprovals(ctx, "", "", t0, 10)
		s.Close()
		t.Fatalf("bob's role opened alice's schema and listed %d approvals (%v); want the database to refuse", len(list), lerr)
	} else if !strings.Contains(err.Error(), "permission denied") && !strings.Contains(err.Error(), "no schema has been selected") {
		t.Logf("refused with: %v", err)
	}
	raw, err := sql.Open("pgx", urlOf(bobRole))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	err = raw.QueryRowContext(ctx, `SELECT count(*) FROM `+aliceRole+`.approvals`).Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("bob's role reading alice's approvals with SQL = %d rows, %v; want permission denied", n, err)
	}

	bob, err := OpenURL(ctx, urlOf(bobRole))
	if err != nil {
		t.Fatalf("bob opening his own schema: %v", err)
	}
	defer bob.Close()
	if list, err := bob.ListApprovals(ctx, "", "", t0, 10); err != nil || len(list) != 0 {
		t.Errorf("bob's store lists %d approvals, %v; want none (alice's are in her schema)", len(list), err)
	}
	if list, err := alice.ListApprovals(ctx, "", "", t0, 10); err != nil || len(list) != 1 {
		t.Errorf("alice's store lists %d approvals, %v; want her one", len(list), err)
	}
}

// TestPlainDB: the plain pool (river's, on PostgreSQL) sends SQL as it
// is written — jsonb's ? operator and $1 reach the server untouched,
// where the store's pools would take ? for a parameter — in the store's
// own schema (a table made there is the store's), and Close closes it.
// Its twin: a SQLite store has none (TestPlainDBOnSQLite).
func TestPlainDB(t *testing.T) {
	if openOther == nil {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	s := openTest(t)
	ctx := t.Context()
	db, ok, err := s.PlainDB(ctx)
	if err != nil || !ok {
		t.Fatalf("PlainDB = %v, %v; want a pool", ok, err)
	}
	var has bool
	var echo string
	if err := db.QueryRowContext(ctx, `SELECT '{"a":1}'::jsonb ? 'a', $1::text`, "x").Scan(&has, &echo); err != nil || !has || echo != "x" {
		t.Errorf("jsonb ? and $1 on the plain pool = %v, %q, %v; want true, x", has, echo, err)
	}
	var schema, plainSchema string
	if err := s.readRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&plainSchema); err != nil || plainSchema != schema {
		t.Errorf("the plain pool's schema = %q, %v; want the store's, %q", plainSchema, err, schema)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE plain_probe (x int)`); err != nil {
		t.Fatalf("the plain pool cannot write: %v", err)
	}
	var n int
	if err := s.readRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'plain_probe'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the store sees %d plain_probe tables in its schema (%v); want 1", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.PingContext(ctx); err == nil {
		t.Error("the plain pool still answers after the store's Close")
	}
	if _, _, err := s.PlainDB(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("PlainDB after Close = %v; want ErrClosed", err)
	}
}
