package store

import (
	"path/filepath"
	"testing"
)

// TestTaskOriginAcrossMigration31 builds a database as homard left it
// before migration 0031 (no origin column) with a pending and an approved
// task, opens it, and checks that both read origin cli (the only way to
// add a task then) with their body, seal and status unchanged.
func TestTaskOriginAcrossMigration31(t *testing.T) {
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
	if len(ms) < 31 || ms[30].name != "0031_task_origin.sql" {
		t.Fatalf("migration 31 is not 0031_task_origin.sql")
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,
		name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[:30] {
		if _, err := db.ExecContext(ctx, m.sql); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO schema_migrations VALUES (?, ?, 1)`, m.version, m.name); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO tasks (id, owner, name, body, status, created_at) VALUES ('old-pending', 'owner', 'digest', '{"v":1}', 'pending', 1)`,
		`INSERT INTO tasks (id, owner, name, body, mac, status, approved_at, expires_at, next_run_at, created_at)
			VALUES ('old-active', 'owner', 'weekly', '{"v":2}', 'abcd', 'active', 2, 3, 4, 2)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open (migration 0031): %v", err)
	}
	defer s.Close()
	for _, c := range []struct{ id, body, mac, status string }{
		{"old-pending", `{"v":1}`, "", TaskPending},
		{"old-active", `{"v":2}`, "abcd", TaskActive},
	} {
		got, err := s.Task(ctx, c.id)
		if err != nil {
			t.Fatalf("Task(%s) after 0031: %v", c.id, err)
		}
		if got.Origin != TaskFromCLI || string(got.Body) != c.body || got.MAC != c.mac || got.Status != c.status {
			t.Errorf("Task(%s) after 0031 = origin %q, body %s, mac %q, %s; want origin cli, the rest unchanged (%s, %q, %s)",
				c.id, got.Origin, got.Body, got.MAC, got.Status, c.body, c.mac, c.status)
		}
	}
}

// TestTaskOrigin: a task keeps the origin it was inserted with; an empty
// one is cli; a value that is none of the three is refused, by
// InsertTask and, for a row written around it, by the schema's CHECK.
func TestTaskOrigin(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	for _, c := range []struct{ id, origin, want string }{
		{"t-default", "", TaskFromCLI},
		{"t-cli", TaskFromCLI, TaskFromCLI},
		{"t-web", TaskFromWeb, TaskFromWeb},
		{"t-chat", TaskFromChat, TaskFromChat},
	} {
		write(t, s, func(tx *Tx) error {
			return tx.InsertTask(Task{ID: c.id, Owner: "owner", Name: c.id, Body: []byte(`{}`), CreatedAt: t0, Origin: c.origin})
		})
		if got, err := s.Task(ctx, c.id); err != nil || got.Origin != c.want {
			t.Errorf("InsertTask(origin %q) then Task = %q, %v; want %q", c.origin, got.Origin, err, c.want)
		}
	}
	ts, err := s.Tasks(ctx, "owner")
	if err != nil || len(ts) != 4 {
		t.Fatalf("Tasks = %+v, %v; want the four", ts, err)
	}
	for _, x := range ts { // ordered by id: they were created at the same instant
		if want := map[string]string{"t-chat": "chat", "t-cli": "cli", "t-default": "cli", "t-web": "web"}[x.ID]; x.Origin != want {
			t.Errorf("Tasks: %s has origin %q; want %q", x.ID, x.Origin, want)
		}
	}
	err = s.Write(ctx, func(tx *Tx) error {
		return tx.InsertTask(Task{ID: "t-mcp", Owner: "owner", Name: "x", Body: []byte(`{}`), CreatedAt: t0, Origin: "mcp"})
	})
	if err == nil {
		t.Error("InsertTask(origin mcp) = nil; want refused")
	}
	if _, err := s.execWriter(ctx, `UPDATE tasks SET origin = 'model' WHERE id = 't-web'`); err == nil {
		t.Error("UPDATE tasks SET origin = 'model' passed the schema; want the CHECK to refuse it")
	}
}
