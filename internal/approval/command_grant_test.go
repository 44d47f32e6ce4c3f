package approval

import (
	"errors"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
)

// commandTemplate is what run_command puts on a Plan for argv in the
// workspace root.
func commandTemplate(program string, args ...string) (policy.Template, policy.Risk) {
	v := policy.ClassifyCommand(policy.Command{Program: program, Path: "/usr/bin/" + program, RealPath: "/usr/bin/" + program, Args: args}, nil)
	t := v.Template
	t.Dir, t.TimeoutS, t.SHA256 = ".", 60, "00ff"
	return t, v.Risk
}

// requestCommand makes a pending run_command approval carrying its template.
func (e *env) requestCommand(t *testing.T, program string, args ...string) Approval {
	t.Helper()
	tm, risk := commandTemplate(program, args...)
	plan, hash := planFor(`{"argv":"` + program + " " + strings.Join(args, " ") + `"}`)
	b := Binding{Tool: "run_command", PlanHash: hash, Owner: "alice", Session: "s1"}
	a, err := e.svc.Request(t.Context(), b, Card{Display: program, Plan: plan, Targets: []string{"."}, Risk: risk,
		Rule: "mode.safe", Reason: "safe mode asks", Template: &tm})
	if err != nil {
		t.Fatalf("Request: %v", err)
	}
	return a
}

// insideWorkspace stands for run_command's resolver: here every clean
// relative path is inside (there are no symlinks).
func insideWorkspace(dir, slot, op string, _ bool) bool { return policy.InSlot(slot, op) }

// TestCommandGrantIsATemplate: approving "mkdir build" for the session
// lets another mkdir run (the twin), and nothing else.
func TestCommandGrantIsATemplate(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	a := e.requestCommand(t, "mkdir", "build")
	if a.Template == nil || a.Template.String() != "mkdir ‹new name in ./›" {
		t.Fatalf("the card's template = %v; want mkdir ‹new name in ./›", a.Template)
	}
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeSession); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv []string
		want bool
	}{
		{[]string{"mkdir", "build"}, true},
		{[]string{"mkdir", "src"}, true},      // a second mkdir under the session grant
		{[]string{"mkdir", "build/x"}, false}, // a destination stays in the folder the owner saw
		{[]string{"cp", "/etc/passwd", "important.txt"}, false},
		{[]string{"mkdir", "-p", "x", "--mode=4777"}, false},
		{[]string{"gcc", "-wrapper", "/bin/sh,-c,id", "x.c"}, false},
		{[]string{"mkdir", "../x"}, false},
		{[]string{"mkdir", "-x"}, false},
		{[]string{"mkdir", "/etc/x"}, false},
	} {
		call, risk := commandTemplate(tc.argv[0], tc.argv[1:]...)
		_, ok, err := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", call, risk, insideWorkspace)
		if err != nil || ok != tc.want {
			t.Errorf("after approving mkdir build (session), %q covered = %v, %v; want %v", tc.argv, ok, err, tc.want)
		}
	}
	// Another session, and a resolver that finds the path outside (a
	// symlink), are not covered.
	call, risk := commandTemplate("mkdir", "src")
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s2", "run_command", call, risk, insideWorkspace); ok {
		t.Error("a session grant covered another session")
	}
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", call, risk, func(string, string, string, bool) bool { return false }); ok {
		t.Error("a slot covered a path the resolver found outside")
	}
	// The path-pattern matcher never uses a command grant.
	if _, ok, _ := e.svc.MatchGrant(ctx, "alice", "s1", "run_command", []string{"."}, policy.RiskMedium); ok {
		t.Error("MatchGrant covered a plan by a command grant's patterns")
	}
	grants, err := e.svc.Grants(ctx, "alice")
	if err != nil || len(grants) != 1 || grants[0].Template == nil || grants[0].Template.Entry != "mkdir" {
		t.Fatalf("Grants = %+v, %v; want one mkdir template grant", grants, err)
	}
}

// TestRunsCodeIsApprovedOnce: a command that runs code gets no standing
// grant; once still works.
func TestRunsCodeIsApprovedOnce(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for _, scope := range []Scope{ScopeSession, ScopeAlways} {
		a := e.requestCommand(t, "go", "test", "./...", string(scope))
		_, err := e.svc.Approve(ctx, a.ID, "alice", scope)
		if !errors.Is(err, ErrScopeNotAllowed) || !strings.Contains(err.Error(), "runs code") {
			t.Errorf("approve go test with scope %s: %v; want ErrScopeNotAllowed saying it runs code", scope, err)
		}
	}
	a := e.requestCommand(t, "go", "test", "./...")
	if _, err := e.svc.Approve(ctx, a.ID, "alice", ScopeOnce); err != nil {
		t.Errorf("approve go test once: %v", err)
	}
	if g, _ := e.svc.Grants(ctx, "alice"); len(g) != 0 {
		t.Errorf("grants after approving code: %+v; want none", g)
	}
	call, risk := commandTemplate("go", "test", "./...")
	if _, ok, _ := e.svc.MatchCommandGrant(ctx, "alice", "s1", "run_command", call, risk, insideWorkspace); ok {
		t.Error("code was covered by a grant")
	}
}

// TestOnceOnlyIsWhatApproveTakes: Approval.OnceOnly, which every card
// shows, is exactly the rule Approve enforces: a once-only approval
// refuses session and always and takes once; any other takes session (the
// twin).
func TestOnceOnlyIsWhatApproveTakes(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(e *env) Approval
		want bool
	}{
		{"medium write", func(e *env) Approval { a, _ := e.request(t, "alice", "s1", "a.md", policy.RiskMedium); return a }, false},
		{"high write", func(e *env) Approval { a, _ := e.request(t, "alice", "s1", "a.md", policy.RiskHigh); return a }, false},
		{"critical write", func(e *env) Approval { a, _ := e.request(t, "alice", "s1", "a.md", policy.RiskCritical); return a }, true},
		{"task run", func(e *env) Approval {
			a, _ := e.request(t, "alice", TaskSessionPrefix+"task_0123456789abcdef", "a.md", policy.RiskMedium)
			return a
		}, true},
		{"paired client", func(e *env) Approval {
			a, _ := e.request(t, "alice", PairedSessionPrefix+"x", "a.md", policy.RiskLow)
			return a
		}, true},
		{"mkdir", func(e *env) Approval { return e.requestCommand(t, "mkdir", "build") }, false},
		{"go test runs code", func(e *env) Approval { return e.requestCommand(t, "go", "test", "./...") }, true},
		{"find -exec runs code", func(e *env) Approval { return e.requestCommand(t, "find", ".", "-exec", "true", ";") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, scope := range []Scope{ScopeSession, ScopeAlways, ScopeOnce} {
				e := newEnv(t)
				a := tc.make(e)
				if got := a.OnceOnly(); got != tc.want {
					t.Fatalf("OnceOnly() = %v; want %v", got, tc.want)
				}
				_, err := e.svc.Approve(t.Context(), a.ID, "alice", scope)
				refused := errors.Is(err, ErrScopeNotAllowed)
				if want := tc.want && scope != ScopeOnce; refused != want || (err != nil && !refused) {
					t.Errorf("Approve(%s) = %v; want refused %v (OnceOnly %v)", scope, err, want, tc.want)
				}
			}
		})
	}
}
