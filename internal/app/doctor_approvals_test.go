package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/policy"
)

// TestDoctorCountsLapsedAndOrphanedApprovals: doctor counts the cards
// homard lapsed and flags the pending cards of a task's run that has
// ended (no run can use them); the twin, a card waiting in an ordinary
// session, is only counted as waiting and the check stays OK.
func TestDoctorCountsLapsedAndOrphanedApprovals(t *testing.T) {
	r := newTestRuntime(t, "smart")
	ctx := context.Background()
	request := func(session, path string) Approval {
		t.Helper()
		plan := []byte(`{"path":"` + path + `"}`)
		sum := sha256.Sum256(plan)
		a, err := r.Approvals.Request(ctx, approval.Binding{Tool: "write_file", PlanHash: hex.EncodeToString(sum[:]), Owner: r.Config.Owner, Session: session},
			approval.Card{Display: "write " + path, Plan: plan, Targets: []string{path}, Risk: policy.RiskMedium})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	start := time.Now()
	waiting := request("s1", "a.md")
	lapsed := request("s1", "b.md")
	if n, err := r.Approvals.Lapse(ctx, []string{lapsed.ID}, start); err != nil || n != 1 {
		t.Fatalf("Lapse = %d, %v", n, err)
	}
	c := approvalsCheck(ctx, r)
	if !c.OK || !strings.Contains(c.Detail, "1 waiting") || !strings.Contains(c.Detail, "1 lapsed") || strings.Contains(c.Detail, "orphaned") {
		t.Fatalf("approvalsCheck = %+v; want OK, 1 waiting, 1 lapsed, none orphaned", c)
	}
	orphan := request(approval.TaskSessionPrefix+"task_0123456789abcdef", "c.md")
	c = approvalsCheck(ctx, r)
	if c.OK || !c.Info || !strings.Contains(c.Detail, "2 waiting") || !strings.Contains(c.Detail, "1 orphaned") ||
		!strings.Contains(c.Detail, orphan.ID) || strings.Contains(c.Detail, waiting.ID) {
		t.Fatalf("approvalsCheck = %+v; want the task run's card orphaned, the session's only waiting", c)
	}
}

// TestTaskOfSession: a task run's session and its split workers' name the
// task; other sessions name none.
func TestTaskOfSession(t *testing.T) {
	for session, want := range map[string]string{
		"task-task_0123456789abcdef":                         "task_0123456789abcdef",
		"task-task_0123456789abcdef-split-a1b2c3d4e5f6-rate": "task_0123456789abcdef",
		"cli": "", "mcp-client": "", "split-a1b2c3d4e5f6-rate": "",
	} {
		got, ok := taskOfSession(session)
		if ok != (want != "") || (ok && got != want) {
			t.Errorf("taskOfSession(%q) = %q, %v; want %q", session, got, ok, want)
		}
	}
}

// TestDoctorTOTP: with permissions.totp on and no authenticator, doctor
// fails the check and says how to set one up; off, it is OK.
func TestDoctorTOTP(t *testing.T) {
	r := newTestRuntime(t, "smart")
	if c := totpCheck(context.Background(), r); !c.OK || !strings.Contains(c.Detail, "off") {
		t.Errorf("off: %+v; want OK", c)
	}
	r.Config.Permissions.TOTP = "high"
	c := totpCheck(context.Background(), r)
	if c.OK || c.Info || !strings.Contains(c.Detail, "homard totp setup") {
		t.Errorf("high without an authenticator: %+v; want a failure naming homard totp setup", c)
	}
}
