//go:build postgres

package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/homard/homard/internal/store/pgstore"
)

// ownerRoles creates, for each name, a login role name_<random> and a
// schema of the same name that role owns, as an operator sets up owners
// who share a database (docs/CONFIG.md, "Several owners"); both are
// dropped when the test ends. It returns the roles in order, and urlOf,
// the URL that connects as a role with its own schema as search_path.
func ownerRoles(t *testing.T, names ...string) (roles []string, urlOf func(role string) string) {
	t.Helper()
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		t.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	b := make([]byte, 4)
	rand.Read(b)
	suffix := hex.EncodeToString(b)
	urlOf = func(role string) string {
		u, err := neturl.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.User = neturl.User(role)
		q := u.Query()
		q.Set("search_path", role)
		u.RawQuery = q.Encode()
		return u.String()
	}
	for _, n := range names {
		who := n + "_" + suffix
		for _, q := range []string{`CREATE ROLE ` + who + ` LOGIN`, `CREATE SCHEMA ` + who + ` AUTHORIZATION ` + who} {
			if _, err := admin.ExecContext(t.Context(), q); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			admin.ExecContext(context.Background(), `DROP SCHEMA `+who+` CASCADE`)
			admin.ExecContext(context.Background(), `DROP ROLE `+who)
		})
		roles = append(roles, who)
	}
	return roles, urlOf
}

// within runs fn and fails the test if it has not returned after d: a
// lock that a regression lets another role hold makes the test fail,
// not hang. It asserts nothing about how long fn takes.
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s still waiting after %v: another role holds a lock of alice's store", what, d)
	}
}

