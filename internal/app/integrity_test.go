package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/store/storetest"
)

func callOK(t *testing.T, r *Runtime, tool, args string) arbiter.Outcome {
	t.Helper()
	out, err := r.Call(context.Background(), CallRequest{Tool: tool, Args: args})
	if err != nil {
		t.Fatalf("Call(%s %s): %v", tool, args, err)
	}
	return out
}

func doctorLine(checks []Check, name string) (Check, bool) {
	for _, c := range checks {
		if c.Name == name && !c.Info {
			return c, true
		}
	}
	return Check{}, false
}

// TestDamagedAuditRefusesSideEffects: an audit record edited with SQL is
// found at the next start; from then on a write_file is refused with a
// message naming what to run while read_file still works; doctor fails and
// says how to go on; after `doctor --ack` writes work again, in the
// process that was already running too.
func TestDamagedAuditRefusesSideEffects(t *testing.T) {
	r := newModeRuntime(t, "yolo", nil, Options{})
	paths := r.Paths
	for _, p := range []string{"a.md", "b.md"} {
		if out := callOK(t, r, "write_file", `{"path":"`+p+`","content":"v1"}`); out.Decision != arbiter.Ran {
			t.Fatalf("write %s: %+v", p, out)
		}
	}
	r.Close()

	db := rawDB(t, r)
	drop := "DROP TRIGGER audit_no_update"
	if storetest.Postgres(storeWhere(r)) {
		drop += " ON audit"
	}
	for _, q := range []string{drop, "UPDATE audit SET reason = 'nothing to see' WHERE seq = 1"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	r2, err := Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatalf("Open after the damage: %v (a damaged audit must not stop reads)", err)
	}
	defer r2.Close()
	if r2.Start.Integrity.State.Problem == "" {
		t.Fatalf("start-up check = %+v; want the edit found", r2.Start.Integrity)
	}
	w := callOK(t, r2, "write_file", `{"path":"a.md","content":"v2"}`)
	if w.Decision != arbiter.Denied || w.Rule != "limit.integrity" || !strings.Contains(w.Reason, "homard doctor --ack") ||
		!strings.Contains(w.Reason, "record 1") {
		t.Fatalf("write with a broken audit chain: %+v; want denied (limit.integrity), naming the record and `homard doctor --ack`", w)
	}
	if rd := callOK(t, r2, "read_file", `{"path":"a.md"}`); rd.Decision != arbiter.Ran || !strings.Contains(rd.Result.Text, "v1") {
		t.Fatalf("read with a broken audit chain: %+v; want ran", rd)
	}

	checks := Doctor(context.Background(), paths, DoctorOptions{Offline: true})
	if c, ok := doctorLine(checks, "integrity"); !ok || c.OK || !strings.Contains(c.Detail, "homard doctor --ack") {
		t.Errorf("doctor integrity line = %+v; want a failure saying to run `homard doctor --ack`", c)
	}
	if c, _ := doctorLine(checks, "audit"); c.OK {
		t.Errorf("doctor audit line = %+v; want the break reported", c)
	}

	problem, err := Acknowledge(context.Background(), paths, "")
	if err != nil || !strings.Contains(problem, "record 1") {
		t.Fatalf("Acknowledge = %q, %v; want the audit problem", problem, err)
	}
	if _, err := Acknowledge(context.Background(), paths, ""); !errors.Is(err, ErrNothingToAck) {
		t.Errorf("second Acknowledge = %v; want ErrNothingToAck", err)
	}
	if w := callOK(t, r2, "write_file", `{"path":"a.md","content":"v2"}`); w.Decision != arbiter.Ran {
		t.Fatalf("write after the ack: %+v; want ran", w)
	}
	checks = Doctor(context.Background(), paths, DoctorOptions{Offline: true})
	for _, name := range []string{"integrity", "audit"} {
		if c, ok := doctorLine(checks, name); !ok || !c.OK {
			t.Errorf("doctor %s line after the ack = %+v; want ok", name, c)
		}
	}
}