// TestCoOwnerCannotTakeLocks (issue 27): bob's role, with no privilege on
// alice's schema but connected to the same database, takes every lock of
// alice's store it can — the advisory keys homard used to lock with,
// computed from her schema's name as that code did, and the strongest
// lock a role can hold on her tables without privileges (ACCESS SHARE,
// through pg_relation_size of their oids, read from pg_class) — and tries
// the stronger ones, which PostgreSQL refuses. Alice's writes still
// complete, her session's turn lock and her run lock are still granted,
// and her probe still sees her own run lock held. With advisory locks
// her write waited for bob's session (until its deadline), and her turn
// and run locks were refused as held by another process.
func TestCoOwnerCannotTakeLocks(t *testing.T) {
	roles, urlOf := ownerRoles(t, "alice", "bob")
	aliceSchema := roles[0]
	ctx := t.Context()
	alice, err := OpenURL(ctx, urlOf(roles[0]))
	if err != nil {
		t.Fatalf("alice opening her own schema: %v", err)
	}
	defer alice.Close()

	bob, err := sql.Open("pgx", urlOf(roles[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	// One session holds the session-level keys, another an open
	// transaction with the table locks.
	keys, err := bob.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	sum := sha256.Sum256([]byte("session:s1"))
	nameKey := int32(binary.BigEndian.Uint32(sum[:]))
	for _, k := range []struct {
		what, query string
		args        []any
	}{
		{"the write lock", `SELECT pg_try_advisory_lock(hashtext('homard.write.' || $1::text), 1)`, []any{aliceSchema}},
		{"the name lock of session:s1", `SELECT pg_try_advisory_lock(hashtext('homard.name.' || $1::text), $2::int4)`, []any{aliceSchema, nameKey}},
		{"run lock 7", `SELECT pg_try_advisory_lock(hashtextextended('homard.run.' || $1::text, 0) # 7)`, []any{aliceSchema}},
	} {
		var got bool
		if err := keys.QueryRowContext(ctx, k.query, k.args...).Scan(&got); err != nil || !got {
			t.Fatalf("bob taking the advisory key of %s = %v, %v", k.what, got, err)
		}
	}
	tables, err := bob.QueryContext(ctx, `SELECT c.oid, c.relname FROM pg_class c
		WHERE c.relnamespace = $1::regnamespace AND c.relkind = 'r' ORDER BY c.relname`, aliceSchema)
	if err != nil {
		t.Fatal(err)
	}
	type table struct {
		oid  uint32
		name string
	}
	var ts []table
	for tables.Next() {
		var tb table
		if err := tables.Scan(&tb.oid, &tb.name); err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tb)
	}
	tables.Close()
	if len(ts) < 30 {
		t.Fatalf("bob sees %d tables of alice's schema in pg_class; want all of them", len(ts))
	}
	hold, err := bob.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	for _, tb := range ts {
		if _, err := hold.ExecContext(ctx, `SELECT pg_relation_size($1::oid)`, tb.oid); err != nil {
			t.Fatalf("bob's ACCESS SHARE of %s: %v", tb.name, err)
		}
		for _, mode := range []string{"ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"} {
			try, err := bob.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = try.ExecContext(ctx, `LOCK TABLE `+aliceSchema+`.`+tb.name+` IN `+mode+` MODE NOWAIT`)
			try.Rollback()
			if err == nil || !strings.Contains(err.Error(), "permission denied") {
				t.Errorf("bob's LOCK TABLE %s IN %s MODE = %v; want permission denied", tb.name, mode, err)
			}
		}
	}

	within(t, 20*time.Second, "alice's write", func() {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := alice.Write(wctx, func(tx *Tx) error { return tx.EnsureSession("s1", "alice", t0) }); err != nil {
			t.Errorf("alice's write while bob holds what he can: %v", err)
		}
	})
	within(t, 20*time.Second, "alice's turn lock", func() {
		unlock, ok, err := alice.TryLock("session:s1")
		if err != nil || !ok {
			t.Errorf("alice's TryLock(session:s1) while bob holds what he can = %v, %v; want granted", ok, err)
			return
		}
		unlock()
	})
	within(t, 20*time.Second, "alice's run lock", func() {
		if err := alice.runs.hold(7); err != nil {
			t.Errorf("alice's run lock 7 while bob holds what he can: %v", err)
			return
		}
		free, done, err := alice.runs.probe()
		if err != nil {
			t.Errorf("alice's probe: %v", err)
			return
		}
		defer done()
		if ok, err := free(7); err != nil || ok {
			t.Errorf("alice's probe of her own run lock 7 = free %v, %v; want held", ok, err)
		}
		alice.releaseRun(7)
	})
}

// TestWritesSerialisedAcrossReplicas: the write lock, now a table's, still
// queues the writers of two replicas one after another: read-then-write
// increments of one counter from both at once lose none. (Without it, two
// READ COMMITTED transactions read the same value and one increment is
// lost.)
func TestWritesSerialisedAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	write(t, a, func(tx *Tx) error {
		return tx.script(`CREATE TABLE counter (n BIGINT NOT NULL); INSERT INTO counter VALUES (0)`)
	})
	const each = 50
	var wg sync.WaitGroup
	for _, s := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				err := s.Write(context.Background(), func(tx *Tx) error {
					var n int64
					if err := tx.queryRow(`SELECT n FROM counter`).Scan(&n); err != nil {
						return err
					}
					_, err := tx.exec(`UPDATE counter SET n = ?`, n+1)
					return err
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var n int64
	if err := b.readRow(t.Context(), `SELECT n FROM counter`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4*each {
		t.Errorf("counter = %d after %d increments from two replicas; want no increment lost", n, 4*each)
	}
}

// TestRunLocksAcrossReplicas: a run lock held by one replica is refused to
// the other, and both probes see it held (the holder's own included);
// released, it is free. Taken again and its holder's session ended
// (pg_terminate_backend, as when its process dies), it is free to the
// other replica, which takes it.
func TestRunLocksAcrossReplicas(t *testing.T) {
	a, b := twoReplicas(t)
	probe := func(s *Store) bool {
		t.Helper()
		free, done, err := s.runs.probe()
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		ok, err := free(7)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !probe(a) || !probe(b) {
		t.Fatal("run lock 7 is held before anyone took it")
	}
	if err := a.runs.hold(7); err != nil {
		t.Fatal(err)
	}
	if err := a.runs.hold(7); err != nil {
		t.Errorf("a holding its own run lock again: %v; want a no-op", err)
	}
	if err := b.runs.hold(7); err == nil {
		t.Error("b took run lock 7 that a holds")
	}
	if probe(a) || probe(b) {
		t.Errorf("probes see a's run lock free (a's %v, b's %v); want held", probe(a), probe(b))
	}
	if err := b.runs.hold(8); err != nil {
		t.Errorf("b taking another run lock: %v", err)
	}
	b.releaseRun(8)
	a.releaseRun(7)
	if !probe(a) || !probe(b) {
		t.Error("run lock 7 still held after a released it")
	}
	if err := a.runs.hold(7); err != nil {
		t.Fatal(err)
	}
	var pid int
	if err := b.readRow(t.Context(), `SELECT pid FROM held_locks WHERE name = 'run:7'`).Scan(&pid); err != nil {
		t.Fatalf("find a's lock holder: %v", err)
	}
	if _, err := b.reader.ExecContext(t.Context(), `SELECT pg_terminate_backend(?, 10000)`, pid); err != nil {
		t.Fatal(err)
	}
	if !probe(b) {
		t.Error("run lock 7 still held after its holder's session ended")
	}
	if err := b.runs.hold(7); err != nil {
		t.Errorf("b taking run lock 7 after a's session ended: %v", err)
	}
	if probe(a) {
		t.Error("a's probe sees b's run lock 7 free")
	}
	// a's lost session is replaced at its next taking.
	if err := a.runs.hold(9); err != nil {
		t.Errorf("a taking a run lock after its session ended: %v; want a new session to take it", err)
	}
}

// TestTryNameTakenAgain: the same store may take a name again, and holds
// it until it released every taking; another replica is refused until
// then.
func TestTryNameTakenAgain(t *testing.T) {
	a, b := twoReplicas(t)
	var unlocks []func()
	for range 2 {
		u, ok, err := a.TryLock("session:s1")
		if err != nil || !ok {
			t.Fatalf("a.TryLock = %v, %v; want granted, again", ok, err)
		}
		unlocks = append(unlocks, u)
	}
	unlocks[0]()
	if _, ok, err := b.TryLock("session:s1"); err != nil || ok {
		t.Fatalf("b.TryLock after one of a's two releases = %v, %v; want refused", ok, err)
	}
	unlocks[1]()
	u, ok, err := b.TryLock("session:s1")
	if err != nil || !ok {
		t.Fatalf("b.TryLock after a's last release = %v, %v; want granted", ok, err)
	}
	u()
}

// TestFreshSchemaOpenedAtOnce: several processes opening one new schema at
// the same moment (replicas started together) all open it, and each
// migration is applied once. Each round is a new schema.
func TestFreshSchemaOpenedAtOnce(t *testing.T) {
	for round := range 4 {
		url := schemaURL(t)
		const openers = 4
		stores := make([]*Store, openers)
		errs := make([]error, openers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range openers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				stores[i], errs[i] = OpenURL(t.Context(), url)
			}()
		}
		close(start)
		wg.Wait()
		for i, s := range stores {
			if errs[i] != nil {
				t.Errorf("round %d: opener %d: %v", round, i, errs[i])
				continue
			}
			defer s.Close()
		}
		if errs[0] != nil {
			continue
		}
		var rows, versions, last int
		if err := stores[0].readRow(t.Context(), `SELECT count(*), count(DISTINCT version), max(version) FROM schema_migrations`).Scan(&rows, &versions, &last); err != nil {
			t.Fatal(err)
		}
		if rows != versions || last != 32+versions {
			t.Errorf("round %d: schema_migrations holds %d rows of %d versions up to %d; want each of 33..%d once", round, rows, versions, last, last)
		}
	}
}

// BenchmarkTryLockShared is a session's turn lock on PostgreSQL, as every
// turn takes and releases it: TryLock and its unlock.
func BenchmarkTryLockShared(b *testing.B) {
	base := os.Getenv("HOMARD_TEST_POSTGRES")
	if base == "" {
		b.Skip("HOMARD_TEST_POSTGRES is not set: run scripts/pg-test")
	}
	url, drop, err := pgstore.NewSchema(b.Context(), base)
	if err != nil {
		b.Fatal(err)
	}
	defer drop()
	s, err := OpenURL(b.Context(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		unlock, ok, err := s.TryLock("session:s1")
		if err != nil || !ok {
			b.Fatalf("TryLock = %v, %v", ok, err)
		}
		unlock()
	}
}
